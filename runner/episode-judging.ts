// Judging one benchmark episode: what the judges see (judgeInput), their verdicts (judgeEpisode) and the
// episode's success (successFrom).
import { join } from 'node:path';
import type { Task, Verdict } from '../protocol/task.ts';
import { imageMimeOf } from '../protocol/image.ts';
import type { Judge, JudgeInput, ScreenshotRef } from '../judges/types.ts';
import { judgedHistory } from '../judges/history.ts';
import type { EpisodeOutcome } from './episode.ts';
import { INFRA_REASONS } from './summary.ts';
import type { EpisodeResult } from './types.ts';

/**
 * Success of one episode. Infra failures → null (never the model's fault). With judges, the primary (first)
 * verdict decides and judge_error → null (reported apart); an episode that was not judged (no answer) is a
 * failure. Without judges, ending with an answer/terminate counts as success.
 */
export function successFrom(verdicts: Verdict[], r: Pick<EpisodeResult, 'termination'>, haveJudges: boolean): boolean | null {
  if (INFRA_REASONS.has(r.termination.reason)) return null;
  if (!haveJudges) return r.termination.reason === 'task_completed';
  const primary = verdicts[0];
  if (!primary) return false;
  if (primary.outcome === 'judge_error' || primary.outcome === 'unparsed') return null;
  return primary.outcome === 'success';
}

/** What judges see of an episode: answer, action history, screenshots (in memory or recorded), state. */
export async function judgeInput(
  task: Task,
  o: EpisodeOutcome,
  episodeDir: string,
  sessionId: string,
  state?: (task: Task, sessionId: string) => Promise<unknown>,
): Promise<JudgeInput> {
  const shot = (s: { mime: string; base64: string } | undefined, frame: string | undefined): ScreenshotRef | undefined =>
    s ? { bytes: Buffer.from(s.base64, 'base64'), mime: s.mime } : frame ? { path: join(episodeDir, frame), mime: imageMimeOf(frame, 'image/jpeg') } : undefined;
  // The same frames and action texts `grove judge` derives from the recording (judges/history.ts).
  const { frames: screenshots, actions } = judgedHistory(
    shot(o.initial?.screenshot, o.initial?.frame),
    o.trajectory.map((t) => ({
      actions: t.actions.map((action, i) => ({ action, css: t.css?.[i] })),
      parse_error: t.parse_error,
      frame: shot(t.screenshot, t.frame),
    })),
    () => false,
  );
  return {
    task,
    answer: o.result.answer,
    screenshots,
    actions,
    thoughts: o.trajectory.map((t) => t.thought ?? ''),
    episodeDir,
    state: state ? await state(task, sessionId) : undefined,
  };
}

export interface JudgingOptions {
  judges?: Judge[];
  judgeState?: (task: Task, sessionId: string) => Promise<unknown>;
  judgeAll?: boolean;
}

/**
 * The verdicts of every judge on a finished episode, in judge order; none for infra failures, nor (without
 * judgeAll) for episodes that did not end with an answer. A judge that fails gives a judge_error verdict.
 */
export async function judgeEpisode(task: Task, o: EpisodeOutcome, episodeDir: string, sessionId: string, opts: JudgingOptions): Promise<Verdict[]> {
  const judged = !INFRA_REASONS.has(o.result.termination.reason) && (o.result.termination.reason === 'task_completed' || !!opts.judgeAll);
  const verdicts: Verdict[] = [];
  if (!judged || !opts.judges?.length) return verdicts;
  let input: JudgeInput | undefined;
  let inputError = '';
  try {
    input = await judgeInput(task, o, episodeDir, sessionId, opts.judgeState);
  } catch (err) {
    inputError = `could not gather the judge input: ${err instanceof Error ? err.message : String(err)}`;
  }
  for (const j of opts.judges) {
    try {
      if (!input) throw new Error(inputError);
      verdicts.push(await j.judge(input));
    } catch (err) {
      verdicts.push({ judge: j.name, outcome: 'judge_error', reasoning: err instanceof Error ? err.message : String(err) });
    }
  }
  return verdicts;
}
