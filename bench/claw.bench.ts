// Claw benchmark: tool-call round trip through Grove's API (POST /sandboxes/{id}/claw/call) and through the
// sandbox's own origin, against baselines measured in the same run: the same call in process (ClawApp.call) and
// a bare loopback HTTP round trip (a node:http server answering a fixed JSON body); then tasks per minute with
// the scripted policy at concurrency 16 through the API against the same tasks run in process.
// Blocks run interleaved (ABAB) so drift hits all sides alike. The machine is shared: read ratios, not absolutes.
//
//   npm run bench:claw           (--calls N per block, default 400; --blocks B, default 4; --tasks T, default 64)
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ClawApp } from '../claw-env/app.ts';
import { baseWorld } from '../claw-env/fixtures/world.ts';
import { builtinTasks } from '../claw-env/tasks/index.ts';
import { embeddedEnv, remoteEnv } from '../runner/claw/env.ts';
import { ScriptedToolPolicy } from '../runner/claw/policy.ts';
import { runClaw } from '../runner/claw/run.ts';
import { loadConfig } from '../sandbox/config.ts';
import { buildApp } from '../server/app.ts';

const { values } = parseArgs({ options: { calls: { type: 'string' }, blocks: { type: 'string' }, tasks: { type: 'string' }, concurrency: { type: 'string' } } });
const CALLS = Number(values.calls ?? 400);
const BLOCKS = Number(values.blocks ?? 4);
const TASKS = Number(values.tasks ?? 64);
const CONC = Number(values.concurrency ?? 16);
const KEY = 'bench-key-0123456789';

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function post(url: string, body: string, headers: Record<string, string>): Promise<string> {
  return new Promise((ok, fail) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => (res.statusCode! < 300 ? ok(Buffer.concat(chunks).toString('utf8')) : fail(new Error(`${url}: ${res.statusCode}`))));
    });
    req.on('error', fail);
    req.end(body);
  });
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

