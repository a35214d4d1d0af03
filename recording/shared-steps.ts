// One episode recorded by several servers: kubernetes orchestrator replicas mounting one recordings volume, each
// appending the steps it serves to the same steps.jsonl (recorder.ts, option `shared`). A step's number is claimed
// on storage: its claim file `.steps/NNNN.json` is created exclusively (O_CREAT|O_EXCL, which NFSv3+ servers do
// atomically; no lock), and a server that finds it taken takes the next, so two clients stepping one sandbox
// through two replicas at the same instant get two numbers. The search starts after the last step on storage (or
// this server's own last claim). The claim file then holds the step's record, so an episode's end can put back a
// line that two NFS clients appending at once clobbered (shared-end.ts). A step's visual diff compares with the
// step before it, whoever wrote that one.
import { open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StepRecord } from '../protocol/recording.ts';
import { writeFileSynced } from './files.ts';

export const CLAIMS_DIR = '.steps';

/** Bytes read from the end of steps.jsonl to find its last lines (the whole file when one line is longer). */
const TAIL = 256 * 1024;
/** Complete lines looked at from the end: steps claimed at once may be appended out of order. */
const RECENT = 8;

export const claimFile = (dir: string, step: number) => join(dir, CLAIMS_DIR, `${String(step).padStart(4, '0')}.json`);

async function readTail(file: string, bytes: number): Promise<{ text: string; whole: boolean }> {
  const fh = await open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    const n = Math.min(size, bytes);
    const buf = Buffer.alloc(n);
    await fh.read(buf, 0, n, size - n);
    return { text: buf.toString('utf8'), whole: n === size };
  } finally {
    await fh.close();
  }
}

/** The highest-numbered of the last complete step lines of a steps.jsonl (null when none; a torn line is skipped,
 * as readers do). */
export async function lastStepOnDisk(file: string): Promise<StepRecord | null> {
  let tail: { text: string; whole: boolean };
  try {
    tail = await readTail(file, TAIL);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const last = lastParsed(tail.text, tail.whole);
  if (last || tail.whole) return last;
  return lastParsed((await readTail(file, Number.MAX_SAFE_INTEGER)).text, true);
}

function parseStep(line: string): StepRecord | null {
  try {
    const r = JSON.parse(line) as StepRecord;
    return typeof r?.step === 'number' && Array.isArray(r.actions) ? r : null;
  } catch {
    return null; // torn by a crash
  }
}

function lastParsed(text: string, whole: boolean): StepRecord | null {
  const lines = text.split('\n');
  let best: StepRecord | null = null;
  let seen = 0;
  // The first line of a tail may be cut: it counts only when the tail is the whole file.
  for (let i = lines.length - 1; i >= (whole ? 0 : 1) && seen < RECENT; i--) {
    const line = lines[i]!.trim();
    const r = line ? parseStep(line) : null;
    if (!r) continue;
    seen++;
    if (!best || r.step > best.step) best = r;
  }
  return best;
}

/** Claims the first free step number from `from` on; throws when the episode's claims are gone (it ended). */
export async function claimStep(dir: string, from: number): Promise<number> {
  for (let n = Math.max(1, from); ; n++) {
    try {
      await (await open(claimFile(dir, n), 'wx')).close();
      return n;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      if (code === 'ENOENT') throw new Error(`episode ${dir} has ended: step ${n} cannot be recorded`);
      throw err;
    }
  }
}

/** Stores a claimed step's record in its claim file. */
export function commitStep(dir: string, step: number, line: string, durable: boolean): Promise<void> {
  return writeFileSynced(claimFile(dir, step), line, durable);
}

/** A claimed step's record (null while its server has not written it yet, or never will). */
export async function claimedStep(dir: string, step: number): Promise<StepRecord | null> {
  const text = await readFile(claimFile(dir, step), 'utf8').catch(() => '');
  return text ? parseStep(text) : null;
}

/** Every claimed step's record on storage, by number (claims not written yet are left out). */
export async function claimedSteps(dir: string): Promise<Map<number, StepRecord>> {
  const names = await readdir(join(dir, CLAIMS_DIR)).catch(() => [] as string[]);
  const out = new Map<number, StepRecord>();
  for (const name of names) {
    const n = /^(\d+)\.json$/.exec(name)?.[1];
    const r = n ? await claimedStep(dir, Number(n)) : null;
    if (r && r.step === Number(n)) out.set(r.step, r);
  }
  return out;
}

/** The latest step on storage, whoever recorded it: in steps.jsonl or only in its claim file. */
export async function latestStep(dir: string, stepsFile: string): Promise<StepRecord | null> {
  const inFile = await lastStepOnDisk(stepsFile);
  const names = await readdir(join(dir, CLAIMS_DIR)).catch(() => [] as string[]);
  const numbers = names.map((n) => Number(/^(\d+)\.json$/.exec(n)?.[1] ?? 0)).filter((n) => n > (inFile?.step ?? 0));
  for (const n of numbers.sort((a, b) => b - a)) {
    const r = await claimedStep(dir, n);
    if (r) return r;
  }
  return inFile;
}
