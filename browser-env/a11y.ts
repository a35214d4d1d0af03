// Compact accessibility text: Playwright's ARIA snapshot of the page's <body> (role "name" tree), bounded in size.
import { Progress } from '../sandbox/progress.ts';
import type { Page } from 'playwright-core';

const A11Y_MAX_CHARS = 8000;

export async function accessibilityText(page: Page, timeoutMs: number, maxChars = A11Y_MAX_CHARS): Promise<string> {
  // The page's snapshot, not a locator's: a locator first waits for any navigation Playwright believes pending, and
  // one the renderer refused (a form submitted to a file:// URL, a CSP form-action) never ends, so the tree would be
  // unavailable on every observation until the page navigates again. Same tree, same format (body or frameset).
  const snap = await Progress.after(timeoutMs + 200, 'accessibility snapshot').race(page.ariaSnapshot({ timeout: timeoutMs }));
  return truncate(snap, maxChars);
}

/** Cuts at a line boundary and says so, so a model knows the tree is incomplete. */
export function truncate(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const marker = '\n… (truncated)';
  const cut = text.lastIndexOf('\n', maxChars - marker.length);
  return text.slice(0, cut > 0 ? cut : maxChars - marker.length) + marker;
}
