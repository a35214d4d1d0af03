// Key names. Canonical key names are Playwright's ("Control+a", "Enter", "ArrowDown"); formats spell them their way:
// any common spelling in, a format's own spelling out.
import { fail } from './failure.ts';

const KEY_ALIASES: Record<string, string> = {
  ctrl: 'Control', control: 'Control', ctl: 'Control', control_l: 'Control', control_r: 'Control',
  alt: 'Alt', option: 'Alt', opt: 'Alt', alt_l: 'Alt', alt_r: 'Alt',
  shift: 'Shift', shift_l: 'Shift', shift_r: 'Shift',
  meta: 'Meta', cmd: 'Meta', command: 'Meta', super: 'Meta', win: 'Meta', windows: 'Meta', super_l: 'Meta', meta_l: 'Meta',
  enter: 'Enter', return: 'Enter', kp_enter: 'Enter',
  esc: 'Escape', escape: 'Escape',
  tab: 'Tab',
  backspace: 'Backspace', back_space: 'Backspace',
  delete: 'Delete', del: 'Delete',
  insert: 'Insert', ins: 'Insert',
  space: 'Space', spacebar: 'Space',
  up: 'ArrowUp', arrowup: 'ArrowUp', arrow_up: 'ArrowUp',
  down: 'ArrowDown', arrowdown: 'ArrowDown', arrow_down: 'ArrowDown',
  left: 'ArrowLeft', arrowleft: 'ArrowLeft', arrow_left: 'ArrowLeft',
  right: 'ArrowRight', arrowright: 'ArrowRight', arrow_right: 'ArrowRight',
  home: 'Home', end: 'End',
  pageup: 'PageUp', page_up: 'PageUp', pgup: 'PageUp', prior: 'PageUp',
  pagedown: 'PageDown', page_down: 'PageDown', pgdn: 'PageDown', next: 'PageDown',
  capslock: 'CapsLock', caps_lock: 'CapsLock',
};

/** One key name in any common spelling → Playwright name. Single characters are kept as they are. */
export function canonicalKey(name: string): string {
  if (name.length === 1) return name;
  const lower = name.toLowerCase();
  if (KEY_ALIASES[lower]) return KEY_ALIASES[lower];
  if (/^f([1-9]|1[0-9]|2[0-4])$/.test(lower)) return lower.toUpperCase();
  // xdotool's keypad digits (Anthropic's computer tool documents "KP_0" for the numpad 0 key); Playwright: Numpad0.
  if (/^kp_[0-9]$/.test(lower)) return `Numpad${lower.slice(3)}`;
  return name;
}

export function canonicalCombo(parts: string[]): string {
  const keys = parts.map((p) => p.trim()).filter((p) => p !== '');
  if (!keys.length) fail('Empty key combination.');
  return keys.map(canonicalKey).join('+');
}

/** Splits a canonical combo ("Control+a", "Control++") into key names. */
export function splitCombo(combo: string): string[] {
  if (combo === '+') return ['+'];
  const parts = combo.split('+');
  const out: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] === '' && i === parts.length - 1 && out.length) out.push('+');
    else if (parts[i] !== '') out.push(parts[i]);
  }
  return out;
}

export type KeyStyle = 'lower' | 'xdotool' | 'openai';

const STYLE_NAMES: Record<KeyStyle, Record<string, string>> = {
  lower: {
    Control: 'ctrl', Alt: 'alt', Shift: 'shift', Meta: 'meta', Enter: 'enter', Escape: 'esc', Tab: 'tab',
    Backspace: 'backspace', Delete: 'delete', Insert: 'insert', Space: 'space', ArrowUp: 'up', ArrowDown: 'down',
    ArrowLeft: 'left', ArrowRight: 'right', Home: 'home', End: 'end', PageUp: 'pageup', PageDown: 'pagedown',
    CapsLock: 'capslock',
  },
  xdotool: {
    Control: 'ctrl', Alt: 'alt', Shift: 'shift', Meta: 'super', Enter: 'Return', Escape: 'Escape', Tab: 'Tab',
    Backspace: 'BackSpace', Delete: 'Delete', Insert: 'Insert', Space: 'space', ArrowUp: 'Up', ArrowDown: 'Down',
    ArrowLeft: 'Left', ArrowRight: 'Right', Home: 'Home', End: 'End', PageUp: 'Page_Up', PageDown: 'Page_Down',
    CapsLock: 'Caps_Lock',
  },
  openai: {
    Control: 'CTRL', Alt: 'ALT', Shift: 'SHIFT', Meta: 'CMD', Enter: 'ENTER', Escape: 'ESC', Tab: 'TAB',
    Backspace: 'BACKSPACE', Delete: 'DELETE', Insert: 'INSERT', Space: 'SPACE', ArrowUp: 'ARROWUP',
    ArrowDown: 'ARROWDOWN', ArrowLeft: 'ARROWLEFT', ArrowRight: 'ARROWRIGHT', Home: 'HOME', End: 'END',
    PageUp: 'PAGEUP', PageDown: 'PAGEDOWN', CapsLock: 'CAPSLOCK',
  },
};

/** Canonical key name → the spelling of a format. */
export function styledKey(key: string, style: KeyStyle): string {
  const k = canonicalKey(key);
  const mapped = STYLE_NAMES[style][k];
  if (mapped) return mapped;
  if (/^F\d+$/.test(k)) return style === 'lower' ? k.toLowerCase() : k;
  if (style === 'xdotool' && /^Numpad[0-9]$/.test(k)) return `KP_${k.slice(6)}`;
  return k;
}

/** The key combos of a canonical key action. */
export function combosOf(keys: string | string[]): string[] {
  return Array.isArray(keys) ? keys : [keys];
}
