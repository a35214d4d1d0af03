// The Grove side of the core bench: `grove serve` as a child process (so its RSS and CPU are its own), and the
// requests the blocks time against it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GroveClient } from '../../client/index.ts';
import type { StepChannel } from '../../client/step-channel.ts';
import type { Action } from '../../protocol/action.ts';
import type { Fixture } from './fixture.ts';
import { now, VIEWPORT } from './stats.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface Server { url: string; key: string; proc: ChildProcess; client: GroveClient; stop(): Promise<void>; /** What the child wrote to stderr so far. */ stderr(): string }

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

/** `grove serve` with `extra` CLI flags (and `nodeArgs` for node itself, e.g. --cpu-prof), once /health answers. */
export async function startServer(extra: string[], nodeArgs: string[] = [], stdoutFile?: string): Promise<Server> {
  const port = await freePort();
  const key = 'bench-' + Math.random().toString(36).slice(2);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-bench-'));
  const proc = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'bin/grove.mjs'), 'serve', '--port', String(port),
    '--api-key', key, '--max-sandboxes', '64', '--data-dir', dataDir, ...extra], {
    stdio: ['ignore', stdoutFile ? openSync(stdoutFile, 'w') : 'ignore', 'pipe'], env: { ...process.env, GROVE_LOG_LEVEL: 'warn' },
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => { stderr += d; });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try { if ((await fetch(`${url}/health`)).ok) break; } catch { /* not up yet */ }
    if (i > 600 || proc.exitCode !== null) {
      proc.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
      throw new Error(`grove serve did not start: ${stderr.slice(-2000)}`);
    }
    await new Promise((ok) => setTimeout(ok, 100));
  }
  const client = new GroveClient({ baseUrl: url, apiKey: key });
  return {
    url, key, proc, client,
    stderr: () => stderr,
    stop: async () => {
      client.close();
      if (proc.exitCode !== null) return rmSync(dataDir, { recursive: true, force: true });
      const exited = new Promise((ok) => proc.once('exit', ok));
      proc.kill('SIGTERM');
      await Promise.race([exited, new Promise((ok) => setTimeout(ok, 15_000))]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
      // Its data folder (downloads, recordings) goes with it.
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function api(s: Server, method: string, p: string, body?: unknown): Promise<any> {
  const res = await fetch(s.url + p, {
    method,
    headers: { 'x-api-key': s.key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p} → ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

export function createBody(fixture: Pick<Fixture, 'url' | 'hostPort'>, withStart = true) {
  return {
    type: 'browser', viewport: VIEWPORT, settle: false, screenshot_format: 'jpeg', screenshot_quality: 80,
    ...(withStart ? { start_url: fixture.url } : {}),
    network: { allow: [fixture.hostPort] },
  };
}

/** Sandboxes re-created because their start page failed to open (see createReady); printed when there were any. */
export const failedStarts: string[] = [];

/**
 * Creates a sandbox and returns its id once it left `creating`. With `retryFailedStart`, a sandbox that is not
 * ready or whose start page failed to open (seen on a machine at load 50+: the goto timed out and its retry was
 * interrupted) is deleted and created again, at most 4 times, and noted in `failedStarts`: the blocks that measure
 * steps need a page to step on. Without it (churn, RL waves) the sandbox is returned as it is, as before.
 */
export async function createReady(s: Server, body: unknown, opts: { retryFailedStart?: boolean } = {}): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const c = await createAdmitted(s, body);
    let info = c;
    for (let i = 0; info.status === 'creating' && i < 3; i++) info = await api(s, 'GET', `/sandboxes/${c.sandbox_id}/wait?timeout=30`);
    if (!opts.retryFailedStart || (info.status === 'ready' && !info.error)) return c.sandbox_id;
    failedStarts.push(`${info.status}${info.error ? ` ${info.error.code}: ${String(info.error.message).slice(0, 160)}` : ''}`);
    await api(s, 'DELETE', `/sandboxes/${c.sandbox_id}`);
    if (attempt >= 4) throw new Error(`sandbox did not start 5 times: ${failedStarts.slice(-5).join('; ')}`);
  }
}

/** Creates refused with 503 while a block set up (e.g. the raw side's 16 new contexts made the server's loop late), waited out and sent again. */
export const refusedCreates: string[] = [];

/**
 * POST /sandboxes as a client of the service should: a 503 (the server is at capacity) is waited out for its
 * Retry-After and sent again, at most 10 times. Any other error throws.
 */
async function createAdmitted(s: Server, body: unknown): Promise<any> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(s.url + '/sandboxes', {
      method: 'POST', headers: { 'x-api-key': s.key, 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.ok) return JSON.parse(text);
    if (res.status !== 503 || attempt >= 9) throw new Error(`POST /sandboxes → ${res.status} ${text.slice(0, 300)}`);
    refusedCreates.push(text.slice(0, 200));
    const after = Number(res.headers.get('retry-after'));
    await new Promise((ok) => setTimeout(ok, 1000 * (Number.isFinite(after) && after > 0 ? Math.min(after, 30) : 1)));
  }
}

export const clickAction = (i: number) => ({
  action: 'click', space: 'css_px', x: 8 + ((i % 8) + 0.5) * ((VIEWPORT.width - 16) / 8), y: 40,
});

/** Step answers with an error in the latency and throughput blocks (see groveSteps' `tolerate`). */
export const stepErrors: string[] = [];

/**
 * n steps; `binary` asks for the multipart answer (JSON + raw image bytes) instead of base64 in JSON. An answer
 * with an action error (or a binary one without its image) throws, unless `tolerate`: then it is noted in `stepErrors` (printed
 * with the results) and timed like any other answer (at load 80 a capture can miss its budget: one such answer
 * ended a whole run).
 */
export async function groveSteps(s: Server, id: string, n: number, binary = false, tolerate = false): Promise<number[]> {
  const lat: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = now();
    let problem: string | null;
    try {
      problem = await stepProblem(s, id, i, binary);
    } catch (e) {
      // An error answer (a 500 at load 80 ended a run): noted like the others when tolerated.
      if (!tolerate) throw e;
      problem = `HTTP error: ${e instanceof Error ? e.message : String(e)}`;
    }
    if (problem && !tolerate) throw new Error(problem);
    if (problem) stepErrors.push(problem.slice(0, 200));
    lat.push(now() - t);
  }
  return lat;
}

/**
 * One step; what is wrong with its answer, or null. The answer is read here and dropped when this returns, as
 * the raw side drops each capture: held in the loop above, V8 kept the last answer (its ~130 KB screenshot) alive
 * through the next request, so it survived into the old generation and cost the client ~0.5 ms of full
 * collections per step that raw never paid (measured on a stub server answering after 250 ms, 16 loops:
 * 1.1–1.9 against 0.7–1.2 ms CPU per request).
 */
async function stepProblem(s: Server, id: string, i: number, binary: boolean): Promise<string | null> {
  if (binary) {
    const { result, image } = await s.client.stepBinary(id, { action: clickAction(i) as Action });
    if (!image || image.bytes.length < 1000) return `no image part (${result.observation.last_action_error?.code ?? 'no error reported'})`;
    return result.observation.last_action_error ? JSON.stringify(result.observation.last_action_error) : null;
  }
  const r = await s.client.step(id, { action: clickAction(i) as Action });
  return r.observation.last_action_error ? JSON.stringify(r.observation.last_action_error) : null;
}

/** `n` create→ready times (each sandbox deleted after), `pauseMs` before each create. */
export async function timeCreates(s: Server, fixture: Fixture, n: number, pauseMs: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    if (pauseMs) await new Promise((ok) => setTimeout(ok, pauseMs));
    const t = now();
    const sid = await createReady(s, createBody(fixture, false));
    out.push(now() - t);
    await api(s, 'DELETE', `/sandboxes/${sid}`);
  }
  return out;
}

/**
 * n steps of sandbox `id` over the step channel (each waits for its answer, as a policy does); an answer without an
 * image, or with an action error, is noted in `stepErrors` like groveSteps' tolerated ones.
 */
export async function wsSteps(channel: StepChannel, id: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    try {
      const { result, image } = await channel.step(id, { action: clickAction(i) as Action });
      if (!image || image.bytes.length < 1000) stepErrors.push(`ws: no image (${result.observation.last_action_error?.code ?? 'no error reported'})`);
      else if (result.observation.last_action_error) stepErrors.push(`ws: ${JSON.stringify(result.observation.last_action_error).slice(0, 190)}`);
    } catch (e) {
      stepErrors.push(`ws: ${e instanceof Error ? e.message.slice(0, 190) : String(e)}`);
    }
  }
}
