// A type that runs past its deadline stops typing: nothing is typed after the step gave up on it (on a loaded
// machine an abandoned type went on in the background and interleaved its keys with the next type's). One whose
// keys fall behind puts the rest in as one insert, within the deadline.
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_FLAGS } from '../../browser-env/chromium-launch.ts';
import { typeText } from '../../browser-env/typing.ts';
import { Progress, TimeoutError } from '../../sandbox/progress.ts';
import { loadConfig } from '../../sandbox/config.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({ executablePath: loadConfig({ env: {}, flags: {} }).chromiumPath, args: CHROMIUM_FLAGS });
});
afterAll(async () => {
  await browser?.close();
});

describe('typeText with a deadline', () => {
  it('stops at the deadline and types nothing afterwards', async () => {
    const page = await browser.newPage();
    // The first key alone costs the page 400 ms, past the 300 ms deadline, before the pace can be judged.
    await page.setContent('<input id="f" onkeydown="const t = Date.now(); while (Date.now() - t < 400) {}">');
    await page.focus('#f');
    const text = 'x'.repeat(20);
    const err = await typeText(page, text, false, true, Progress.after(300, 'action type')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    const atEnd = await page.inputValue('#f');
    expect(atEnd.length).toBeLessThan(text.length);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await page.inputValue('#f')).toBe(atEnd);
    await page.close();
  });

  it('puts in the rest as one insert when the keys fall behind the deadline, and says how much', async () => {
    const page = await browser.newPage();
    // Every key costs the page ~30 ms: 200 keys would take ~6 s, the deadline is 2 s.
    await page.setContent('<input id="f" onkeydown="const t = Date.now(); while (Date.now() - t < 30) {}">');
    await page.focus('#f');
    const text = 'y'.repeat(200);
    const t0 = Date.now();
    const inserted = await typeText(page, text, false, false, Progress.after(2000, 'action type'));
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(await page.inputValue('#f')).toBe(text);
    // Some keys were typed before the pace was judged; the rest was inserted.
    expect(inserted).toBeGreaterThan(0);
    expect(inserted).toBeLessThanOrEqual(text.length - 2);
    await page.close();
  });

  it('types the whole text within its deadline', async () => {
    const page = await browser.newPage();
    await page.setContent('<input id="f">');
    await page.focus('#f');
    expect(await typeText(page, 'Chickpea Coconut Curry', true, false, Progress.after(30_000, 'action type'))).toBe(0);
    expect(await page.inputValue('#f')).toBe('Chickpea Coconut Curry');
    await page.close();
  });
});
