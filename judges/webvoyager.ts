// WebVoyager auto-evaluation protocol (learned from MinorJerry/WebVoyager evaluation/auto_eval.py; the prompt
// text here is our own):
// - one request: a system message with the judging rules; a user message with the task, the agent's final
//   answer and the number of screenshots, then the last k screenshots oldest first, then a closing text part;
// - k = 15 in the published evaluation runs (--max_attached_imgs), 3 in Orchard-GUI's reward; configurable;
// - an episode without an answer scores 0 without calling the model;
// - the reply: "NOT SUCCESS" → 0, "SUCCESS" → 1, neither → no verdict (judge_error here, retried first);
// - temperature 0, seed 42, max_tokens 1000 in the original (max_tokens here: the judge config, default 1024).
import type { Verdict } from '../protocol/task.ts';
import type { ChatMessage } from '../vlm-client/client.ts';
import { imagePart, lastK, runProtocol, type LoadedImage } from './base.ts';
import type { JudgeCache } from './cache.ts';
import type { JudgeModel } from './model.ts';
import { parseSuccessVerdict } from './parse.ts';
import type { Judge, JudgeInput } from './types.ts';

/** auto_eval.py calls with seed 42 and temperature 0. */
export const WEBVOYAGER_SEED = 42;

export const WEBVOYAGER_SYSTEM = `You are judging whether a web-browsing agent completed a task. You receive:
1. the task instruction, in natural language;
2. the last screenshots of the agent's browsing session, oldest first; they are authentic records of what the browser showed;
3. the agent's final text response, written at the end of the session.

Rules:
- Do not browse or act yourself; judge only from the screenshots and the response.
- Do not assume facts that the screenshots do not show when you compare them with the instruction.
- A task with several parts is completed only when every part is (e.g. finding an item AND reporting its price).
- The response may disagree with the screenshots. When it contradicts a screenshot, the screenshot is right. When it states something the screenshots neither show nor contradict, accept it.

Explain briefly how you reached your judgement, then give the verdict on its own line: SUCCESS or NOT SUCCESS.`;

/** The user turn shared by the WebVoyager protocol and DeepShop's per-dimension judgements. */
export function successPromptMessages(system: string, instruction: string, answer: string, images: LoadedImage[]): ChatMessage[] {
  return [
    { role: 'system', content: system },
    {
      role: 'user',
      content: [
        { type: 'text', text: `Task: ${instruction}\nAgent's final response: ${answer}\nThe last ${images.length} screenshot(s) of the session, oldest first:` },
        ...images.map(imagePart),
        { type: 'text', text: 'Your verdict:' },
      ],
    },
  ];
}

export interface WebVoyagerJudgeOptions {
  model: JudgeModel;
  /** Screenshots sent: the last k (15 as the original evaluation, 3 as Orchard-GUI's reward). */
  k?: number;
  cache?: JudgeCache;
  name?: string;
}

const hasAnswer = (a: string | undefined): a is string => typeof a === 'string' && a.trim() !== '';

export function createWebVoyagerJudge(opts: WebVoyagerJudgeOptions): Judge {
  const k = opts.k ?? 15;
  const name = opts.name ?? 'webvoyager';
  return {
    name,
    judge(input: JudgeInput): Promise<Verdict> {
      if (!hasAnswer(input.answer)) {
        // The original returns 0 without a model call when the last message has no ANSWER action.
        return Promise.resolve({ judge: name, outcome: 'failure', score: 0, reasoning: 'the agent gave no answer', details: { predicted_label: 0, no_answer: true, k } });
      }
      const answer = input.answer;
      return runProtocol({
        name,
        config: { k },
        model: opts.model,
        cache: opts.cache,
        input: { ...input, screenshots: lastK(input.screenshots, k) },
        taskKey: { question: input.task.question },
        protocol: async ({ images, transcript }) => {
          const { value, text } = await opts.model.call({
            purpose: 'verdict',
            messages: successPromptMessages(WEBVOYAGER_SYSTEM, input.task.question, answer, images),
            parse: parseSuccessVerdict,
            transcript,
            extra: { seed: WEBVOYAGER_SEED },
          });
          return {
            judge: name,
            outcome: value === 1 ? 'success' : 'failure',
            score: value,
            reasoning: text,
            details: { predicted_label: value, k, images_sent: images.length },
          };
        },
      });
    },
  };
}

