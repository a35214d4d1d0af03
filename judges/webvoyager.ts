// WebVoyager auto-evaluation protocol (learned from MinorJerry/WebVoyager evaluation/auto_eval.py; the prompt
// text here is our own):
// - one request: a system message with the judging rules; a user message with the task, the agent's final
//   answer and the number of screenshots, then the last k screenshots oldest first, then a closing text part;
// - k = 15 in the published evaluation runs (--max_attached_imgs), 3 in Orchard-GUI's reward; configurable;
// - an episode without an answer scores 0 without calling the model;
// - the reply: "NOT SUCCESS" → 0, "SUCCESS" → 1 (case-sensitive), neither → None in the original, which leaves the
//   episode out of its rate: outcome `unparsed` here (not retried, not a failure, not a judge_error);
// - the request: temperature 0, max_tokens 1000, seed 42 (the judge config may override or drop temperature and
//   max tokens for reasoning models); screenshots as sent, `<num>` = k as the original fills it.
import type { Verdict } from '../protocol/task.ts';
import type { ChatMessage } from '../vlm-client/client.ts';
import { imagePart, lastK, runProtocol, type LoadedImage } from './base.ts';
import type { JudgeCache } from './cache.ts';
import type { JudgeModel, OriginalParams } from './model.ts';
import { parseSuccessVerdict } from './parse.ts';
import { fill, GROVE_PROMPTS, promptRecord, promptText, type PromptSet } from './prompts.ts';
import type { Judge, JudgeInput } from './types.ts';

/** auto_eval.py calls with seed 42 and temperature 0. */
export const WEBVOYAGER_SEED = 42;
/** auto_eval.py (and DeepShop's copies) send temperature 0 and max_tokens 1000. */
export const WEBVOYAGER_PARAMS: OriginalParams = { temperature: 0, maxTokens: 1000 };

const WEBVOYAGER_SYSTEM = `You are judging whether a web-browsing agent completed a task. You receive:
1. the task instruction, in natural language;
2. the last screenshots of the agent's browsing session, oldest first; they are authentic records of what the browser showed;
3. the agent's final text response, written at the end of the session.

Rules:
- Do not browse or act yourself; judge only from the screenshots and the response.
- Do not assume facts that the screenshots do not show when you compare them with the instruction.
- A task with several parts is completed only when every part is (e.g. finding an item AND reporting its price).
- The response may disagree with the screenshots. When it contradicts a screenshot, the screenshot is right. When it states something the screenshots neither show nor contradict, accept it.

Explain briefly how you reached your judgement, then give the verdict on its own line: SUCCESS or NOT SUCCESS.`;

const WEBVOYAGER_USER = `Task: {task}\nAgent's final response: {answer}\nUp to the last {num} screenshots of the session follow, oldest first:`;
const WEBVOYAGER_CLOSING = 'Your verdict:';

/**
 * The request shared by the WebVoyager protocol and DeepShop's per-dimension judgements (`judge` names the prompt
 * slots): system; user = the filled template, the screenshots, the closing text.
 */
export function successPromptMessages(
  prompts: PromptSet,
  judge: 'webvoyager' | 'deepshop',
  groveSystem: string,
  fields: { task: string; answer: string; num: number },
  images: LoadedImage[],
): ChatMessage[] {
  return [
    { role: 'system', content: promptText(prompts, `${judge}.system`, groveSystem) },
    {
      role: 'user',
      content: [
        { type: 'text', text: fill(promptText(prompts, `${judge}.user`, WEBVOYAGER_USER), fields) },
        ...images.map(imagePart),
        { type: 'text', text: promptText(prompts, `${judge}.closing`, WEBVOYAGER_CLOSING) },
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
  /** Prompt texts (default: Grove's own). */
  prompts?: PromptSet;
}

const hasAnswer = (a: string | undefined): a is string => typeof a === 'string' && a.trim() !== '';

export function createWebVoyagerJudge(opts: WebVoyagerJudgeOptions): Judge {
  const k = opts.k ?? 15;
  const name = opts.name ?? 'webvoyager';
  const prompts = opts.prompts ?? GROVE_PROMPTS;
  return {
    name,
    judge(input: JudgeInput): Promise<Verdict> {
      if (!hasAnswer(input.answer)) {
        // The original returns 0 without a model call when the last message has no ANSWER action.
        return Promise.resolve({
          judge: name,
          outcome: 'failure',
          score: 0,
          reasoning: 'the agent gave no answer',
          details: { predicted_label: 0, no_answer: true, k, prompts: promptRecord(prompts, 'webvoyager').source },
        });
      }
      const answer = input.answer;
      return runProtocol({
        name,
        config: { k },
        prompts: promptRecord(prompts, 'webvoyager'),
        model: opts.model,
        cache: opts.cache,
        input: { ...input, screenshots: lastK(input.screenshots, k) },
        taskKey: { question: input.task.question },
        protocol: async ({ images, transcript }) => {
          const { value, text } = await opts.model.call({
            purpose: 'verdict',
            messages: successPromptMessages(prompts, 'webvoyager', WEBVOYAGER_SYSTEM, { task: input.task.question, answer, num: k }, images),
            parse: parseSuccessVerdict,
            transcript,
            params: WEBVOYAGER_PARAMS,
            extra: { seed: WEBVOYAGER_SEED },
          });
          if (value === null) {
            // auto_eval.py: None, left out of the success rate.
            return { judge: name, outcome: 'unparsed', reasoning: text, details: { predicted_label: null, unparsed: true, k, images_sent: images.length } };
          }
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

