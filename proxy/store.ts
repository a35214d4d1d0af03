// Append-only record store: one `calls.jsonl` per rollout. A record is handed to the kernel (write) before the
// call's answer ends, so a SIGKILLed proxy leaves every completed call readable (the page cache outlives the
// process); it is then flushed to the disk (fdatasync) off the answer's path, so a machine crash loses at most
// the last moments. Writes of one rollout are serialised; rollouts write in parallel.
import { mkdirSync, readFileSync, existsSync, readdirSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { CallRecord } from './types.ts';

const MAX_OPEN = 256;

export class RecordStore {
  private readonly handles = new Map<string, Promise<FileHandle>>();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly seqs = new Map<string, number>();

  constructor(readonly dir: string) {
    mkdirSync(path.join(dir, 'rollouts'), { recursive: true });
  }

  rolloutDir(rollout: string): string {
    return path.join(this.dir, 'rollouts', rollout);
  }

  /** The next arrival number of a rollout (continues after a restart from what is on disk). */
  nextSeq(rollout: string): number {
    let n = this.seqs.get(rollout);
    if (n === undefined) n = readCalls(this.dir, rollout).length;
    this.seqs.set(rollout, n + 1);
    return n;
  }

  private handle(rollout: string): Promise<FileHandle> {
    let h = this.handles.get(rollout);
    if (!h) {
      if (this.handles.size >= MAX_OPEN) this.evictOne();
      mkdirSync(this.rolloutDir(rollout), { recursive: true });
      h = open(path.join(this.rolloutDir(rollout), 'calls.jsonl'), 'a');
      this.handles.set(rollout, h);
    }
    return h;
  }

  private evictOne(): void {
    for (const [rollout, h] of this.handles) {
      if (this.chains.has(rollout)) continue;
      this.handles.delete(rollout);
      void h.then((fh) => fh.close()).catch(() => {});
      return;
    }
  }

  /** Appends one record; resolves once the kernel has it (the flush to disk follows, see `flushed`). */
  append(record: CallRecord): Promise<void> {
    const rollout = record.rollout_id;
    const line = `${JSON.stringify(record)}\n`;
    const prev = this.chains.get(rollout) ?? Promise.resolve();
    const written = prev.then(async () => {
      const fh = await this.handle(rollout);
      await fh.appendFile(line, 'utf8');
    });
    const synced = written.then(async () => (await this.handle(rollout)).datasync()).catch(() => {});
    const tracked = synced.finally(() => {
      if (this.chains.get(rollout) === tracked) this.chains.delete(rollout);
    });
    this.chains.set(rollout, tracked);
    return written;
  }

  /** Resolves when every record appended so far is flushed to disk. */
  async flushed(): Promise<void> {
    await Promise.allSettled([...this.chains.values()]);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.chains.values()]);
    const hs = [...this.handles.values()];
    this.handles.clear();
    await Promise.allSettled(hs.map(async (h) => (await h).close()));
  }
}

/** Reads a rollout's records; a torn last line (a write cut by a kill) is skipped, never an error. */
export function readCalls(dir: string, rollout: string): CallRecord[] {
  const file = path.join(dir, 'rollouts', rollout, 'calls.jsonl');
  if (!existsSync(file)) return [];
  const out: CallRecord[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as CallRecord);
    } catch {
      // a partial line left by a kill mid-write
    }
  }
  return out;
}

export function listRollouts(dir: string): string[] {
  const root = path.join(dir, 'rollouts');
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}
