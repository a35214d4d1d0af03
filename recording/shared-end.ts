// The end of an episode several servers record (shared-steps.ts): any of them may end it — the one that created it,
// one that served its steps after its creator died, the leader that expired it — so ending is claimed on storage
// like a step number: the server that creates `.ended` exclusively writes the end, the others only close their
// files. Before the end is written, steps.jsonl is made whole from the claim files: every claimed step once, in
// order (a line appended out of order, or clobbered by two NFS clients appending at once, is put back), and the
// claims are removed.
import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { StepRecord } from '../protocol/recording.ts';
import { writeFileAtomic } from './files.ts';
import { CLAIMS_DIR, claimedSteps } from './shared-steps.ts';

export const ENDED_FILE = '.ended';

/** True for the one server that gets to end the episode. */
export async function claimEnd(dir: string): Promise<boolean> {
  try {
    await (await open(join(dir, ENDED_FILE), 'wx')).close();
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Makes steps.jsonl hold every claimed step once, in order (rewritten atomically only when it does not); removes
 * the claims. Resolves with the last step's number. */
export async function settleSteps(dir: string, stepsFile: string): Promise<number> {
  const claimed = await claimedSteps(dir);
  const text = await readFile(stepsFile, 'utf8').catch(() => '');
  const byStep = new Map<number, StepRecord>();
  const numbers: number[] = [];
  let damaged = false;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as StepRecord;
      numbers.push(r.step);
      if (!byStep.has(r.step)) byStep.set(r.step, r);
    } catch {
      damaged = true;
    }
  }
  for (const [n, r] of claimed) byStep.set(n, r);
  const order = [...byStep.keys()].sort((a, b) => a - b);
  const whole = !damaged && numbers.length === order.length && numbers.every((n, i) => n === order[i]);
  if (!whole) await writeFileAtomic(stepsFile, order.map((n) => JSON.stringify(byStep.get(n)) + '\n').join(''));
  await rm(join(dir, CLAIMS_DIR), { recursive: true, force: true });
  return order.at(-1) ?? 0;
}
