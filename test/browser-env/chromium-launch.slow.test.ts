// How Grove launches Chromium (browser-env/chromium-launch.ts): the screenshot path it asks for.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ChromiumLauncher } from '../../browser-env/chromium-launch.ts';
import { silentLogger } from '../../sandbox/log.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The argv of the process whose command line holds `marker` (Chromium joins its argv with spaces). */
function argvWith(marker: string): string {
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const c = readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (c.includes(marker) && !c.includes('--type=')) return c;
    } catch { /* gone */ }
  }
  return '';
}

describe('ChromiumLauncher', () => {
  it("launches without Playwright's CDPScreenshotNewSurface (a capture copies the frame presented after a redraw)", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-launch-'));
    dirs.push(dataDir);
    const artifacts = mkdtempSync(path.join(os.tmpdir(), 'gl-'));
    dirs.push(artifacts);
    const marker = `--grove-launch-test=${process.pid}`;
    const browser = await new ChromiumLauncher({ executablePath: '/usr/bin/chromium', dataDir, headless: true, extraArgs: [] }, silentLogger).launch(marker, artifacts);
    try {
      const argv = argvWith(marker);
      expect(argv).toContain('--enable-features=');
      expect(argv).not.toContain('CDPScreenshotNewSurface');
      // And the capture still shows what the page drew just before it.
      const page = await (await browser.newContext({ viewport: { width: 200, height: 100 } })).newPage();
      await page.setContent('<body style="margin:0;background:#fff"></body>');
      const cdp = await page.context().newCDPSession(page);
      await page.evaluate(() => { document.body.style.background = '#ff0000'; });
      const shot = (await cdp.send('Page.captureScreenshot', { format: 'png' })) as { data: string };
      const { default: sharp } = await import('sharp');
      const { data } = await sharp(Buffer.from(shot.data, 'base64')).raw().toBuffer({ resolveWithObject: true });
      expect([data[0], data[1], data[2]]).toEqual([255, 0, 0]);
    } finally {
      await browser.close();
    }
  });
});
