// WebVoyager result folders (task<id>/interact_messages.json + screenshotN.png), read as its harness wrote them.
import { basename, join } from 'node:path';
import { splitThoughtAction } from '../action-text.ts';
import { foreignMeta, foreignStep, numberedFiles, readJson, resolved } from './common.ts';
import type { EpisodeView, StepView } from './view.ts';

type ChatContent = string | { type: string; text?: string; image_url?: { url: string } }[];
interface ChatMessage {
  role: string;
  content: ChatContent;
}

const textOf = (c: ChatContent) =>
  typeof c === 'string' ? c : c.filter((p) => p.type === 'text').map((p) => p.text ?? '').join('\n');

/**
 * The agent's answer as WebVoyager's evaluation/auto_eval.py takes it: only from the last message, only when it
 * holds "Action: ANSWER" (case-sensitive), the text after "ANSWER", separators "; " and an optional "[" skipped, up
 * to the first "]" (so "ANSWER; [4.6 stars]" gives "4.6 stars" and a "]" inside an answer ends it), trimmed.
 * Undefined when the original finds none (it then scores 0 without asking the judge).
 */
export function webVoyagerAnswer(messages: { content: ChatContent }[]): string | undefined {
  if (messages.length <= 1) return undefined;
  const text = textOf(messages[messages.length - 1].content);
  if (!text.includes('Action: ANSWER')) return undefined;
  const m = /ANSWER[; ]+\[?(.[^\]]*)\]?/.exec(text);
  return m ? m[1].trim() : undefined;
}

/**
 * WebVoyager: assistant message k (1-based) was decided on screenshot k; the user message after it carries the
 * environment's feedback for step k (e.g. "The web element you're trying to type may not be a textbox").
 */
export async function readWebVoyager(dir: string, id: string): Promise<EpisodeView> {
  const messages = (await readJson(join(dir, 'interact_messages.json'))) as ChatMessage[];
  const shots = await numberedFiles(dir, /^screenshot(\d+)\.(png|jpe?g|webp)$/i);
  const firstUser = messages.find((m) => m.role === 'user');
  const firstText = firstUser ? textOf(firstUser.content) : '';
  const q = /Now given a task:\s*([\s\S]*?)\s*Please interact with\s+(\S+?)\s+and get the answer/i.exec(firstText);
  const taskId = basename(dir).replace(/^task/, '');
  const steps: StepView[] = [];
  const answer = webVoyagerAnswer(messages);
  messages.forEach((m, i) => {
    if (m.role !== 'assistant') return;
    const k = steps.length + 1;
    const text = textOf(m.content);
    const turn = splitThoughtAction(text);
    const next = messages[i + 1];
    const feedback = next && next.role === 'user' ? /Observation:\s*(?:note:|Note:)\s*([^\n]*)/.exec(textOf(next.content)) : null;
    const after = shots.get(k + 1);
    steps.push(
      foreignStep(k, {
        model_output: text,
        format: 'webvoyager',
        thought: turn.thought,
        action_text: turn.action_text,
        actions: resolved(turn.action),
        frame: after,
        before_frame: shots.get(k),
        parse_error: turn.action_text !== undefined && !turn.action ? `unrecognised action: ${turn.action_text}` : undefined,
        last_action_error: feedback ? { code: 'webvoyager_note', message: feedback[1].trim() } : null,
      }),
    );
  });
  const site = taskId.includes('--') ? taskId.split('--')[0] : '';
  const meta = foreignMeta({
    episode_id: taskId,
    steps: steps.length,
    answer,
    termination: answer !== undefined ? { reason: 'task_completed' } : undefined,
    initial_frame: shots.get(1),
  });
  return {
    id,
    dir,
    layout: 'webvoyager',
    meta,
    task: { id: taskId, question: q ? q[1].trim() : firstText.slice(0, 500), site, suite: 'webvoyager', start_url: q?.[2] },
    initial: { frame: shots.get(1), url: q?.[2] },
    steps,
    damaged_lines: 0,
  };
}
