// DeepShop evaluation (learned from youganglyu/DeepShop src/evaluation/auto_eval_{attribute,filter,sort}.py and
// strict_rule_eval_overall.py; the prompt text here is our own):
// - one WebVoyager-style judgement per present dimension (attribute, filter, sort; "None" = absent), where the
//   dimension's text takes the place of the task, with the agent's answer and the last k = 15 screenshots;
// - no answer → every present dimension scores 0 without a model call;
// - a reply without "SUCCESS"/"NOT SUCCESS" scores that dimension 0 (the DeepShop scripts append 0, unlike
//   WebVoyager's auto_eval which returns None): a failure here, marked `unparsed` in the details;
// - the request as WebVoyager's: temperature 0, max_tokens 1000, seed 42;
// - overall success = every present dimension passes (a task with none present counts as success, as the
//   original's product over present dimensions does);
// - per-dimension rates are computed over the tasks where that dimension is present (see report.ts).
import type { Verdict } from '../protocol/task.ts';
import { presentDimensions, type DeepShopDimension } from '../tasks/deepshop.ts';
import { lastK, runProtocol } from './base.ts';
import type { JudgeCache } from './cache.ts';
import type { JudgeModel } from './model.ts';
import { parseSuccessVerdict } from './parse.ts';
import { JudgeError, judgeErrorVerdict, type Judge, type JudgeInput } from './types.ts';
import { GROVE_PROMPTS, promptRecord, type PromptSet } from './prompts.ts';
import { successPromptMessages, WEBVOYAGER_PARAMS, WEBVOYAGER_SEED } from './webvoyager.ts';

const DEEPSHOP_SYSTEM = `You are judging one requirement of an online-shopping task performed by a web agent. The requirement concerns either product attributes (e.g. brand, colour, size, features), search filters (e.g. price range, customer rating, shipping, release date) or a sorting preference (e.g. lowest price, newest arrivals, best sellers).

You receive the requirement, the last screenshots of the agent's session (oldest first, authentic) and the agent's final text response.

Rules:
- Do not browse or act yourself; judge only from the screenshots and the response.
- Do not assume facts that the screenshots do not show.
- A requirement with several parts is met only when every part is.
- When the response contradicts a screenshot, the screenshot is right; when it states something the screenshots neither show nor contradict, accept it.

Explain briefly how you reached your judgement, then give the verdict on its own line: SUCCESS or NOT SUCCESS.`;

type DimensionResult = 0 | 1 | null | 'judge_error';

export function createDeepShopJudge(opts: { model: JudgeModel; k?: number; cache?: JudgeCache; name?: string; prompts?: PromptSet }): Judge {
  const k = opts.k ?? 15;
  const name = opts.name ?? 'deepshop';
  const prompts = opts.prompts ?? GROVE_PROMPTS;
  return {
    name,
    judge(input: JudgeInput): Promise<Verdict> {
      if (!['attribute', 'filter', 'sort'].some((d) => d in input.task.extra)) {
        // Without the task row's dimensions the vacuous "all present pass" would score success: refuse instead.
        return Promise.resolve(
          judgeErrorVerdict(name, new JudgeError('bad_input', `task ${input.task.id} has no DeepShop attribute/filter/sort fields (load it from the DeepShop task file, e.g. grove judge --tasks)`)),
        );
      }
      const present = presentDimensions(input.task);
      const dimensions: Record<DeepShopDimension, DimensionResult> = { attribute: null, filter: null, sort: null };
      const answer = input.answer?.trim() ? input.answer : undefined;
      if (!answer || present.length === 0) {
        for (const d of present) dimensions[d.dimension] = 0;
        const ok = present.length === 0;
        return Promise.resolve({
          judge: name,
          outcome: ok ? 'success' : 'failure',
          score: ok ? 1 : 0,
          reasoning: ok ? 'the task has no attribute, filter or sort requirement' : 'the agent gave no answer',
          details: { dimensions, predicted_label: ok ? 1 : 0, no_answer: !answer, k },
        });
      }
      return runProtocol({
        name,
        config: { k },
        prompts: promptRecord(prompts, 'deepshop'),
        model: opts.model,
        cache: opts.cache,
        input: { ...input, screenshots: lastK(input.screenshots, k) },
        taskKey: Object.fromEntries(present.map((d) => [d.dimension, d.text])),
        protocol: async ({ images, transcript }) => {
          const responses: Record<string, string> = {};
          const errors: Record<string, string> = {};
          const unparsed: string[] = [];
          let errorKind: string | undefined;
          await Promise.all(
            present.map(async (d) => {
              try {
                const r = await opts.model.call({
                  purpose: `dimension ${d.dimension}`,
                  messages: successPromptMessages(prompts, 'deepshop', DEEPSHOP_SYSTEM, { task: d.text, answer, num: k }, images),
                  parse: parseSuccessVerdict,
                  transcript,
                  params: WEBVOYAGER_PARAMS,
                  extra: { seed: WEBVOYAGER_SEED },
                });
                if (r.value === null) unparsed.push(d.dimension);
                dimensions[d.dimension] = r.value ?? 0;
                responses[d.dimension] = r.text;
              } catch (err) {
                if (!(err instanceof JudgeError)) throw err;
                dimensions[d.dimension] = 'judge_error';
                errors[d.dimension] = `${err.kind}: ${err.message}`;
                errorKind ??= err.kind;
              }
            }),
          );
          const details = { dimensions, responses, k, images_sent: images.length, ...(unparsed.length ? { unparsed: true, unparsed_dimensions: unparsed } : {}) };
          if (Object.keys(errors).length) {
            // One dimension that could not be asked leaves the overall outcome unknown; the others are kept.
            return {
              judge: name,
              outcome: 'judge_error',
              reasoning: Object.values(errors).join('; '),
              details: { ...details, errors, error_kind: errorKind },
            };
          }
          const ok = present.every((d) => dimensions[d.dimension] === 1);
          return {
            judge: name,
            outcome: ok ? 'success' : 'failure',
            score: ok ? 1 : 0,
            reasoning: present.map((d) => `${d.dimension}: ${dimensions[d.dimension] === 1 ? 'SUCCESS' : 'NOT SUCCESS'}`).join('; '),
            details: { ...details, predicted_label: ok ? 1 : 0 },
          };
        },
      });
    },
  };
}
