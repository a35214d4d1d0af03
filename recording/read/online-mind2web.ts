// Online-Mind2Web result folders (<task_id>/result.json + trajectory/*, schema v1 or v2), with the judge's verdict
// when result.json carries one.
import { basename, join } from 'node:path';
import type { ResolvedAction } from '../../protocol/observation.ts';
import type { Verdict } from '../../protocol/task.ts';
import { foreignMeta, foreignStep, numberedFiles, readJson, resolved, withBeforeFrames } from './common.ts';
import type { EpisodeView, StepView } from './view.ts';

/**
 * Online-Mind2Web action text with page coordinates — "CLICK (640, 180)" (Grove's export), "CLICK coords(640, 180)"
 * and the like — as a canonical action in page pixels, for the overlay. Element-only forms ("<button> -> CLICK")
 * have no position and give none.
 */
function parseOm2wAction(text: string): ResolvedAction['action'] | undefined {
  const m = /\b(CLICK|DOUBLE_CLICK|RIGHT_CLICK|HOVER)\b[^(]*?(?:coords?)?\((-?\d+(?:\.\d+)?),\s*(-?\d+(?:\.\d+)?)\)/i.exec(text);
  if (!m) return undefined;
  const x = Number(m[2]);
  const y = Number(m[3]);
  const kind = m[1].toUpperCase();
  if (kind === 'DOUBLE_CLICK') return { action: 'double_click', x, y, space: 'css_px' };
  if (kind === 'RIGHT_CLICK') return { action: 'right_click', x, y, space: 'css_px' };
  if (kind === 'HOVER') return { action: 'hover', x, y, space: 'css_px' };
  return { action: 'click', x, y, space: 'css_px' };
}

interface Om2wV2Step {
  step?: number;
  screenshot?: string;
  url?: string | null;
  action?: string;
  action_status?: string | null;
  thought?: string | null;
}

/** Online-Mind2Web: each action_history entry is one step; its screenshot is the screen after it. */
export async function readOnlineMind2Web(dir: string, id: string): Promise<EpisodeView> {
  const r = (await readJson(join(dir, 'result.json'))) as Record<string, unknown>;
  const isV2 = r.schema_version === 'online-mind2web-v2';
  const taskId = String(r.task_id ?? basename(dir));
  const steps: StepView[] = [];
  let initialFrame: string | undefined;
  let answer: string | undefined;
  if (isV2) {
    // v2: each entry's screenshot is the screen its action was taken on (recording/export/online-mind2web.ts writes
    // it so): that is the step's before_frame, and the next entry's screenshot is the screen after it.
    const hist = (r.action_history as Om2wV2Step[] | undefined) ?? [];
    const shotOf = (h: Om2wV2Step | undefined) => (h?.screenshot ? `trajectory/${h.screenshot}` : undefined);
    initialFrame = shotOf(hist[0]);
    hist.forEach((h, i) => {
      steps.push(
        foreignStep(i + 1, {
          action_text: h.action,
          actions: resolved(parseOm2wAction(h.action ?? '')),
          thought: h.thought ?? undefined,
          url: h.url ?? '',
          before_frame: shotOf(h),
          frame: shotOf(hist[i + 1]) ?? shotOf(h),
          last_action_error: h.action_status && /fail/i.test(h.action_status) ? { code: 'action_failed', message: h.action_status } : null,
        }),
      );
    });
    answer = typeof r.agent_final_answer === 'string' ? r.agent_final_answer : undefined;
  } else {
    const actions = (r.action_history as string[] | undefined) ?? [];
    const thoughts = (r.thoughts as (string | null)[] | undefined) ?? [];
    const images = [...(await numberedFiles(join(dir, 'trajectory'), /^\D*(\d+).*\.(png|jpe?g|webp)$/i)).entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([, n]) => `trajectory/${n}`);
    // One more image than actions: the first one is the start page.
    const offset = images.length > actions.length ? 1 : 0;
    if (offset) initialFrame = images[0];
    const n = Math.max(actions.length, images.length - offset);
    for (let i = 0; i < n; i++) {
      steps.push(foreignStep(i + 1, { action_text: actions[i], actions: resolved(parseOm2wAction(actions[i] ?? '')), thought: thoughts[i] ?? undefined, frame: images[i + offset] }));
    }
    answer = typeof r.final_result_response === 'string' ? r.final_result_response : undefined;
  }
  const views = isV2 ? steps : withBeforeFrames(steps, initialFrame);
  const verdicts: Verdict[] = [];
  if (typeof r.predicted_label === 'number') {
    verdicts.push({
      judge: 'online-mind2web',
      outcome: r.predicted_label === 1 ? 'success' : 'failure',
      reasoning: typeof (r.evaluation_details as { response?: unknown } | undefined)?.response === 'string'
        ? String((r.evaluation_details as { response: string }).response)
        : undefined,
    });
  }
  const meta = foreignMeta({
    episode_id: taskId,
    steps: steps.length,
    answer,
    verdicts,
    termination: answer ? { reason: 'task_completed' } : undefined,
    initial_frame: initialFrame,
  });
  return {
    id,
    dir,
    layout: 'online-mind2web',
    meta,
    task: {
      id: taskId,
      question: String(r.task ?? r.confirmed_task ?? ''),
      site: String(r.website ?? ''),
      suite: 'online-mind2web',
      level: typeof r.level === 'string' ? r.level : undefined,
    },
    initial: { frame: initialFrame },
    steps: views,
    damaged_lines: 0,
    schema: isV2 ? 'v2' : 'v1',
  };
}
