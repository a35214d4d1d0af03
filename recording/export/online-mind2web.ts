// Online-Mind2Web result layout: <task_id>/result.json + <task_id>/trajectory/NNNN.png, as read by the
// benchmark's auto-eval (OSU-NLP-Group/Online-Mind2Web src/run.py: WebJudge and the other judges).
//
// v2 (`schema_version: "online-mind2web-v2"`): action_history is one object per step
//   { step (== index), screenshot (file name in trajectory/), url, action, action_status, thought (null allowed) };
//   the final entry is "TASK_COMPLETE -> ANSWER: <answer>" and equals agent_final_answer. Each entry's
//   screenshot is the screen the action was decided on, so the final entry shows the end state.
// v1: flat arrays: action_history (strings, terminal action excluded), thoughts, final_result_response; the
//   trajectory holds every frame (initial first), ordered by the number in the file name.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EpisodeView, StepView } from '../reader.ts';
import { describeAction } from '../action-text.ts';
import { ensureDir, exists, ExportError, finalAnswer, isTerminalStep, loadFrame, safeName } from './common.ts';

export const OM2W_V2_FIELDS = ['schema_version', 'task', 'task_id', 'agent_final_answer', 'reference_length', 'action_history'] as const;
export const OM2W_V2_STEP_FIELDS = ['step', 'screenshot', 'url', 'action', 'action_status', 'thought'] as const;
export const OM2W_V1_FIELDS = ['task', 'task_id', 'final_result_response', 'action_history', 'thoughts'] as const;

interface Om2wV2Step {
  step: number;
  screenshot: string;
  url: string;
  action: string;
  action_status: 'SUCCESS' | 'FAILED';
  thought: string | null;
}

export interface Om2wOptions {
  schema?: 'v1' | 'v2';
  /** Replace an existing <task_id> folder (default: refuse, since one task may have several episodes). */
  overwrite?: boolean;
}

const shot = (i: number) => `${String(i).padStart(4, '0')}.png`;

/** One step's action(s) as Online-Mind2Web action text, e.g. "CLICK (640, 180)"; several actions joined by " ; ". */
function stepActionText(s: StepView): string {
  if (s.action_text) return s.action_text;
  if (!s.actions.length) return s.parse_error ? `PARSE_ERROR: ${s.parse_error}` : 'NO_ACTION';
  return s.actions.map((a) => describeAction(a.action, a.css)).join(' ; ');
}

const failed = (s: StepView) => Boolean(s.last_action_error || s.parse_error || s.actions.some((a) => a.error));

export async function exportOnlineMind2Web(view: EpisodeView, outRoot: string, opts: Om2wOptions = {}): Promise<{ dir: string; result: Record<string, unknown> }> {
  const taskId = view.task.id;
  if (!/^[A-Za-z0-9_-]+$/.test(taskId)) {
    // The judges join task_id into paths and some validators reject other characters.
    throw new ExportError(`task id "${taskId}" has characters Online-Mind2Web task ids never have; export Online-Mind2Web tasks only`);
  }
  const dir = join(outRoot, safeName(taskId));
  if (!opts.overwrite && (await exists(join(dir, 'result.json')))) {
    throw new ExportError(`${dir} already holds a result for task ${taskId}; pass overwrite to replace it`);
  }
  await ensureDir(join(dir, 'trajectory'));
  const answer = finalAnswer(view);
  const result = (opts.schema ?? 'v2') === 'v2' ? await writeV2(view, dir, answer) : await writeV1(view, dir, answer);
  await writeFile(join(dir, 'result.json'), JSON.stringify(result, null, 2) + '\n');
  return { dir, result };
}

async function writeV2(view: EpisodeView, dir: string, answer: string) {
  const history: Om2wV2Step[] = [];
  const push = async (frame: string | undefined, s: Omit<Om2wV2Step, 'step' | 'screenshot'>) => {
    if (!frame) throw new ExportError(`episode ${view.id} has a step without a screenshot; Online-Mind2Web needs one per step`);
    const i = history.length;
    await writeFile(join(dir, 'trajectory', shot(i)), await loadFrame(view, frame, 'png'));
    history.push({ step: i, screenshot: shot(i), ...s });
  };
  const steps = view.steps;
  const last = steps.at(-1);
  for (const [i, s] of steps.entries()) {
    const terminal = s === last && isTerminalStep(s);
    await push(s.before_frame ?? s.frame, {
      // The URL of the screen shown (the state before the action), like the screenshot.
      url: (i > 0 ? steps[i - 1].url : view.initial.url) || s.url,
      action: terminal ? `TASK_COMPLETE -> ANSWER: ${answer}` : stepActionText(s),
      action_status: !terminal && failed(s) ? 'FAILED' : 'SUCCESS',
      thought: s.thought ?? null,
    });
  }
  if (!last || !isTerminalStep(last)) {
    // The episode ended without a terminal action (max steps, error): the judge still needs a final entry.
    await push(last?.frame ?? view.initial.frame, {
      url: last?.url ?? view.initial.url ?? '',
      action: `TASK_COMPLETE -> ANSWER: ${answer}`,
      action_status: 'SUCCESS',
      thought: null,
    });
  }
  const ref = view.meta.task?.extra?.reference_length;
  return {
    schema_version: 'online-mind2web-v2',
    task: view.task.question,
    task_id: view.task.id,
    agent_final_answer: answer,
    // The human reference length from the dataset; our own step count only when the task does not carry it.
    reference_length: Number.isInteger(ref) ? (ref as number) : view.steps.length,
    action_history: history,
  };
}

async function writeV1(view: EpisodeView, dir: string, answer: string) {
  const frames = [view.initial.frame, ...view.steps.map((s) => s.frame)].filter((f): f is string => Boolean(f));
  for (const [i, f] of frames.entries()) await writeFile(join(dir, 'trajectory', shot(i)), await loadFrame(view, f, 'png'));
  const acting = view.steps.filter((s) => !isTerminalStep(s));
  return {
    task: view.task.question,
    task_id: view.task.id,
    final_result_response: answer,
    action_history: acting.map(stepActionText),
    thoughts: acting.map((s) => s.thought ?? ''),
  };
}
