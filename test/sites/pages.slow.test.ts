// The offline sites in real Chromium (playwright-core directly): start pages render non-blank with no
// request leaving loopback, and a few tasks are done by clicking through the real pages, after which the
// rule judge says success (popups, late JSON results, confirm dialogs, a new tab, downloads, pagination).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import sharp from 'sharp';
import { offlineRuleJudge } from '../../judges/rules/index.ts';
import type { Task } from '../../protocol/task.ts';
import { startSites, type SitesServer } from '../../sites/server.ts';
import { loadOfflineTasks, startUrlFor } from '../../sites/tasks.ts';

let sites: SitesServer;
let browser: Browser;
let tasks: Map<string, Task>;

beforeAll(async () => {
  sites = await startSites();
  tasks = new Map(loadOfflineTasks(sites.url).map((t) => [t.id, t]));
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
});
afterAll(async () => {
  await browser?.close();
  await sites?.close();
});

async function episode(taskId: string, fn: (page: Page, ctx: BrowserContext) => Promise<string | undefined>) {
  const task = tasks.get(taskId)!;
  const sessionId = `pw-${taskId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 1000 }, acceptDownloads: true });
  try {
    const page = await ctx.newPage();
    page.on('dialog', (d) => void d.accept());
    await page.goto(startUrlFor(task, sessionId));
    const answer = await fn(page, ctx);
    return await offlineRuleJudge(sites.url).judge({ task, sessionId, answer });
  } finally {
    await ctx.close();
  }
}

describe('start pages', () => {
  for (const site of ['shop', 'recipes', 'forms']) {
    it(`${site}: renders non-blank, loads nothing from outside the server`, async () => {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
      try {
        const page = await ctx.newPage();
        const foreign: string[] = [];
        page.on('request', (r) => {
          if (!r.url().startsWith(sites.url) && !r.url().startsWith('data:')) foreign.push(r.url());
        });
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        await page.goto(`${sites.url}/${site}/?grove_session=shot-${site}`, { waitUntil: 'networkidle' });
        const png = await page.screenshot();
        const stats = await sharp(png).stats();
        // A blank page is one flat colour: every channel's deviation is ~0.
        expect(Math.max(...stats.channels.map((c) => c.stdev))).toBeGreaterThan(20);
        expect((await page.locator('body').innerText()).length).toBeGreaterThan(100);
        expect(foreign).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await ctx.close();
      }
    });
  }
});

describe('tasks by clicking', () => {
  it('Shop--3: brand filter, sort and quantity through the delayed results', async () => {
    const v = await episode('Shop--3', async (page) => {
      await page.getByRole('button', { name: 'Accept all cookies' }).click();
      await page.getByLabel('Search products').fill('headphones');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.getByRole('link', { name: 'Sonora', exact: true }).click();
      await page.getByRole('link', { name: 'Price: low to high' }).click();
      await page.locator('#results a.pname').first().click();
      await page.getByLabel('Quantity').fill('2');
      await page.getByRole('button', { name: 'Add to cart' }).click();
      expect(await page.getByRole('status').innerText()).toContain('Added 2 ×');
      return undefined;
    });
    expect(v.outcome, v.reasoning).toBe('success');
  });

  it('Shop--6: the specifications sheet opens in a new tab and holds the answer', async () => {
    const v = await episode('Shop--6', async (page, ctx) => {
      await page.getByRole('button', { name: 'Reject optional' }).click();
      await page.getByLabel('Search products').fill('Auralis Orbit');
      await page.keyboard.press('Enter');
      await page.getByRole('link', { name: 'Auralis Orbit Wireless Headphones' }).click();
      const [tab] = await Promise.all([ctx.waitForEvent('page'), page.getByRole('link', { name: /Specifications sheet/ }).click()]);
      await tab.waitForLoadState();
      return await tab.locator('tr', { hasText: 'Battery life' }).locator('td').innerText();
    });
    expect(v.outcome, v.reasoning).toBe('success');
  });

  it('Shop--8: checkout validation, order and invoice download', async () => {
    const v = await episode('Shop--8', async (page) => {
      await page.getByRole('button', { name: 'Accept all cookies' }).click();
      await page.getByLabel('Search products').fill('Caffio Moka');
      await page.keyboard.press('Enter');
      await page.getByRole('link', { name: 'Caffio Moka 6 Coffee Maker' }).click();
      await page.getByLabel('Quantity').fill('3');
      await page.getByRole('button', { name: 'Add to cart' }).click();
      await page.getByRole('link', { name: 'View cart' }).click();
      await page.getByRole('link', { name: 'Proceed to checkout' }).click();
      await page.getByLabel('Full name').fill('Grace Hopper');
      await page.getByLabel('Email').fill('grace@example'); // invalid first: the server sends it back
      await page.getByLabel('Street address').fill('1 Compiler Road');
      await page.getByLabel('City').fill('Arlington');
      await page.getByLabel('Postcode').fill('22201');
      await page.getByRole('button', { name: 'Place order' }).click();
      await page.getByText('Enter a valid email address.').waitFor();
      await page.getByLabel('Email').fill('grace@example.com');
      await page.getByRole('button', { name: 'Place order' }).click();
      const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download invoice (CSV)' }).click()]);
      expect(dl.suggestedFilename()).toMatch(/^invoice-NW-\d+\.csv$/);
      return undefined;
    });
    expect(v.outcome, v.reasoning).toBe('success');
  });

  it('Recipes--9: shopping list with a confirm() before clearing, newsletter modal on the way', async () => {
    const v = await episode('Recipes--9', async (page) => {
      await page.getByLabel('Search recipes').fill('Pad Thai');
      await page.keyboard.press('Enter');
      await page.getByRole('button', { name: 'No thanks' }).click(); // second page view: newsletter
      await page.getByRole('link', { name: 'Pad Thai' }).click();
      await page.getByRole('button', { name: 'Add ingredients to shopping list' }).click();
      await page.getByRole('link', { name: 'Shopping list', exact: true }).click();
      await page.getByRole('button', { name: 'Clear list' }).click();
      await page.getByText('Your shopping list is empty.').waitFor();
      await page.getByLabel('Search recipes').fill('Shakshuka');
      await page.keyboard.press('Enter');
      await page.getByRole('link', { name: 'Shakshuka' }).click();
      await page.getByLabel('Servings').fill('2');
      await page.getByRole('button', { name: 'Update servings' }).click();
      await page.getByRole('button', { name: 'Add ingredients to shopping list' }).click();
      return undefined;
    });
    expect(v.outcome, v.reasoning).toBe('success');
  });

  it('Forms--7: availability arrives late, the first free two-hour window after noon is booked', async () => {
    const v = await episode('Forms--7', async (page) => {
      await page.getByRole('button', { name: 'Maybe later' }).click();
      await page.getByRole('link', { name: 'Book a room', exact: true }).first().click();
      await page.getByLabel('Room: Board room (up to 12)').check();
      await page.getByLabel('Date', { exact: true }).fill('2026-12-09');
      await page.getByRole('button', { name: 'Check availability' }).click();
      // 12:00 is free but 13:00 is not, so the two-hour window starts at 14:00.
      await page.getByText('13:00 (booked)').waitFor();
      await page.getByLabel('Start time 14:00').check();
      await page.getByLabel('Duration (hours)').fill('2');
      await page.getByLabel('Number of attendees').fill('10');
      await page.getByLabel('Full name').fill('Chen Wei');
      await page.getByLabel('Email', { exact: true }).fill('chen.wei@example.com');
      await page.getByRole('button', { name: 'Book room' }).click();
      expect(await page.getByRole('status').innerText()).toContain('Booking BK-2001 confirmed');
      return 'Booked from 14:00.';
    });
    expect(v.outcome, v.reasoning).toBe('success');
  });
});
