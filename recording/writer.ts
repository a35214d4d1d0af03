// Who is writing an open episode: `.writer.json` names the process (pid, hostname) and, when several servers share
// the recordings (kubernetes replicas on one volume), the server's name in the shared state (its replica id). A
// reader on the writer's host checks the pid; on another host it cannot, so it waited for 15 minutes without a write.
// With a server name the shared state's leader says sooner: once that server's liveness Lease lapsed, it writes
// `.writer-gone.json` naming it (markWriterGone), and a reader shows the episode `incomplete` unless something was
// written after that (a replica that joined the episode before the writer died and still serves its steps). A server
// that joins the episode later writes its own marker, which the note does not name.
import { readFile, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from './files.ts';

export const WRITER_FILE = '.writer.json';
export const WRITER_GONE_FILE = '.writer-gone.json';

export interface WriterInfo {
  pid: number;
  hostname: string;
  started_at?: string;
  /** The writing server's name in the shared state (a kubernetes replica id). */
  server?: string;
}

interface GoneNote {
  server: string;
  /** When the leader found the server gone (ms since the epoch). */
  at: number;
}

export function writerInfo(startedAt: string, server: string | undefined): WriterInfo {
  return { pid: process.pid, hostname: hostname(), started_at: startedAt, ...(server ? { server } : {}) };
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export function readWriter(dir: string): Promise<WriterInfo | undefined> {
  return readJson<WriterInfo>(join(dir, WRITER_FILE));
}

/** The newest write of the episode's own files (ms; 0 when none can be read). */
export async function lastWrite(dir: string, files: string[]): Promise<number> {
  const mtimes = await Promise.all(files.map((f) => stat(join(dir, f)).then((s) => s.mtimeMs, () => 0)));
  return Math.max(0, ...mtimes);
}

/** True when the leader found the marker's server gone and nothing was written since. */
export async function writerGone(dir: string, w: WriterInfo, files: string[]): Promise<boolean> {
  if (!w.server) return false;
  const note = await readJson<GoneNote>(join(dir, WRITER_GONE_FILE));
  if (!note || note.server !== w.server || typeof note.at !== 'number') return false;
  return (await lastWrite(dir, files)) <= note.at;
}

/**
 * The leader's part: an episode whose marker names a server `alive` says is gone gets the note (once per server).
 * Answers whether a note was written. A marker without a server name (a single server) is left to the readers.
 */
export async function markWriterGone(dir: string, alive: (server: string) => boolean, now: number): Promise<boolean> {
  const w = await readWriter(dir);
  if (!w?.server || alive(w.server)) return false;
  const note = await readJson<GoneNote>(join(dir, WRITER_GONE_FILE));
  if (note?.server === w.server) return false;
  await writeFileAtomic(join(dir, WRITER_GONE_FILE), JSON.stringify({ server: w.server, at: now } satisfies GoneNote));
  return true;
}
