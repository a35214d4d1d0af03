// Typing into the focused element: text in (per key, or one insert for long texts and for the rest of a text the
// deadline would not see typed key by key), the check that the focus takes
// text, and the field's value afterwards (what the page made of the typed text).
import type { Page } from 'playwright-core';
import type { Progress } from '../sandbox/progress.ts';
import { inPage } from './util.ts';

/** Long texts go in as one insertText (per-key typing of 20k chars would outlast any timeout). */
const PER_KEY_LIMIT = 300;

/** Keys typed before the pace is judged (the first key also pays for the focus). */
const PACE_KEYS = 2;
/** Share of the time left that the remaining keys may take at the pace so far; the rest is for submit and reading back. */
const PACE_SHARE = 0.6;

/**
 * Types `text`; returns how many of its characters went in as one insertText instead of key by key (0: all typed).
 * With a deadline, key by key, stopping (TimeoutError) once it has passed: a step that gave up on a slow type must
 * not leave it typing on in the background (on a loaded machine it went on after the step's answer and
 * interleaved its keys with the next type's). When the pace so far says the remaining keys would not fit in the
 * time left (at load ~80 a key took 400 ms and more: a 55-character description failed four times in a row, each
 * try as slow as the last), the rest goes in as one insertText: `input` events, no key events, and the text whole.
 */
export async function typeText(page: Page, text: string, clear?: boolean, submit?: boolean, deadline?: Progress): Promise<number> {
  // Between keys: a step that gave up (its time is up, or it was aborted) stops typing here.
  const check = () => deadline?.throwIfAborted();
  if (clear) {
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.press('Delete');
  }
  let inserted = 0;
  if (text.length > PER_KEY_LIMIT) {
    await page.keyboard.insertText(text);
    inserted = text.length;
  } else if (!deadline) await page.keyboard.type(text);
  else {
    const chars = [...text];
    const t0 = Date.now();
    for (let i = 0; i < chars.length; i++) {
      check();
      if (i >= PACE_KEYS && ((Date.now() - t0) / i) * (chars.length - i) > deadline.remaining() * PACE_SHARE) {
        const rest = chars.slice(i).join('');
        await page.keyboard.insertText(rest);
        inserted = rest.length;
        break;
      }
      await page.keyboard.type(chars[i]);
    }
  }
  check();
  if (submit) await page.keyboard.press('Enter');
  return inserted;
}

/** Whether the focused element takes text (iframes count: the focus may be inside them). */
export async function focusedEditable(page: Page, deadline: Progress): Promise<boolean> {
  return deadline.race(
    page.evaluate(inPage(() => {
      let el: Element | null = document.activeElement;
      while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
      if (!el || el === document.body) return document.designMode === 'on';
      if (el instanceof HTMLIFrameElement) return true;
      if (el instanceof HTMLTextAreaElement) return !el.readOnly && !el.disabled;
      if (el instanceof HTMLInputElement) {
        const nonText = ['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'range', 'color', 'hidden'];
        return !nonText.includes(el.type) && !el.readOnly && !el.disabled;
      }
      return (el as HTMLElement).isContentEditable;
    }, null)) as Promise<boolean>,
    'focus check',
  );
}

/** The focused field's value (an input's value, else the element's text), as web_env.py reads it after `write`. */
export async function fieldValue(page: Page, deadline: Progress): Promise<string | undefined> {
  const v = await deadline
    .race(
      page.evaluate(
        inPage(() => {
          let el: Element | null = document.activeElement;
          while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
          if (!el || el === document.body || el instanceof HTMLIFrameElement) return null;
          const value = (el as HTMLInputElement).value;
          return typeof value === 'string' && value !== '' ? value : (el.textContent ?? '');
        }, null),
      ),
      'field value',
    )
    .catch(() => null);
  return typeof v === 'string' ? v : undefined;
}
