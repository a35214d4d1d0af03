// The LLM judge for Claw tasks' free-text rubrics (reply drafts, notes): the model reads the request, the
// rubric, the agent's answer, its tool calls and the records it wrote, and answers a score in [0, 1].
// It fits claw-env's ClawJudge hook (structurally: judges/ does not import claw-env).
import type { JudgeModel } from './model.ts';

export interface ClawJudgeRequest {
  task_id: string;
  prompt: string;
  rubric: string;
  answer: string;
  actions: string;
  outputs: string;
}

const SYSTEM =
  'You grade a personal assistant\'s work for a user. You get the user\'s request, a rubric, what the assistant ' +
  'said, the tool calls it made, and the records it created or changed (mail, events, documents...). Judge only ' +
  'against the rubric. End your reply with a line "SCORE: <number between 0 and 1>".';

export function parseClawScore(text: string): number | null {
  const m = /SCORE:\s*([01](?:\.\d+)?|\.\d+)\s*$/im.exec(text.trim());
  if (!m) return null;
  const v = Number(m[1]);
  return v >= 0 && v <= 1 ? v : null;
}

/** A ClawJudge over a judge model. A reply without a score scores 0 (the reason says so). */
export function clawJudge(model: JudgeModel): (req: ClawJudgeRequest) => Promise<{ score: number; reason: string }> {
  return async (req) => {
    const user = [`# Request\n${req.prompt}`, `# Rubric\n${req.rubric}`, `# Assistant's answer\n${req.answer || '(none)'}`, `# Tool calls\n${req.actions || '(none)'}`, `# Records created or changed\n${req.outputs || '(none)'}`].join('\n\n');
    const { value, text } = await model.call({
      purpose: `claw rubric ${req.task_id}`,
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: user },
      ],
      parse: parseClawScore,
      params: { temperature: 0, maxTokens: 512 },
    });
    if (value === null) return { score: 0, reason: `judge gave no score: ${text.slice(0, 200)}` };
    return { score: value, reason: text.replace(/SCORE:.*$/im, '').trim().slice(0, 1000) || `score ${value}` };
  };
}
