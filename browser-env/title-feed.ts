// Titles the pages reported through the title binding (title-script.ts), one feed per browser context, kept per
// page with the URL each was reported for. Tabs read one only while the page's URL is still that URL; otherwise
// they ask the renderer and remember the answer for the same URL.
//
// The binding is Playwright's (`exposeBinding`): it is present in every document of the context from its start,
// across navigations and renderer swaps. A call costs a round trip, but only when a title changes.
import type { BrowserContext, Page } from 'playwright-core';
import { TITLE_BINDING } from './title-script.ts';

/** Longer titles are cut (a page calling the binding itself cannot make the sandbox keep megabytes). */
const MAX_TITLE = 4096;

export class TitleFeed {
  private readonly known = new WeakMap<Page, { url: string; title: string }>();

  /** Exposes the binding in `context` (before its first page): reports from top frames land here. */
  async install(context: BrowserContext): Promise<void> {
    await context.exposeBinding(TITLE_BINDING, (source: { page: Page; frame: unknown }, url: unknown, title: unknown) => {
      if (source.frame !== source.page.mainFrame() || typeof url !== 'string' || typeof title !== 'string') return;
      this.known.set(source.page, { url, title: title.slice(0, MAX_TITLE) });
    });
  }

  /** The title `pg` last reported, if it was reported for the URL the page shows now. */
  current(pg: Page): string | undefined {
    const k = this.known.get(pg);
    return k && k.url === pg.url() ? k.title : undefined;
  }

  /** A title read from the renderer, remembered for the page's current URL. */
  remember(pg: Page, title: string): void {
    this.known.set(pg, { url: pg.url(), title: title.slice(0, MAX_TITLE) });
  }
}
