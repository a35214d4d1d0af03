// OpenEnv benchmark: browser steps per second through OpenEnv's WebSocket session path (/openenv/<key>/browser/ws,
// one session per episode) against Grove's own API (POST /sandboxes/{id}/step) in the same run: the same action
// (a scroll, screenshot base64) from N concurrent loops on each side, over one server with real Chromium. Blocks
// alternate (ABAB) so drift hits both sides alike; the figure is the ratio (target >= 0.95). `--env claw` measures
// tool calls instead (Claw sandboxes: the protocol's own cost, no browser). The machine is shared: read ratios.
//
//   npm run bench:openenv   (--sessions N, default 16; --steps S per session per block, default 20; --blocks B, default 4;
//                            --env browser|claw)
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
import { createBrowserEnvironment } from '../browser-env/index.ts';
import { loadConfig } from '../sandbox/config.ts';
import { buildApp } from '../server/app.ts';

const { values } = parseArgs({ options: { sessions: { type: 'string' }, steps: { type: 'string' }, blocks: { type: 'string' }, env: { type: 'string' } } });
const SESSIONS = Number(values.sessions ?? 16);
const STEPS = Number(values.steps ?? 20);
const BLOCKS = Number(values.blocks ?? 4);
const ENV = values.env === 'claw' ? 'claw' : 'browser';
const KEY = 'bench-openenv-0123456789';
const PAGE = `data:text/html,${encodeURIComponent('<body style="margin:0;height:20000px;background:linear-gradient(#fff,#36c)">' + '<p>grove openenv bench</p>'.repeat(200) + '</body>')}`;

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-bench-openenv-'));
const config = loadConfig({ env: {}, flags: { apiKey: KEY, dataDir, maxSandboxes: SESSIONS * 2 + 4, openenvMaxSessions: SESSIONS * 2, maxStarting: 4 } });
const app = await buildApp({
  config,
  environments: async () =>
    ENV === 'browser' ? { browser: await createBrowserEnvironment({ executablePath: config.chromiumPath, processes: 2, recycleAfter: 1000, warmPool: 0, dataDir: path.join(dataDir, 'browser'), headless: true, extraArgs: [] }) } : {},
});
await app.listen({ host: '127.0.0.1', port: 0 });
const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

const agent = new http.Agent({ keepAlive: true, maxSockets: SESSIONS * 2 });
function call(method: string, url: string, body?: unknown): Promise<any> {
  const text = body === undefined ? '' : JSON.stringify(body);
  return new Promise((ok, fail) => {
    const req = http.request(`${base}${url}`, { method, agent, headers: { 'x-api-key': KEY, ...(text ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const t = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode! >= 300) return fail(Object.assign(new Error(`${method} ${url}: ${res.statusCode} ${t.slice(0, 200)}`), { status: res.statusCode }));
        ok(t ? JSON.parse(t) : undefined);
      });
    });
    req.on('error', fail);
    req.end(text);
  });
}

/** One OpenEnv session as its EnvClient drives it: a frame out, the answer frame back. */
class Session {
  private waiting: ((v: any) => void) | null = null;
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (raw) => {
      const w = this.waiting;
      this.waiting = null;
      w?.(JSON.parse(raw.toString()));
    });
  }
  static open(): Promise<Session> {
    return new Promise((ok, fail) => {
      const ws = new WebSocket(`${base.replace('http', 'ws')}/openenv/${KEY}/${ENV}/ws`, { maxPayload: 100 * 1024 * 1024 });
      ws.once('open', () => ok(new Session(ws)));
      ws.once('error', fail);
    });
  }
  send(msg: unknown): Promise<any> {
    return new Promise((ok, fail) => {
      this.waiting = (v) => (v.type === 'error' ? fail(Object.assign(new Error(JSON.stringify(v.data)), { code: v.data.grove_code ?? v.data.code })) : ok(v));
      this.ws.send(JSON.stringify(msg));
    });
  }
  close(): void {
    this.ws.close();
  }
}

