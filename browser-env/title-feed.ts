// Titles the pages reported through the title binding (title-script.ts), one feed per browser context, kept per
// page with the URL and document each was reported for. Tabs read one only while the page's URL is still that
// URL; otherwise they ask the renderer and remember the answer.
//
// The binding is Playwright's (`exposeBinding`): it is present in every document of the context from its start,
// across navigations and renderer swaps. A call costs a round trip, but only when a title changes. Playwright
// delivers a call a few ticks after the page made it, so a report from the document a navigation replaced can
// come after the navigation: each report names its document (its `performance.timeOrigin`), and after a
// navigation no report from a document as old as the newest one seen before it is taken.
import type { BrowserContext, Page } from 'playwright-core';
import { TITLE_BINDING } from './title-script.ts';

/** Longer titles are cut (a page calling the binding itself cannot make the sandbox keep megabytes). */
const MAX_TITLE = 4096;

interface PageTitles {
  /** The last title taken, with the URL and document it belongs to. */
  entry?: { url: string; title: string; origin: number };
  /** The newest document seen. */
  newest: number;
  /** Reports from documents this old or older are not taken (set at each navigation). */
  floor: number;
}

export class TitleFeed {
  private readonly pages = new WeakMap<Page, PageTitles>();

  /** Exposes the binding in `context` (before its first page): reports from top frames land here. */
  async install(context: BrowserContext): Promise<void> {
    context.on('page', (pg) => {
      this.pages.set(pg, { newest: -Infinity, floor: -Infinity });
      pg.on('framenavigated', (f) => {
        if (f !== pg.mainFrame()) return;
        const t = this.state(pg);
        t.entry = undefined;
        t.floor = t.newest;
      });
    });
    await context.exposeBinding(TITLE_BINDING, (source: { page: Page; frame: unknown }, url: unknown, title: unknown, origin: unknown) => {
      if (source.frame !== source.page.mainFrame() || typeof url !== 'string' || typeof title !== 'string' || typeof origin !== 'number') return;
      const t = this.state(source.page);
      if (!(origin > t.floor)) return;
      t.newest = Math.max(t.newest, origin);
      t.entry = { url, title: title.slice(0, MAX_TITLE), origin };
    });
  }

  private state(pg: Page): PageTitles {
    let t = this.pages.get(pg);
    if (!t) this.pages.set(pg, (t = { newest: -Infinity, floor: -Infinity }));
    return t;
  }

  /** The title `pg` last reported, if it was reported for the URL the page shows now. */
  current(pg: Page): string | undefined {
    const e = this.pages.get(pg)?.entry;
    return e && e.url === pg.url() ? e.title : undefined;
  }

  /** A title read from the renderer with its document's time origin: the page's title until the next report. */
  remember(pg: Page, title: string, origin: number): void {
    const t = this.state(pg);
    t.newest = Math.max(t.newest, origin);
    // This document reports again (a same-document navigation had shut it out); older ones stay out.
    t.floor = Math.min(t.floor, origin - 1e-3);
    t.entry = { url: pg.url(), title: title.slice(0, MAX_TITLE), origin };
  }
}
