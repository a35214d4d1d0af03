// Measuring a scroll: how far the window and the scrollers under the pointer moved over a wheel, and the two
// animation frames after which input-driven scrolling and paint have been applied.
import type { Page } from 'playwright-core';
import type { Progress } from '../sandbox/progress.ts';
import { inPage } from './util.ts';

type XY = { x: number; y: number };

/**
 * The scroll offsets of the window and of every ancestor of the element at `p` (the scrollers a wheel there may move),
 * held in the page; `moved()` then says how far they moved together. undefined when the page cannot be read.
 */
export async function scrollProbe(page: Page, deadline: Progress, p: XY): Promise<{ moved(): Promise<{ dx: number; dy: number } | undefined> } | undefined> {
  const before = await deadline
    .race(
      page.evaluateHandle(
        inPage(({ x, y }) => {
          const els: Element[] = [];
          // The root scroller is the window's own scroll position: not counted twice.
          for (let el = document.elementFromPoint(x, y); el && el !== document.body && el !== document.documentElement; el = el.parentElement) els.push(el);
          return { els, at: els.map((e) => [e.scrollLeft, e.scrollTop]), sx: window.scrollX, sy: window.scrollY };
        }, p),
      ),
      'scroll position',
    )
    .catch(() => undefined);
  if (!before) return undefined;
  return {
    async moved() {
      try {
        return (await deadline.race(
          before.evaluate((b: { els: Element[]; at: number[][]; sx: number; sy: number }) => {
            let dx = window.scrollX - b.sx;
            let dy = window.scrollY - b.sy;
            b.els.forEach((e, i) => {
              dx += e.scrollLeft - b.at[i]![0]!;
              dy += e.scrollTop - b.at[i]![1]!;
            });
            return { dx: Math.round(dx * 100) / 100, dy: Math.round(dy * 100) / 100 };
          }),
          'scroll position',
        )) as { dx: number; dy: number };
      } catch {
        return undefined; // the page navigated or closed meanwhile
      } finally {
        void before.dispose().catch(() => {});
      }
    },
  };
}

/** Two animation frames: the scroll/paint triggered by input has been applied when this resolves. */
export async function nextFrames(page: Page, deadline: Progress): Promise<void> {
  await deadline.race(
    page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())))'),
    'animation frame',
  );
}