const action = (i: number) => (ENV === 'browser' ? { action: 'scroll', dy: i % 2 ? -300 : 300 } : null);
const clawCall = { tool: 'todo_list', arguments: {} };

// A step a loaded server refuses (503 capture_timeout / overloaded; over OpenEnv the same as an error frame) is
// counted apart from the throughput on both sides, not fatal.
const refused = { openenv: 0, grove: 0 };
const REFUSALS = new Set(['capture_timeout', 'overloaded', 'CAPACITY_REACHED']);
const sessions: Session[] = [];
const ids: string[] = [];

async function openenvBlock(): Promise<number> {
  const t = performance.now();
  let done = 0;
  await Promise.all(sessions.map(async (s) => {
    for (let i = 0; i < STEPS; i++) {
      try {
        await s.send({ type: 'step', data: ENV === 'browser' ? { action: action(i) } : clawCall });
        done++;
      } catch (err) {
        if (!REFUSALS.has((err as { code?: string }).code ?? '')) throw err;
        refused.openenv++;
      }
    }
  }));
  return done / ((performance.now() - t) / 1000);
}

async function groveBlock(): Promise<number> {
  const t = performance.now();
  let done = 0;
  await Promise.all(ids.map(async (id) => {
    for (let i = 0; i < STEPS; i++) {
      try {
        if (ENV === 'browser') await call('POST', `/sandboxes/${id}/step`, { action: action(i) });
        else await call('POST', `/sandboxes/${id}/claw/call`, clawCall);
        done++;
      } catch (err) {
        if ((err as { status?: number }).status !== 503) throw err;
        refused.grove++;
      }
    }
  }));
  return done / ((performance.now() - t) / 1000);
}

let cleaned: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaned ??= (async () => {
    for (const s of sessions) s.close();
    await Promise.all(ids.map((id) => call('DELETE', `/sandboxes/${id}`).catch(() => undefined)));
    agent.destroy();
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  })();
  return cleaned;
}
// Stopped early (a timeout, Ctrl-C): the browsers and the temp folder go first, then the signal takes its course.
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    void cleanup().finally(() => process.kill(process.pid, sig));
  });
}

try {
  // --- setup: SESSIONS OpenEnv sessions and SESSIONS Grove sandboxes, the same start page
  for (let i = 0; i < SESSIONS; i++) sessions.push(await Session.open());
  for (const s of sessions) await s.send({ type: 'reset', data: ENV === 'browser' ? { start_url: PAGE } : { seed: 1 } });
  for (let i = 0; i < SESSIONS; i++) {
    const info = await call('POST', '/sandboxes', ENV === 'browser' ? { type: 'browser', start_url: PAGE } : { type: 'claw', world_seed: 1 });
    ids.push(info.sandbox_id);
    await call('GET', `/sandboxes/${info.sandbox_id}/wait?timeout=120`);
  }
  const ours: number[] = [];
  const theirs: number[] = [];
  await openenvBlock(); // warm-up of both paths
  await groveBlock();
  for (let b = 0; b < BLOCKS; b++) {
    if (b % 2 === 0) {
      ours.push(await openenvBlock());
      theirs.push(await groveBlock());
    } else {
      theirs.push(await groveBlock());
      ours.push(await openenvBlock());
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const o = median(ours);
  const g = median(theirs);
  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
  console.log(`openenv bench: env ${ENV}, ${SESSIONS} sessions x ${STEPS} steps x ${BLOCKS} blocks (ABAB), load average ${load}`);
  console.log(`  OpenEnv /ws            ${o.toFixed(1)} steps/s  (blocks: ${ours.map((x) => x.toFixed(1)).join(', ')}; refused ${refused.openenv})`);
  console.log(`  Grove REST step        ${g.toFixed(1)} steps/s  (blocks: ${theirs.map((x) => x.toFixed(1)).join(', ')}; refused ${refused.grove})`);
  console.log(`  ratio OpenEnv / Grove  ${(o / g).toFixed(3)}  (target >= 0.95)`);
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await cleanup();
}
