// Compact accessibility text: Playwright's ARIA snapshot of <body> (role "name" tree), bounded in size.
import type { Page } from 'playwright-core';
import { withTimeout } from './util.ts';

const A11Y_MAX_CHARS = 8000;

export async function accessibilityText(page: Page, timeoutMs: number, maxChars = A11Y_MAX_CHARS): Promise<string> {
  const snap = await withTimeout(page.locator('body').ariaSnapshot({ timeout: timeoutMs }), timeoutMs + 200, 'accessibility snapshot');
  return truncate(snap, maxChars);
}

/** Cuts at a line boundary and says so, so a model knows the tree is incomplete. */
export function truncate(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const marker = '\n… (truncated)';
  const cut = text.lastIndexOf('\n', maxChars - marker.length);
  return text.slice(0, cut > 0 ? cut : maxChars - marker.length) + marker;
}
