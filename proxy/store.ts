// Append-only record store: one `calls.jsonl` per rollout. A record is handed to the kernel (write) before the
// call's answer ends, so a SIGKILLed proxy leaves every completed call readable (the page cache outlives the
// process); it is then flushed to the disk (fdatasync) off the answer's path, so a machine crash loses at most
// the last moments. Writes of one rollout are serialised; rollouts write in parallel. The proxy's request path does
// only asynchronous file I/O; the synchronous readers below are for the CLI, the export and harness runs.
import { mkdirSync, readFileSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdir, open, readFile, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { CallRecord } from './types.ts';

const MAX_OPEN = 256;

export class RecordStore {
  private readonly handles = new Map<string, Promise<FileHandle>>();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly seqs = new Map<string, number>();
  /** Per rollout: how many records were on disk when this process first saw it (read once, asynchronously). */
  private readonly onDisk = new Map<string, Promise<number>>();

  constructor(readonly dir: string) {}

  /** Creates the records directory (once, at start). */
  async init(): Promise<this> {
    await mkdir(path.join(this.dir, 'rollouts'), { recursive: true });
    return this;
  }

  rolloutDir(rollout: string): string {
    return path.join(this.dir, 'rollouts', rollout);
  }

  /** The next arrival number of a rollout (continues after a restart from what is on disk). */
  async nextSeq(rollout: string): Promise<number> {
    let disk = this.onDisk.get(rollout);
    if (!disk) {
      disk = readCallsAsync(this.dir, rollout).then((c) => c.length, () => 0);
      this.onDisk.set(rollout, disk);
    }
    const base = await disk;
    // From here on synchronous: concurrent first calls of a rollout get distinct numbers.
    const n = this.seqs.get(rollout) ?? base;
    this.seqs.set(rollout, n + 1);
    return n;
  }

  private handle(rollout: string): Promise<FileHandle> {
    let h = this.handles.get(rollout);
    if (!h) {
      if (this.handles.size >= MAX_OPEN) this.evictOne();
      const dir = this.rolloutDir(rollout);
      h = mkdir(dir, { recursive: true }).then(() => open(path.join(dir, 'calls.jsonl'), 'a'));
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

function callsFile(dir: string, rollout: string): string {
  return path.join(dir, 'rollouts', rollout, 'calls.jsonl');
}

/** Reads a rollout's records; a torn last line (a write cut by a kill) is skipped, never an error. */
export function readCalls(dir: string, rollout: string): CallRecord[] {
  const file = callsFile(dir, rollout);
  return existsSync(file) ? parseCalls(readFileSync(file, 'utf8')) : [];
}

/** `readCalls` without blocking the event loop (the proxy's own routes). */
export async function readCallsAsync(dir: string, rollout: string): Promise<CallRecord[]> {
  try {
    return parseCalls(await readFile(callsFile(dir, rollout), 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

function parseCalls(text: string): CallRecord[] {
  const out: CallRecord[] = [];
  for (const line of text.split('\n')) {
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

function rewardJson(reward: number, info?: unknown): string {
  return JSON.stringify({ reward, info: info ?? null, at: new Date().toISOString() });
}

/** Attaches an episode's reward to a rollout (read by the sample export). */
export function writeReward(dir: string, rollout: string, reward: number, info?: unknown): void {
  const d = path.join(dir, 'rollouts', rollout);
  mkdirSync(d, { recursive: true });
  writeFileSync(path.join(d, 'reward.json'), rewardJson(reward, info));
}

/** `writeReward` without blocking the event loop (the proxy's reward route). */
export async function writeRewardAsync(dir: string, rollout: string, reward: number, info?: unknown): Promise<void> {
  const d = path.join(dir, 'rollouts', rollout);
  await mkdir(d, { recursive: true });
  await writeFile(path.join(d, 'reward.json'), rewardJson(reward, info));
}
