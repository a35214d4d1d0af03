// The files a remote sandbox moves between the orchestrator and its worker, streamed (worker-http.ts), never held
// whole: a replay HAR uploaded before the worker creates its sandbox (and removed after), a recorded HAR fetched
// into the orchestrator's episode directory once the worker closed the sandbox (Playwright writes it then), and a
// download's bytes passed through with their Content-Length. Small JSON answers of the worker-only routes
// (server/worker-routes.ts) are read here too. remote-sandbox.ts is the step/observe relay that calls these.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GroveError } from '../protocol/errors.ts';
import { workerRequest, type WorkerEndpoint } from './worker-http.ts';

/** HAR files of a `record_har` / `replay_har` sandbox on the orchestrator (the recording layer's paths). */
export interface RemoteHar {
  /** Where the recorded HAR goes once the sandbox closed. */
  recordPath?: string;
  /** The HAR to replay: uploaded to the worker before its sandbox is created. */
  replayPath?: string;
}

/** Streams the replay HAR at `path` to the worker under `name`; answers the path its create takes as replay_har. */
export async function uploadReplayHar(w: WorkerEndpoint, name: string, path: string, signal: AbortSignal): Promise<string> {
  const res = await workerRequest(w, { method: 'PUT', path: `/worker/har/${encodeURIComponent(name)}`, body: createReadStream(path), signal });
  return (JSON.parse(await readAll(res.body)) as { replay_har: string }).replay_har;
}

/** Removes an uploaded replay HAR from the worker (best effort: the pod's /tmp goes with the pod anyway). */
export async function dropReplayHar(w: WorkerEndpoint, name: string): Promise<void> {
  await workerRequest(w, { method: 'DELETE', path: `/worker/har/${encodeURIComponent(name)}` })
    .then((r) => r.body.resume())
    .catch(() => undefined);
}

/** After the worker closed sandbox `wid`: its recorded HAR into `to` (the episode directory). */
export async function fetchRecordedHar(w: WorkerEndpoint, wid: string, to: string): Promise<void> {
  const res = await workerRequest(w, { method: 'GET', path: `/worker/recordings/${encodeURIComponent(wid)}/har` });
  await mkdir(dirname(to), { recursive: true });
  await pipeline(res.body, createWriteStream(to));
}

/** A download's bytes on the worker as a stream (its Content-Length kept); undefined when it has no saved file. */
export async function openWorkerDownload(w: WorkerEndpoint, wid: string, id: string): Promise<{ stream: Readable; size: number | null } | undefined> {
  try {
    const res = await workerRequest(w, { method: 'GET', path: `/sandboxes/${encodeURIComponent(wid)}/downloads/${encodeURIComponent(id)}` });
    const len = Number(res.headers['content-length']);
    return { stream: res.body, size: Number.isSafeInteger(len) && len >= 0 ? len : null };
  } catch (err) {
    if (err instanceof GroveError && err.code === 'download_not_found') return undefined;
    throw err;
  }
}

/** The JSON answer of a worker-only GET route (server/worker-routes.ts). */
export async function workerJson<T>(w: WorkerEndpoint, path: string): Promise<T> {
  const res = await workerRequest(w, { method: 'GET', path });
  return JSON.parse(await readAll(res.body)) as T;
}

async function readAll(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
