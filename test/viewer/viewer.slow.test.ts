// The viewer in real Chromium: the list loads and filters, the click overlay lands on the clicked pixel,
// keyboard navigation moves between steps and episodes, and the episode page renders (non-blank screenshot).
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import sharp from 'sharp';
import { startViewer } from '../../viewer/server.ts';
import { writeSyntheticRun, SYNTH_CLICK, SYNTH_SCALE } from '../../recording/synthetic.ts';
import { runJudge } from '../../cli/commands/judge.ts';
import { IMAGE_SYSTEM, KEY_POINTS_SYSTEM } from '../../judges/webjudge.ts';
import { DATASETS } from '../support/datasets.ts';
import { startOpenAIServer } from '../support/openai-server.ts';

const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];
const WV_EXAMPLES = join(DATASETS, 'webvoyager', 'examples');

let root: string;
let viewer: Awaited<ReturnType<typeof startViewer>>;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'grove-viewer-ui-'));
  await writeSyntheticRun(root, { count: 9, steps: 4, runId: 'r1', durable: false });
  await cp(WV_EXAMPLES, join(root, 'wv'), { recursive: true });
  // `grove judge` (WebJudge) over one recorded episode: its verdict and details must show in the viewer.
  const judgeModel = await startOpenAIServer((r) => {
    const sys = r.body.messages[0].content;
    if (sys === KEY_POINTS_SYSTEM) return '**Key Points**:\n1. Open the page\n2. Click the button';
    if (sys === IMAGE_SYSTEM) return '**Reasoning**: the button is visible\n**Score**: 4';
    return 'Thoughts: all key points met.\nStatus: success';
  });
  const quiet = { out: () => {}, err: () => {} };
  expect(await runJudge(['--suite', 'online-mind2web', '--judge', 'webjudge', '--episodes', join(root, 'r1', 'ep-00001'), '--judge-url', judgeModel.url, '--judge-model', 'o4-mini', '--no-cache'], quiet)).toBe(0);
  await judgeModel.close();
  viewer = await startViewer({ root, port: 0 });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ARGS });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  // No network beyond the viewer itself: any other request would be a CDN or a leak.
  await page.route('**/*', (route) => (route.request().url().startsWith(viewer.url) ? route.continue() : route.abort()));
});
afterAll(async () => {
  await browser?.close();
  await viewer?.close();
  await rm(root, { recursive: true, force: true });
});

const rows = () => page.locator('table.runs tr.row');
const total = async () => Number(await page.locator('#total').textContent());

