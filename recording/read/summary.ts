// One runs-list row of an episode: status, steps, reward or the verdicts' agreement, errors, no-op steps, thumbnail.
import type { Verdict } from '../../protocol/task.ts';
import type { EpisodeSummary, EpisodeView, Layout, StepView, VerdictSummary } from './view.ts';

/**
 * `action`: the step failed at its own doing — the output did not parse or one of its actions failed (foreign
 * layouts carry no per-action errors: their step note is the action's). `environment`: the actions ran without
 * error but the environment reported a problem with the step (a crashed page, an observation that failed, a
 * dialog or download event that was pending); null when neither.
 */
export function stepErrorKind(s: Pick<StepView, 'parse_error' | 'actions' | 'last_action_error'>, layout: Layout): 'action' | 'environment' | null {
  if (s.parse_error || s.actions.some((a) => a.error)) return 'action';
  if (!s.last_action_error) return null;
  return layout === 'grove' ? 'environment' : 'action';
}

function verdictSummary(verdicts: Verdict[]): VerdictSummary {
  if (!verdicts.length) return 'none';
  const real = verdicts.filter((v) => v.outcome !== 'judge_error');
  if (!real.length) return 'judge_error';
  if (real.every((v) => v.outcome === 'success')) return 'success';
  if (real.every((v) => v.outcome === 'failure')) return 'failure';
  return 'mixed';
}

export function summarise(v: EpisodeView): EpisodeSummary {
  const verdict = verdictSummary(v.meta.verdicts);
  const success =
    v.meta.reward !== undefined ? v.meta.reward > 0 : verdict === 'success' ? true : verdict === 'failure' ? false : null;
  const started = Date.parse(v.meta.started_at);
  const finished = v.meta.finished_at ? Date.parse(v.meta.finished_at) : NaN;
  const last = [...v.steps].reverse().find((s) => s.frame)?.frame ?? v.initial.frame;
  return {
    id: v.id,
    layout: v.layout,
    episode_id: v.meta.episode_id,
    run_id: v.meta.run_id,
    task_id: v.task.id,
    suite: v.task.suite,
    site: v.task.site,
    level: v.task.level,
    question: v.task.question,
    status: v.meta.status,
    steps: v.steps.length,
    termination: v.meta.termination?.reason,
    reward: v.meta.reward,
    success,
    verdict,
    started_at: v.meta.started_at || undefined,
    duration_ms: Number.isFinite(started) && Number.isFinite(finished) ? finished - started : undefined,
    noops: v.steps.filter((s) => s.diff?.noop).length,
    // Steps that failed at their own doing (the timeline's ✖); environment problems of a step are not counted.
    errors: v.steps.filter((s) => stepErrorKind(s, v.layout) === 'action').length,
    answer: v.meta.answer,
    thumb: last,
  };
}
