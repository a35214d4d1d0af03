// Verdicts `grove judge` wrote as records (judges/base.ts: `<record folder>/<judge>.json`, the verdict with its
// details — key points, per-image scores, kept screenshots, reasoning, score), read with the episode so the viewer
// shows them. Records live beside a Grove episode (`<episode>/judge/`), and for every layout under the judge's
// output folder (`grove judge --out OUT`: `OUT/records/<episode id>/`, judges/run.ts; the id is the episode's folder
// relative to the judged folder, `_root` for the folder itself).
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Verdict as VerdictSchema, type Verdict } from '../../protocol/task.ts';
import { readJson } from './common.ts';

/** Where `grove judge --out OUT` puts the records of the episode with this id. */
export function judgeRecordDir(out: string, id: string): string {
  return join(out, 'records', id === '.' ? '_root' : id);
}

/** The verdicts recorded in `dir` for judges `have` does not already hold (one per judge, by file name order). */
export async function recordVerdicts(dir: string, have: Verdict[]): Promise<Verdict[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const out: Verdict[] = [];
  for (const n of names.filter((x) => x.endsWith('.json')).sort()) {
    const rec = (await readJson(join(dir, n)).catch(() => undefined)) as { verdict?: unknown } | undefined;
    const v = VerdictSchema.safeParse(rec?.verdict);
    if (v.success && !have.some((h) => h.judge === v.data.judge) && !out.some((o) => o.judge === v.data.judge)) out.push(v.data);
  }
  return out;
}
