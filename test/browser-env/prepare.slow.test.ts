// prepareContext (the first step of every sandbox creation and reset) replaces a context whose target died while its
// first page was made (a killed renderer or browser: the soak's "Target crashed" at create), once, instead of
// failing the sandbox; any other failure is the caller's. A creation whose context or first page is not opened
// within its budget (an overloaded machine, a browser restarting: the soak's creations after a browser kill at
// load 30) fails with the retryable 503 browser_start_timeout, not a 500 internal_error.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { prepareContext, type ContextSource } from '../../browser-env/context.ts';
import { ChromiumPool } from '../../browser-env/pool.ts';
import { ChromiumSandbox } from '../../browser-env/sandbox.ts';
import { GroveError } from '../../protocol/errors.ts';
import { BrowserCreateOptions } from '../../protocol/sandbox.ts';
import { silentLogger } from '../../sandbox/log.ts';

let pool: ChromiumPool;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'grove-prep-'));
  pool = new ChromiumPool({ executablePath: '/usr/bin/chromium', processes: 1, recycleAfter: 0, dataDir: dir, headless: true, extraArgs: [] });
  await pool.start();
});
afterAll(async () => {
  await pool.shutdown();
  rmSync(dir, { recursive: true, force: true });
});

/** A source whose first `broken` contexts die before their first page is made. */
function dyingSource(broken: number): ContextSource & { made: number } {
  const src = {
    made: 0,
    async newContext(options: Parameters<ChromiumPool['newContext']>[0]) {
      const pooled = await pool.newContext(options);
      if (src.made++ < broken) await pooled.context.close();
      return pooled;
    },
  };
  return src;
}

it('a context that dies under its first page is replaced once, and the sandbox gets a working page', async () => {
  const src = dyingSource(1);
  const p = await prepareContext(src, {}, 30_000);
  try {
    expect(src.made).toBe(2);
    await p.page.setContent('<p>alive</p>');
    expect(await p.page.textContent('p')).toBe('alive');
    expect(pool.stats().contexts_open).toBe(1); // the dead one was released
  } finally {
    await p.pooled.release();
  }
});

it('a second death is reported, not retried forever', async () => {
  const src = dyingSource(5);
  await expect(prepareContext(src, {}, 30_000)).rejects.toThrow(/closed/);
  expect(src.made).toBe(2);
  expect(pool.stats().contexts_open).toBe(0);
});

/** `real` whose newPage never answers (as under a browser too busy to make one). */
function stuckContext(real: BrowserContext): BrowserContext {
  const never = () => new Promise<never>(() => {});
  const context = Object.create(real) as BrowserContext;
  context.newPage = never;
  // Grove opens pages through the channel call behind newPage (browser-env/new-page.ts): that one never answers either.
  const channel = (real as unknown as { _channel: Record<string | symbol, unknown> })._channel;
  Object.defineProperty(context, '_channel', { value: new Proxy(channel, { get: (o, p) => (p === 'newPage' ? never : o[p]) }) });
  return context;
}

it('a first page that never comes ends the creation in browser_start_timeout (503), and the contexts are released', { timeout: 90_000 }, async () => {
  const released: BrowserContext[] = [];
  // Real contexts from the real pool, whose newPage never answers (as under a browser too busy to make one).
  const stuck: ContextSource = {
    async newContext(options) {
      const pooled = await pool.newContext(options);
      const context = stuckContext(pooled.context);
      return {
        context,
        browserPid: pooled.browserPid,
        release: async () => {
          released.push(pooled.context);
          await pooled.release();
        },
      };
    },
  };
  const sb = new ChromiumSandbox('ctimeout', BrowserCreateOptions.parse({ type: 'browser' }), { source: stuck, dataDir: dir, log: silentLogger });
  const err = await sb.ready().then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(GroveError);
  expect((err as GroveError).code).toBe('browser_start_timeout');
  expect((err as GroveError).status).toBe(503);
  // Tried twice (the first attempt gets half the budget), each context released.
  expect(released.length).toBe(2);
  await sb.close();
});

it('an episode reset whose fresh context never gets its first page ends in browser_start_timeout too', { timeout: 90_000 }, async () => {
  let stuck = false;
  const source: ContextSource = {
    async newContext(options) {
      const pooled = await pool.newContext(options);
      if (!stuck) return pooled;
      return { context: stuckContext(pooled.context), browserPid: pooled.browserPid, release: () => pooled.release() };
    },
  };
  const sb = new ChromiumSandbox('rtimeout', BrowserCreateOptions.parse({ type: 'browser' }), { source, dataDir: dir, log: silentLogger });
  await sb.ready();
  stuck = true;
  const err = await sb.reset({}).then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(GroveError);
  expect((err as GroveError).code).toBe('browser_start_timeout');
  expect((err as GroveError).status).toBe(503);
  await sb.close();
});
