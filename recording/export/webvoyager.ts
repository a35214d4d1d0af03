// WebVoyager result layout: task<id>/interact_messages.json + screenshot<k>.png, as read by WebVoyager's
// evaluation/auto_eval.py: message 1 holds "Now given a task: <q>  Please interact with <url> and get the answer",
// the last message is the assistant's "Action: ANSWER; <answer>", and the judge attaches the last screenshots.
// screenshot<k> is the screen the k-th assistant turn was decided on (k from 1).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EpisodeView, StepView } from '../reader.ts';
import { printWebVoyagerAction } from '../action-text.ts';
import { ensureDir, exists, ExportError, loadFrame, safeName } from './common.ts';

export interface WebVoyagerMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

const SYSTEM =
  'This trajectory was recorded by Grove and exported in the WebVoyager result layout. Each assistant turn gives ' +
  'a Thought and an Action; Observation turns stand for the screenshot of that turn (screenshot<k>.png).';

function assistantText(s: StepView): string {
  // Keep a WebVoyager-format model output verbatim: it is exactly what the judge expects.
  if (s.format === 'webvoyager' && s.model_output) return s.model_output;
  const action = s.actions.length ? s.actions.map((a) => printWebVoyagerAction(a.action, a.css)).join('; ') : (s.action_text ?? 'Wait');
  return `Thought: ${s.thought ?? ''}\n\nAction: ${action}`;
}

export async function exportWebVoyager(view: EpisodeView, outRoot: string, opts: { overwrite?: boolean } = {}): Promise<{ dir: string; messages: WebVoyagerMessage[] }> {
  const dir = join(outRoot, `task${safeName(view.task.id)}`);
  if (!opts.overwrite && (await exists(join(dir, 'interact_messages.json')))) {
    throw new ExportError(`${dir} already holds a result for task ${view.task.id}; pass overwrite to replace it`);
  }
  await ensureDir(dir);
  const url = view.task.start_url ?? view.initial.url ?? '';
  const messages: WebVoyagerMessage[] = [{ role: 'system', content: SYSTEM }];
  let k = 0;
  for (const [i, s] of view.steps.entries()) {
    const frame = s.before_frame ?? s.frame;
    if (frame) await writeFile(join(dir, `screenshot${++k}.png`), await loadFrame(view, frame, 'png'));
    const prev = view.steps[i - 1];
    const note = prev?.last_action_error ? `note: ${prev.last_action_error.message}\n` : '';
    const obs = `Observation: ${note}A screenshot of the page (screenshot${k}.png).`;
    messages.push({
      role: 'user',
      content: i === 0 ? `Now given a task: ${view.task.question}  Please interact with ${url} and get the answer. ${obs}` : obs,
    });
    messages.push({ role: 'assistant', content: assistantText(s) });
  }
  await writeFile(join(dir, 'interact_messages.json'), JSON.stringify(messages, null, 2));
  return { dir, messages };
}