// --- servers: Grove (no browser), and the bare baseline
const app = await buildApp({ config: loadConfig({ env: {}, flags: { apiKey: KEY, maxSandboxes: 200 } }), environments: {} });
await app.listen({ host: '127.0.0.1', port: 0 });
const grove = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
const CANNED = JSON.stringify({ status: 200, result: { todos: [], next_page_token: null, total: 0 }, changes: [], seq: 1 });
const bare = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(CANNED);
  });
});
await new Promise<void>((ok) => bare.listen(0, '127.0.0.1', ok));
const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/`;

const H = { 'x-api-key': KEY };
const created = JSON.parse(await post(`${grove}/sandboxes`, JSON.stringify({ type: 'claw', world_seed: 1 }), H));
await new Promise((ok) => setTimeout(ok, 50));
const info = await (await fetch(`${grove}/sandboxes/${created.sandbox_id}/wait?timeout=10`, { headers: H })).json();
const callUrl = `${grove}/sandboxes/${created.sandbox_id}/claw/call`;
const originUrl = `${info.claw.origin}/api/tools/todo_list`;
const originH = { authorization: `Bearer ${info.claw.token}` };
const local = new ClawApp({ seed: baseWorld(1).state });
const CALL = JSON.stringify({ tool: 'todo_list', arguments: { status: 'all' } });
const ARGS = JSON.stringify({ status: 'all' });

const sides: Record<string, () => Promise<unknown>> = {
  in_process: async () => local.call('todo_list', { status: 'all' }),
  bare_http: () => post(bareUrl, CALL, {}),
  grove_api: () => post(callUrl, CALL, H),
  claw_origin: () => post(originUrl, ARGS, originH),
};
const samples: Record<string, number[]> = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
for (const fn of Object.values(sides)) for (let i = 0; i < 50; i++) await fn(); // warm-up
for (let b = 0; b < BLOCKS; b++) {
  const order = b % 2 ? Object.keys(sides).reverse() : Object.keys(sides);
  for (const k of order) {
    await new Promise((ok) => setTimeout(ok, 200));
    for (let i = 0; i < CALLS; i++) {
      const t0 = performance.now();
      await sides[k]();
      samples[k].push(performance.now() - t0);
    }
  }
}
const rt = Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, { p50: pct(xs, 0.5), p99: pct(xs, 0.99), mean: xs.reduce((a, b) => a + b, 0) / xs.length, n: xs.length }]));

// --- tasks per minute, scripted policy at concurrency CONC
const all = builtinTasks().filter((t) => t.source === 'generated');
const byTemplate = new Map<string, typeof all>();
for (const t of all) byTemplate.set(t.template!, [...(byTemplate.get(t.template!) ?? []), t]);
const tasks: typeof all = [];
for (let i = 0; tasks.length < TASKS && i < 100; i++) for (const ts of byTemplate.values()) if (ts[i] && tasks.length < TASKS) tasks.push(ts[i]);
const policy = new ScriptedToolPolicy();
const tpm: Record<string, number[]> = { api: [], api_reuse: [], in_process: [] };
let passed = 0;
let passedReuse = 0;
// Three sides in a rotating order: a sandbox per task, sandboxes reused with POST .../claw/reset {task_id}, in process.
const SIDES = ['api', 'api_reuse', 'in_process'] as const;
for (let b = 0; b < 3; b++) {
  for (const side of [...SIDES.slice(b), ...SIDES.slice(0, b)]) {
    const remote = side === 'in_process' ? null : remoteEnv(grove, KEY, { reuse: side === 'api_reuse' });
    const t0 = performance.now();
    const { report } = await runClaw({ tasks, policy, env: remote ?? embeddedEnv, trials: 1, concurrency: CONC });
    const min = (performance.now() - t0) / 60_000;
    await remote?.dispose();
    tpm[side].push(tasks.length / min);
    if (side === 'api') passed = report.rows.filter((r) => r.passes === r.trials).length;
    if (side === 'api_reuse') passedReuse = report.rows.filter((r) => r.passes === r.trials).length;
  }
}
const tasksPerMin = {
  api: Math.min(...tpm.api), api_reuse: Math.min(...tpm.api_reuse), in_process: Math.min(...tpm.in_process),
  api_best: Math.max(...tpm.api), api_reuse_best: Math.max(...tpm.api_reuse), in_process_best: Math.max(...tpm.in_process),
};

const f = (x: number) => x.toFixed(3);
const lines = [
  `Grove Claw benchmark (${os.cpus().length} cores, shared machine: read the ratios)`,
  `tool-call round trip, todo_list, ${BLOCKS} interleaved blocks × ${CALLS} calls:`,
  ...Object.entries(rt).map(([k, v]) => `  ${k.padEnd(12)} p50 ${f(v.p50)} ms   p99 ${f(v.p99)} ms   mean ${f(v.mean)} ms`),
  `  Grove API p50 / bare HTTP p50 = ${(rt.grove_api.p50 / rt.bare_http.p50).toFixed(2)}   (API overhead over a bare loopback round trip: ${f(rt.grove_api.p50 - rt.bare_http.p50)} ms)`,
  `  Claw origin p50 / bare HTTP p50 = ${(rt.claw_origin.p50 / rt.bare_http.p50).toFixed(2)}`,
  `tasks/minute, scripted policy, ${tasks.length} generated tasks (all ${byTemplate.size} templates), concurrency ${CONC}, 1 trial, 3 rotating rounds (worst shown):`,
  `  through the API, a sandbox per task (create, wait, calls, delete) ${tasksPerMin.api.toFixed(0)} tasks/min (best ${tasksPerMin.api_best.toFixed(0)})   ratio to in process ${(tasksPerMin.api / tasksPerMin.in_process).toFixed(2)}   (${passed}/${tasks.length} passed)`,
  `  through the API, sandboxes reused (POST /sandboxes/{id}/claw/reset {task_id}) ${tasksPerMin.api_reuse.toFixed(0)} tasks/min (best ${tasksPerMin.api_reuse_best.toFixed(0)})   ratio to in process ${(tasksPerMin.api_reuse / tasksPerMin.in_process).toFixed(2)}   (${passedReuse}/${tasks.length} passed)`,
  `  in process ${tasksPerMin.in_process.toFixed(0)} tasks/min (best ${tasksPerMin.in_process_best.toFixed(0)})`,
];
process.stdout.write(`${lines.join('\n')}\n`);
const dir = path.join(import.meta.dirname, 'results');
mkdirSync(dir, { recursive: true });
writeFileSync(
  path.join(dir, 'claw.json'),
  JSON.stringify({ date: new Date().toISOString(), cores: os.cpus().length, config: { calls: CALLS, blocks: BLOCKS, tasks: tasks.length, concurrency: CONC }, round_trip_ms: rt, ratio_api_vs_bare_p50: rt.grove_api.p50 / rt.bare_http.p50, ratio_origin_vs_bare_p50: rt.claw_origin.p50 / rt.bare_http.p50, tasks_per_minute: tasksPerMin, ratio_tasks_per_minute_api_vs_in_process: tasksPerMin.api / tasksPerMin.in_process, ratio_tasks_per_minute_api_reuse_vs_in_process: tasksPerMin.api_reuse / tasksPerMin.in_process, passed, passed_reuse: passedReuse, printed: lines }, null, 2),
);
await app.close();
await new Promise<void>((ok) => bare.close(() => ok()));
agent.destroy();
