// One episode recorded by several servers: kubernetes orchestrator replicas mounting one recordings volume, each
// appending the steps it serves to the same steps.jsonl (recorder.ts, option `shared`). The steps on storage are the
// sequence: a step's number is the last one written + 1, and its visual diff compares with that step's frame, so
// steps alternating between replicas make one episode numbered 1, 2, 3, ... A step's answer waits for its record
// (the step route awaits its hooks), so a client's next step, through whichever replica, sees it. (Two clients
// stepping one sandbox through two replicas at the same moment could get the same number; the worker runs a
// sandbox's steps one at a time anyway.)
import { open } from 'node:fs/promises';
import type { StepRecord } from '../protocol/recording.ts';

/** Bytes read from the end of steps.jsonl to find its last line (the whole file when one line is longer). */
const TAIL = 256 * 1024;

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

/** The last complete step line of a steps.jsonl (null when none; a torn last line is skipped, as readers do). */
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

function lastParsed(text: string, whole: boolean): StepRecord | null {
  const lines = text.split('\n');
  // The first line of a tail may be cut: it counts only when the tail is the whole file.
  for (let i = lines.length - 1; i >= (whole ? 0 : 1); i--) {
    const line = lines[i]!.trim();
    if (!line) continue;
    try {
      const r = JSON.parse(line) as StepRecord;
      if (typeof r?.step === 'number' && Array.isArray(r.actions)) return r;
    } catch {
      // torn by a crash: the line before counts
    }
  }
  return null;
}
