// Overload is refused, not half-served (issue 35): a real server with a small capacity (2 starts at once, 2 more
// queued) gets 8 creates at once. The ones beyond it answer 503 overloaded with Retry-After; every accepted one
// starts and completes its steps, each with its screenshot. A burst (16 episodes on one Chromium process, stepping
// and observing all at once) is served in turn by the process's capture gate: every admitted episode gets every
// screenshot, none capture_timeout. And a step whose capture cannot finish (Chromium's compositor stopped) is an
// error the client raises (503 capture_timeout, what the step did in its details), never an observation without
// a screenshot.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { START_LIMIT } from '../../browser-env/capture-gate.ts';
import { GroveApiError, GroveClient } from '../../client/index.ts';
import type { Action } from '../../protocol/action.ts';
import { generateApiKey, loadConfig } from '../../sandbox/config.ts';
import { startServer } from '../../server/server.ts';
import { html, startFixture, type Fixture } from '../browser-env/support.ts';

let fx: Fixture;
let dir: string;
let server: Awaited<ReturnType<typeof startServer>>;
let client: GroveClient;
let onClicked: (() => void) | undefined;

beforeAll(async () => {
  fx = await startFixture({
    '/': html(`<button style="font-size:24px" onclick="document.title = 'clicked ' + Date.now()">press</button><div style="height:3000px"></div>`),
    // The click reports itself: the GPU is stopped once the click has run (stopped before it, the click's own
    // mouse move waits for a frame that never comes and the step is page_unresponsive instead: CI saw it at load ~30).
    '/freeze': html(`<button style="font-size:24px" onclick="document.title = 'clicked ' + Date.now(); fetch('/clicked')">press</button>`),
    // Each click repaints the whole viewport (background and a page of text in columns): every capture needs a new frame.
    '/paint': html(
      `<style>body{margin:0;background:linear-gradient(45deg,#fafafa,#cde)}body.b{background:linear-gradient(45deg,#cde,#fafafa)}.t{font:14px sans-serif;columns:4;padding:8px}</style>` +
        `<button style="font-size:24px" onclick="document.body.classList.toggle('b'); document.title = 'clicked ' + Date.now()">press</button>` +
        `<div class="t">${'grove burst capture '.repeat(1500)}</div>`,
    ),
    '/clicked': (_req, res) => {
      onClicked?.();
      res.writeHead(204).end();
    },
  });
  dir = await mkdtemp(join(tmpdir(), 'grove-admission-'));
  const apiKey = generateApiKey();
  const config = loadConfig({ env: {}, flags: { host: '127.0.0.1', port: 0, apiKey, dataDir: dir, logLevel: 'silent', browserProcesses: 1, maxStarting: 2, startQueue: 2 } });
  server = await startServer(config, { logStream: process.stderr });
  client = new GroveClient({ baseUrl: server.url, apiKey });
});
afterAll(async () => {
  client?.close();
  await server?.close();
  await fx?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const spec = () => ({ type: 'browser' as const, start_url: fx.url('/'), network: { allow: [`127.0.0.1:${fx.port}`] } });
const STEPS: Action[] = [
  { action: 'click', x: 40, y: 20, space: 'css_px' },
  { action: 'scroll', x: 200, y: 200, space: 'css_px', dy: 400 },
  { action: 'scroll', x: 200, y: 200, space: 'css_px', dy: -400 },
];

describe('admission control on a real server', () => {
  it('refuses creates beyond its capacity with 503 overloaded + Retry-After; every accepted sandbox completes its steps with screenshots', async () => {
    const tries = await Promise.allSettled(Array.from({ length: 8 }, () => client.createSandbox(spec())));
    const accepted = tries.flatMap((t) => (t.status === 'fulfilled' ? [t.value.sandbox_id] : []));
    const refused = tries.flatMap((t) => (t.status === 'rejected' ? [t.reason as GroveApiError] : []));
    expect(accepted.length + refused.length).toBe(8);
    // Two start, two wait; the rest is refused (more may be, if the loaded machine's own measurements say so).
    expect(accepted.length).toBeGreaterThanOrEqual(2);
    expect(refused.length).toBeGreaterThanOrEqual(4);
    for (const e of refused) {
      expect(e).toBeInstanceOf(GroveApiError);
      expect({ status: e.status, code: e.code }).toEqual({ status: 503, code: 'overloaded' });
      expect(e.retryAfter).toBeGreaterThanOrEqual(1);
    }
    // Every accepted sandbox starts (none runs out of time waiting behind the others) and every step is whole.
    const shots = await Promise.all(
      accepted.map(async (id) => {
        await client.waitSandbox(id, 120);
        const sizes: number[] = [];
        for (const action of STEPS) {
          const r = await client.step(id, { action });
          expect(r.observation.last_action_error).toBeNull();
          sizes.push(r.observation.screenshot?.base64?.length ?? 0);
        }
        await client.deleteSandbox(id);
        return sizes;
      }),
    );
    for (const sizes of shots) for (const n of sizes) expect(n).toBeGreaterThan(1000);
    // Once they are gone, a refused client that comes back after Retry-After gets its sandbox.
    await new Promise((r) => setTimeout(r, (refused[0].retryAfter ?? 1) * 1000));
    const again = await client.createSandbox(spec());
    await client.waitSandbox(again.sandbox_id, 120);
    await client.deleteSandbox(again.sandbox_id);
  });

  it('a burst of 16 episodes on one browser process: each is refused whole (503 overloaded) or gets every screenshot of its steps and observations, served in turn; none capture_timeout', { timeout: 600_000 }, async () => {
    const burstDir = await mkdtemp(join(tmpdir(), 'grove-admission-burst-'));
    const apiKey = generateApiKey();
    const config = loadConfig({ env: {}, flags: { host: '127.0.0.1', port: 0, apiKey, dataDir: burstDir, logLevel: 'silent', browserProcesses: 1, maxStarting: 2, startQueue: 14 } });
    const srv = await startServer(config, { logStream: process.stderr });
    const c = new GroveClient({ baseUrl: srv.url, apiKey });
    const N = 16;
    const ready: string[] = [];
    try {
      const made = await Promise.allSettled(Array.from({ length: N }, () => c.createSandbox({ ...spec(), start_url: fx.url('/paint') })));
      let refused = 0;
      const startFailures: string[] = [];
      await Promise.all(
        made.map(async (m) => {
          if (m.status === 'rejected') {
            // Refused at admission: 503 overloaded with Retry-After.
            const e = m.reason as GroveApiError;
            expect(e).toBeInstanceOf(GroveApiError);
            expect({ status: e.status, code: e.code, retry: (e.retryAfter ?? 0) >= 1 }).toEqual({ status: 503, code: 'overloaded', retry: true });
            refused++;
            return;
          }
          try {
            await c.waitSandbox(m.value.sandbox_id, 300);
            ready.push(m.value.sandbox_id);
          } catch (e) {
            // Refused in the start queue, before anything started (sandbox/admission.ts), or a start that ran out of
            // time (seen at load ~45, as in the test above: the start path, not this test's subject): never an
            // episode, the create is what failed, with 503.
            expect(e).toBeInstanceOf(GroveApiError);
            const { status, code } = e as GroveApiError;
            expect({ status, code: code === 'browser_start_timeout' ? 'overloaded' : code }).toEqual({ status: 503, code: 'overloaded' });
            if (code === 'browser_start_timeout') startFailures.push(m.value.sandbox_id);
            refused++;
            await c.deleteSandbox(m.value.sandbox_id);
          }
        }),
      );
      expect(ready.length + refused).toBe(N);
      // Two start at once (at load ~48, four at once left 8 of 16 starts out of time); no capture runs while they start,
      // so nothing measured refuses them.
      if (startFailures.length) console.log(`burst test: ${startFailures.length} of ${N} starts ran out of time (load ${loadavg()[0].toFixed(0)})`);
      expect(ready.length).toBeGreaterThanOrEqual(2);
      // Three rounds of a click on every episode at once, then two bursts of observations: every answer whole.
      const shots = new Map<string, number[]>(ready.map((id) => [id, []]));
      const failures: string[] = [];
      const whole = async (id: string, answer: () => Promise<{ screenshot?: { base64?: string } }>) => {
        try {
          shots.get(id)!.push((await answer()).screenshot?.base64?.length ?? 0);
        } catch (e) {
          failures.push(e instanceof GroveApiError ? `${e.status} ${e.code}: ${e.message}` : String(e));
        }
      };
      for (let round = 0; round < 3; round++) {
        await Promise.all(ready.map((id) => whole(id, async () => (await c.step(id, { action: { action: 'click', x: 40, y: 20, space: 'css_px' } })).observation)));
      }
      for (let burst = 0; burst < 2; burst++) await Promise.all(ready.map((id) => whole(id, () => c.observation(id))));
      expect(failures).toEqual([]);
      for (const sizes of shots.values()) {
        expect(sizes).toHaveLength(5);
        for (const n of sizes) expect(n).toBeGreaterThan(1000);
      }
      // More episodes than the gate lets capture at once: some captures waited for their turn on the one browser.
      const metrics = await c.metrics();
      const queued = Number(/^grove_backend\{backend="local",stat="browser_captures_queued_total"\} (\d+)$/m.exec(metrics)?.[1]);
      console.log(`burst test: ${ready.length} episodes ready, ${refused} refused, ${ready.length * 5} screenshots answered, ${queued} captures waited their turn (load ${loadavg()[0].toFixed(0)})`);
      if (ready.length > START_LIMIT) expect(queued).toBeGreaterThan(0);
    } finally {
      await Promise.all(ready.map((id) => c.deleteSandbox(id).catch(() => undefined)));
      c.close();
      await srv.close();
      await rm(burstDir, { recursive: true, force: true });
    }
  });

  it('a step whose screenshot cannot be captured raises 503 capture_timeout with what its actions did; observing again works', async () => {
    const { sandbox_id: id } = await client.createSandbox({ ...spec(), start_url: fx.url('/freeze') });
    await client.waitSandbox(id, 120);
    // The GPU process composites every frame (software compositing with --disable-gpu): stopped, no capture can
    // finish while the page itself still answers.
    const gpu = ourGpuProcesses();
    expect(gpu.length).toBeGreaterThan(0);
    const stopped: number[] = [];
    onClicked = () => {
      for (const pid of gpu) {
        process.kill(pid, 'SIGSTOP');
        stopped.push(pid);
      }
    };
    let err: unknown;
    try {
      await client.step(id, { action: { action: 'click', x: 40, y: 20, space: 'css_px' } });
    } catch (e) {
      err = e;
    } finally {
      onClicked = undefined;
      for (const pid of stopped) process.kill(pid, 'SIGCONT');
    }
    expect(stopped).toEqual(gpu);
    expect(err).toBeInstanceOf(GroveApiError);
    const e = err as GroveApiError;
    expect({ status: e.status, code: e.code }).toEqual({ status: 503, code: 'capture_timeout' });
    expect(e.retryAfter).toBeGreaterThanOrEqual(1);
    expect(e.details).toMatchObject({ executed: true, done: false, actions: [expect.objectContaining({ action: expect.objectContaining({ action: 'click' }), error: null })] });
    // The click ran: the page says so once it can be seen again.
    const obs = await client.observation(id);
    expect(obs.screenshot?.base64?.length).toBeGreaterThan(1000);
    expect(obs.title).toMatch(/^clicked /);
    await client.deleteSandbox(id);
  });
});

/** GPU processes of the Chromium this test process started (through the in-process server). */
function ourGpuProcesses(): number[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
  const parent = new Map(rows.map((r) => [r.pid, r.ppid]));
  const ours = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === process.pid) return true;
    return false;
  };
  return rows.filter((r) => r.args.includes('--type=gpu-process') && ours(r.pid)).map((r) => r.pid);
}
