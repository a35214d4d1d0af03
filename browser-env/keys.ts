// Key-name normalisation: model outputs use many spellings (xdotool, pyautogui, macOS); Playwright wants
// its own names ("Control", "PageDown", "ArrowUp"...). Pure: unit-tested.

const ALIASES: Record<string, string> = {
  ctrl: 'Control', control: 'Control', ctl: 'Control',
  cmd: 'Meta', command: 'Meta', meta: 'Meta', win: 'Meta', windows: 'Meta', super: 'Meta', os: 'Meta',
  alt: 'Alt', option: 'Alt', opt: 'Alt',
  shift: 'Shift',
  esc: 'Escape', escape: 'Escape',
  enter: 'Enter', return: 'Enter', ret: 'Enter', kpenter: 'Enter',
  tab: 'Tab',
  space: 'Space', spacebar: 'Space', ' ': 'Space',
  backspace: 'Backspace', bksp: 'Backspace', bs: 'Backspace',
  del: 'Delete', delete: 'Delete',
  ins: 'Insert', insert: 'Insert',
  home: 'Home', end: 'End',
  pgup: 'PageUp', pageup: 'PageUp', prior: 'PageUp',
  pgdn: 'PageDown', pgdown: 'PageDown', pagedown: 'PageDown', next: 'PageDown',
  up: 'ArrowUp', arrowup: 'ArrowUp', uparrow: 'ArrowUp',
  down: 'ArrowDown', arrowdown: 'ArrowDown', downarrow: 'ArrowDown',
  left: 'ArrowLeft', arrowleft: 'ArrowLeft', leftarrow: 'ArrowLeft',
  right: 'ArrowRight', arrowright: 'ArrowRight', rightarrow: 'ArrowRight',
  capslock: 'CapsLock', numlock: 'NumLock', scrolllock: 'ScrollLock',
  printscreen: 'PrintScreen', print: 'PrintScreen', pause: 'Pause',
  contextmenu: 'ContextMenu', menu: 'ContextMenu', apps: 'ContextMenu',
  plus: '+', minus: '-', equal: '=', comma: ',', period: '.', slash: '/', backslash: '\\',
  semicolon: ';', quote: "'", apostrophe: "'", grave: '`', backquote: '`',
  bracketleft: '[', bracketright: ']',
};

/** One key name (no '+'). Unknown multi-letter names pass through unchanged for Playwright to judge. */
function normalizeKey(name: string): string {
  if (name === ' ') return 'Space';
  const t = name.trim();
  if (t.length === 1) return t;
  const k = t.toLowerCase().replace(/[_\-\s]/g, '');
  const alias = ALIASES[k];
  if (alias) return alias;
  const f = /^f([1-9]|1[0-9]|2[0-4])$/.exec(k);
  if (f) return `F${f[1]}`;
  const digit = /^(?:digit|num|numpad|kp)([0-9])$/.exec(k);
  if (digit) return digit[1];
  const letter = /^key([a-z])$/.exec(k);
  if (letter) return letter[1];
  return t;
}

/** A combo like "ctrl+shift+t" → "Control+Shift+t". A lone "+" (or trailing "++") is the plus key. */
export function normalizeCombo(combo: string): string {
  const trimmed = combo.trim();
  if (trimmed === '+') return '+';
  const parts: string[] = [];
  // Split on '+', treating an empty segment produced by "++" as the plus key itself.
  const raw = trimmed.split('+');
  for (let i = 0; i < raw.length; i++) {
    const seg = raw[i];
    if (seg.trim() === '') {
      if (i === raw.length - 1 || raw[i + 1]?.trim() === '') {
        parts.push('+');
        i++;
      }
      continue;
    }
    parts.push(normalizeKey(seg));
  }
  return parts.join('+');
}

/** `keys` of a key action → the combos to press in order. */
export function normalizeKeys(keys: string | string[]): string[] {
  const list = Array.isArray(keys) ? keys : [keys];
  return list.map(normalizeCombo).filter((c) => c.length > 0);
}
