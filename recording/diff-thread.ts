// The frame diff (pixelmatch) off the event loop: one worker thread does the comparisons. pixelmatch is synchronous
// and its cost grows with how much changed: two 400x313 frames that differ everywhere (a navigation) took ~200 ms
// of one core on the loaded 2-core machine (issue 35), time every step deadline and every request in the process
// (the runner's, or a `record: true` server's) would have waited. The frames are copied to the worker (~0.5 MB).
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { changedShare, type RawFrame } from './diff.ts';

// CommonJS, evaluated in the worker: no TypeScript loader needed there (tests and tsx alike).
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let pixelmatch;
parentPort.on('message', async (m) => {
  try {
    pixelmatch ??= (await import(workerData.pixelmatch)).default;
    parentPort.postMessage({ id: m.id, n: pixelmatch(m.a, m.b, undefined, m.width, m.height, { threshold: 0.1 }) });
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: String(e && e.message || e) });
  }
});`;

interface Pending {
  resolve(n: number): void;
  reject(e: Error): void;
}

let worker: Worker | null = null;
let seq = 0;
const pending = new Map<number, Pending>();

function failAll(err: Error): void {
  for (const p of pending.values()) p.reject(err);
  pending.clear();
}

function start(): Worker {
  const pixelmatch = pathToFileURL(createRequire(import.meta.url).resolve('pixelmatch')).href;
  const w = new Worker(SOURCE, { eval: true, workerData: { pixelmatch }, execArgv: [] });
  w.on('message', (m: { id: number; n?: number; error?: string }) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (pending.size === 0) w.unref();
    if (m.error !== undefined) p.reject(new Error(`frame diff failed: ${m.error}`));
    else p.resolve(m.n ?? 0);
  });
  w.on('error', (err) => {
    if (worker === w) worker = null;
    failAll(err);
  });
  w.on('exit', (code) => {
    if (worker === w) worker = null;
    failAll(new Error(`the frame diff worker exited (${code})`));
  });
  w.unref();
  return w;
}

/** changedShare (diff.ts) computed on the worker thread; the same answer, without blocking this thread. */
export function changedShareOffThread(a: RawFrame, b: RawFrame): Promise<number> {
  if (a.width !== b.width || a.height !== b.height) return Promise.resolve(1);
  let w: Worker;
  try {
    w = worker ??= start();
  } catch {
    // No worker threads here (a restricted runtime): diff on this thread as before.
    return Promise.resolve(changedShare(a, b));
  }
  const id = ++seq;
  return new Promise<number>((resolve, reject) => {
    pending.set(id, { resolve: (n) => resolve(n / (a.width * a.height)), reject });
    // Held while a diff is pending, so a process waiting only for it does not exit under it.
    w.ref();
    w.postMessage({ id, a: a.data, b: b.data, width: a.width, height: a.height });
  });
}

/** Stops the worker (tests; a process exits without it: the worker is unref'd when idle). */
export async function stopDiffThread(): Promise<void> {
  const w = worker;
  worker = null;
  if (w) await w.terminate();
}
