// Orchard-GUI key names, as web_env.py's validate_and_correct_key resolves them (MSR-Orchard/slime
// examples/orchard_gui/env/web_env.py): names to Playwright's, pyautogui spellings mapped, unknown ones dropped.
import { canonicalKey } from './keys.ts';

const PLAYWRIGHT_KEYS = new Set([
  'Alt', 'Control', 'Meta', 'Shift', 'Enter', 'Tab', 'Space', 'Backspace', 'Delete', 'Escape', 'Insert',
  'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown',
  ...Array.from({ length: 24 }, (_, i) => `F${i + 1}`),
  ...Array.from({ length: 10 }, (_, i) => `Numpad${i}`),
  'NumpadAdd', 'NumpadSubtract', 'NumpadMultiply', 'NumpadDivide', 'NumpadDecimal', 'NumpadEnter',
  'PrintScreen', 'ScrollLock', 'Pause', 'CapsLock', 'NumLock', 'AltLeft', 'AltRight', 'ControlLeft', 'ControlRight',
  'ShiftLeft', 'ShiftRight', 'MetaLeft', 'MetaRight', 'Backquote', 'Minus', 'Equal', 'Backslash', 'BracketLeft',
  'BracketRight', 'Semicolon', 'Quote', 'Comma', 'Period', 'Slash',
]);
/** pyautogui spellings web_env.py also maps (beyond common.ts' aliases). */
const EXTRA_KEYS: Record<string, string> = {
  win: 'Meta', winleft: 'MetaLeft', winright: 'MetaRight', ctrlleft: 'ControlLeft', ctrlright: 'ControlRight',
  altleft: 'AltLeft', altright: 'AltRight', shiftleft: 'ShiftLeft', shiftright: 'ShiftRight', optionleft: 'AltLeft',
  optionright: 'AltRight', pgup: 'PageUp', pgdn: 'PageDown', prtsc: 'PrintScreen', prtscr: 'PrintScreen',
  prntscrn: 'PrintScreen', printscreen: 'PrintScreen', scrolllock: 'ScrollLock', numlock: 'NumLock', pause: 'Pause',
};

export function orchardKey(k: string): string | undefined {
  if (k.length === 1) return k;
  const lower = k.toLowerCase();
  if (EXTRA_KEYS[lower]) return EXTRA_KEYS[lower];
  const numpad = /^num([0-9])$/.exec(lower);
  if (numpad) return `Numpad${numpad[1]}`;
  const c = canonicalKey(k);
  if (PLAYWRIGHT_KEYS.has(c)) return c;
  for (const name of PLAYWRIGHT_KEYS) if (name.toLowerCase() === lower) return name;
  return undefined;
}