describe('viewer UI', () => {
  it('lists the runs, filters them and searches task text', async () => {
    await page.goto(viewer.url);
    await expect.poll(() => rows().count()).toBe(12);
    expect(await total()).toBe(12);
    await page.selectOption('select[data-filter="success"]', 'true');
    await expect.poll(total).toBe(6); // i % 3 != 0 of 9
    expect(await page.locator('table.runs .dot.ok').count()).toBe(6);
    expect(await page.locator('table.runs .dot.bad').count()).toBe(0);
    await page.selectOption('select[data-filter="success"]', '');
    await page.selectOption('select[data-filter="layout"]', 'webvoyager');
    await expect.poll(total).toBe(3);
    await page.click('text=Clear');
    await expect.poll(total).toBe(12);
    await page.fill('#q', 'multi-language abstract');
    await expect.poll(() => rows().count()).toBe(1);
    expect(await rows().first().getAttribute('data-id')).toBe('wv/taskArXiv--11');
    expect(pageErrors).toEqual([]);
  });

  it('draws the click overlay on the clicked pixel', async () => {
    await page.goto(`${viewer.url}#/episode?${new URLSearchParams({ id: 'r1/ep-00001', step: '1' })}`);
    const shot = page.locator('.shot[data-ready]');
    await shot.waitFor();
    const marker = page.locator('.shot g.ov-click');
    // Frames are half the viewport: the recorded CSS click (770, 170) is image pixel (385, 85).
    expect(Number(await marker.getAttribute('data-x'))).toBeCloseTo(SYNTH_CLICK.x * SYNTH_SCALE, 5);
    expect(Number(await marker.getAttribute('data-y'))).toBeCloseTo(SYNTH_CLICK.y * SYNTH_SCALE, 5);
    const img = await page.locator('.shot img').evaluate((el: HTMLImageElement) => {
      const r = el.getBoundingClientRect();
      return { x: r.x, y: r.y, w: r.width, h: r.height, nw: el.naturalWidth, nh: el.naturalHeight };
    });
    expect(img.nw).toBe(640);
    const expected = { x: img.x + (SYNTH_CLICK.x * SYNTH_SCALE * img.w) / img.nw, y: img.y + (SYNTH_CLICK.y * SYNTH_SCALE * img.h) / img.nh };
    const box = (await marker.boundingBox())!;
    expect(Math.abs(box.x + box.width / 2 - expected.x)).toBeLessThan(1.5);
    expect(Math.abs(box.y + box.height / 2 - expected.y)).toBeLessThan(1.5);
    // And in pixels actually painted: the marker colour at that point, page colours well away from it.
    const png = await page.screenshot({ clip: { x: expected.x - 40, y: expected.y - 40, width: 81, height: 81 } });
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    const px = (dx: number, dy: number) => {
      const dpr = info.width / 81;
      const i = (Math.round((40 + dy) * dpr) * info.width + Math.round((40 + dx) * dpr)) * info.channels;
      return [data[i], data[i + 1], data[i + 2]];
    };
    const isMark = ([r, g, b]: number[]) => r > 200 && g < 110 && b < 150;
    expect(isMark(px(0, 0)), `centre ${px(0, 0)}`).toBe(true);
    expect(isMark(px(-38, 38)), `corner ${px(-38, 38)}`).toBe(false);
  });

  it('moves between steps with ←/→ and between episodes with j/k; the page is not blank', async () => {
    await page.goto(`${viewer.url}#/episode?${new URLSearchParams({ id: 'r1/ep-00001', step: '1' })}`);
    await page.locator('.shot[data-ready]').waitFor();
    const desc = page.locator('.stage-bar .desc');
    await expect.poll(() => desc.textContent()).toMatch(/^1\. click/);
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => desc.textContent()).toMatch(/^2\. type "hello"/);
    expect(page.url()).toContain('step=2');
    expect(await page.locator('#timeline .cell.cur').getAttribute('data-step')).toBe('2');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => page.locator('#timeline .cell.cur').getAttribute('data-step')).toBe('3');
    expect(await page.locator('#timeline .cell[data-step="3"]').getAttribute('class')).toContain('noop');
    await page.keyboard.press('ArrowLeft');
    await expect.poll(() => desc.textContent()).toMatch(/^2\./);
    await page.keyboard.press('j');
    await expect.poll(() => page.url()).toContain(encodeURIComponent('r1/ep-00002'));
    await expect.poll(() => page.locator('.ep-head h1').textContent()).toMatch(/^Task 2:/);
    await page.keyboard.press('k');
    await expect.poll(() => page.locator('.ep-head h1').textContent()).toMatch(/^Task 1:/);
    await page.locator('.shot[data-ready]').waitFor();

    const png = await page.screenshot({ fullPage: false });
    const stats = await sharp(png).stats();
    const spread = stats.channels.slice(0, 3).map((c) => c.stdev);
    expect(Math.min(...spread)).toBeGreaterThan(15); // a blank or single-colour page has ~0
    const { data } = await sharp(png).resize(200).raw().toBuffer({ resolveWithObject: true });
    const colours = new Set<number>();
    for (let i = 0; i < data.length; i += 3) colours.add((data[i] >> 4) * 256 + (data[i + 1] >> 4) * 16 + (data[i + 2] >> 4));
    expect(colours.size).toBeGreaterThan(40);
    await page.keyboard.press('Escape');
    await expect.poll(() => rows().count()).toBeGreaterThan(0);
    expect(pageErrors).toEqual([]);
  });

  it('opens a WebVoyager folder and compares two episodes side by side', async () => {
    await page.goto(`${viewer.url}#/episode?${new URLSearchParams({ id: 'wv/taskGitHub--0', step: '5' })}`);
    await page.locator('.shot[data-ready]').waitFor();
    expect(await page.locator('.stage-bar .desc').textContent()).toMatch(/answer: resource-watch/);
    await page.goto(`${viewer.url}#/compare?${new URLSearchParams({ a: 'r1/ep-00001', b: 'r1/ep-00002', step: '1' })}`);
    await expect.poll(() => page.locator('.cmp .col').count()).toBe(2);
    await expect.poll(() => page.locator('.cmp .shot[data-ready]').count()).toBe(2);
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => page.url()).toContain('step=2');
    expect(pageErrors).toEqual([]);
  });

  it('shows verdicts written by grove judge with their details; foreign layouts show "—" for timings', async () => {
    await page.goto(`${viewer.url}#/episode?${new URLSearchParams({ id: 'r1/ep-00001', step: '1' })}`);
    const verdict = page.locator('.verdict', { hasText: 'webjudge' });
    await verdict.waitFor();
    await verdict.locator('summary', { hasText: 'Details' }).click();
    await expect.poll(() => verdict.textContent()).toMatch(/Key points[\s\S]*Click the button/);
    expect(await verdict.textContent()).toMatch(/Screenshot scores \(kept: 0, 1/);
    expect(await verdict.locator('li.kept').count()).toBeGreaterThan(0);
    expect(await verdict.textContent()).toMatch(/all key points met/);

    await page.goto(`${viewer.url}#/episode?${new URLSearchParams({ id: 'wv/taskGitHub--0', step: '2' })}`);
    const timings = page.locator('.card', { has: page.locator('h3', { hasText: 'Timings' }) });
    await timings.waitFor();
    const total = timings.locator('dt', { hasText: /^total$/ }).locator('xpath=following-sibling::dd[1]');
    await expect.poll(() => total.textContent()).toBe('—');
    expect(await timings.textContent()).not.toMatch(/0 ms/);
    expect(pageErrors).toEqual([]);
  });
});
