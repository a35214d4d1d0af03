// Online-Mind2Web judges (learned from OSU-NLP-Group/Online-Mind2Web src/run.py, src/utils.py and
// src/methods/webjudge_online_mind2web.py / automomous_eval.py; the prompt text here is our own).
//
// WebJudge, three stages:
//  1. key points from the task text alone;
//  2. every screenshot scored 1-5 against the task and key points, all in parallel (bounded by the judge
//     endpoint's concurrency); a screenshot is kept when its score >= threshold (default 3, run.py
//     --score_threshold), and at most 50 are kept (MAX_IMAGE); an unparsable score counts 0;
//  3. the outcome from task, key points, the numbered action history and the kept screenshots with their
//     reasons (when none is kept, the screenshot section is left out) → "Status: success|failure".
// Result fields match the original output lines: predicted_label, key_points, image_judge_record
// ([{Response, Score}]), evaluation_details {response, predicted_label}, input_text, system_msg.
//
// Autonomous eval: one request with task, action history and the last screenshot → "Status:".
//
// Both: a reply without "Status:" counts 0 as in utils.py extract_predication (a failure, marked unparsed); images
// are re-encoded to JPEG and sent with detail "high" (utils.py encode_image); every request is sent as
// OpenaiEngine.generate sends it: temperature 0, max_tokens 512 (the judge config may override or drop them — o4-mini,
// the README's recommended judge, rejects both). The action history is given without the final answer step (run.py
// drops it; the README: "include only factual actions, not agent outputs").
import type { Verdict } from '../protocol/task.ts';
import type { ChatMessage, ContentPart } from '../vlm-client/client.ts';
import { jpegImagePart, lastK, runProtocol } from './base.ts';
import type { JudgeCache } from './cache.ts';
import type { JudgeModel, OriginalParams } from './model.ts';
import { parseImageScore, parseKeyPoints, parseStatusVerdict, type ImageScore } from './parse.ts';
import { fill, GROVE_PROMPTS, promptRecord, promptText, type PromptSet } from './prompts.ts';
import type { Judge, JudgeInput } from './types.ts';

const WEBJUDGE_MAX_IMAGES = 50;
/** OpenaiEngine.generate's defaults, used by every stage. */
const ONLINE_MIND2WEB_PARAMS: OriginalParams = { temperature: 0, maxTokens: 512 };

const KEY_POINTS_USER = 'Task: {task}';
const IMAGE_USER = 'Task: {task}\n\nKey points for completing the task:\n{key_points}\n\nThe screenshot of the web page follows.';
const OUTCOME_USER = `User task: {task}\n\nKey points:\n{key_points}\n\nAction history:\n{last_actions}\n\nScreenshots from the agent's session that may matter, and why each was selected:\n{thoughts}`;
const OUTCOME_USER_NO_IMAGES = 'User task: {task}\n\nKey points:\n{key_points}\n\nAction history:\n{last_actions}';
const AUTONOMOUS_USER = 'User task: {task}\n\nAction history:\n{last_actions}\n\nThe last screenshot of the session follows.';

export const KEY_POINTS_SYSTEM = `You analyse a task given to a web agent and list its key points: the requirements the task states explicitly.

- Use only what the task states; do not infer or add requirements.
- Superlatives and orderings (cheapest, lowest, highest, highest-rated, best, latest, newest, most recent, closest, largest) must be met with the site's sort or filter function; phrase such a point as that operation, e.g. "Sort by price: low to high".

Reply with "**Key Points**:" followed by a numbered list, one key point per line, without explanations.`;

export const IMAGE_SYSTEM = `You decide whether one screenshot from a web agent's session shows evidence that matters for judging the task.

1. Describe the screenshot: the page, visible text, selections, applied filters or sorting, results.
2. Decide whether it shows steps, progress or information needed to satisfy the key points (actions taken, filters applied, results or details the task asks for). Partial but relevant evidence still counts.

Reply in this format:
**Reasoning**: <one paragraph>
**Score**: <a number from 1 to 5>
where 1 = nothing relevant; 2 = little or ambiguous information, unlikely to matter; 3 = some relevant steps or hints, but unclear or incomplete; 4 = important, highly relevant evidence, though not complete; 5 = clearly shows steps or evidence crucial to completing the task.`;

export const OUTCOME_SYSTEM = `You judge whether a web navigation agent completed a user's task. You receive the task, its key points, the agent's action history and, when available, screenshots from its session that may matter together with why each was selected.

Apply these rules strictly:
1. Filters must visibly take effect. A filter that was not selected, not confirmed or shows no effect on the results means failure.
2. Check every key point against the screenshots and actions. Orderings and superlatives (best, highest, cheapest, latest, most recent, lowest, closest, highest-rated, largest, newest) must be applied with the site's sort or filter function.
3. Requirements that the site lets you set as filters must be set as filters; typing every requirement into the search box is a failure, because the results are then not guaranteed to meet them.
4. A required range (price, years, number of beds or bathrooms, ...) must match the applied filter exactly: neither broader nor narrower. For example, "under $50" filtered as "under $25", "$1500-$2500" filtered as "$2000-$2500", or "exactly 2 beds" filtered as "2+ beds" are failures.
5. Some tasks are complete only after a submission or once the results are displayed.
6. If the agent performed the required actions correctly but the site returned nothing (e.g. no match found), that is still a success.
7. If the page already lists every available item, no filter is needed: picking the items that meet the requirement (e.g. the cheapest) is a success.

Reply in exactly two lines:
Thoughts: <your reasoning, checking each key point and rule>
Status: "success" or "failure"`;

const AUTONOMOUS_SYSTEM = `You judge whether a web navigation agent completed a user's task, from the task, the agent's action history and the final state of the browser (the last screenshot). Check that every requirement of the task is met by the actions and visible in the final state; a partially completed task is a failure.

Reply in exactly two lines:
Thoughts: <your reasoning>
Status: "success" or "failure"`;

export interface WebJudgeOptions {
  model: JudgeModel;
  /** Keep screenshots scoring >= threshold (1-5, default 3). */
  scoreThreshold?: number;
  /** At most this many kept screenshots go to the outcome stage (default 50, the original's MAX_IMAGE). */
  maxImages?: number;
  cache?: JudgeCache;
  name?: string;
  /** Prompt texts (default: Grove's own). */
  prompts?: PromptSet;
}

const numbered = (xs: string[]) => xs.map((x, i) => `${i + 1}. ${x}`).join('\n');

interface ImageJudgeRecord {
  Response: string;
  Score: number;
  index: number;
  path?: string;
  kept: boolean;
  reason?: string;
  parse_error?: string;
}

export function createWebJudge(opts: WebJudgeOptions): Judge {
  const threshold = Math.min(5, Math.max(1, Math.round(opts.scoreThreshold ?? 3)));
  const maxImages = Math.max(1, opts.maxImages ?? WEBJUDGE_MAX_IMAGES);
  const name = opts.name ?? 'webjudge';
  const model = opts.model;
  const prompts = opts.prompts ?? GROVE_PROMPTS;
  const p = (slot: string, grove: string) => promptText(prompts, `webjudge.${slot}`, grove);
  return {
    name,
    judge(input: JudgeInput): Promise<Verdict> {
      const task = input.task.question;
      return runProtocol({
        name,
        config: { score_threshold: threshold, max_images: maxImages },
        prompts: promptRecord(prompts, 'webjudge'),
        model,
        cache: opts.cache,
        input,
        taskKey: { question: task },
        protocol: async ({ images, transcript }) => {
          // Stage 1: key points from the task alone (whatever the reply holds: the original has no failure path).
          const kp = await model.call({
            purpose: 'key_points',
            messages: [
              { role: 'system', content: p('key_points_system', KEY_POINTS_SYSTEM) },
              { role: 'user', content: [{ type: 'text', text: fill(p('key_points_user', KEY_POINTS_USER), { task }) }] },
            ],
            parse: parseKeyPoints,
            transcript,
            params: ONLINE_MIND2WEB_PARAMS,
          });
          const keyPoints = kp.value ?? '';

          // Stage 2: every screenshot scored in parallel; the endpoint's semaphore bounds concurrency.
          const scored = await Promise.all(
            images.map(async (img): Promise<ImageJudgeRecord> => {
              const r = await model.call<ImageScore>({
                purpose: `image ${img.index}`,
                messages: [
                  { role: 'system', content: p('image_system', IMAGE_SYSTEM) },
                  {
                    role: 'user',
                    content: [{ type: 'text', text: fill(p('image_user', IMAGE_USER), { task, key_points: keyPoints }) }, await jpegImagePart(img)],
                  },
                ],
                parse: parseImageScore,
                transcript,
                params: ONLINE_MIND2WEB_PARAMS,
              });
              // The original scores an unparsable reply 0 and carries on; transport failures are judge errors.
              if (r.value === null) return { Response: r.text, Score: 0, index: img.index, path: img.path, kept: false, parse_error: 'no score in the reply' };
              return { Response: r.text, Score: r.value.score, index: img.index, path: img.path, kept: r.value.score >= threshold, reason: r.value.reason };
            }),
          );
          const allKept = scored.filter((s) => s.kept);
          const kept = allKept.slice(0, maxImages);
          // The reasons: every kept image's non-empty reason, then cut to the limit (as the original's two lists).
          const reasons = allKept.map((s) => s.reason ?? '').filter((r) => r !== '').slice(0, maxImages);

          // Stage 3: the outcome.
          const fields = { task, key_points: keyPoints, last_actions: numbered(input.actions), thoughts: numbered(reasons) };
          const text = fill(kept.length ? p('outcome_user', OUTCOME_USER) : p('outcome_user_no_images', OUTCOME_USER_NO_IMAGES), fields);
          const content: ContentPart[] = [{ type: 'text', text }];
          for (const s of kept) content.push(await jpegImagePart(images[s.index]));
          const systemMsg = p('outcome_system', OUTCOME_SYSTEM);
          const messages: ChatMessage[] = [
            { role: 'system', content: systemMsg },
            { role: 'user', content },
          ];
          const out = await model.call({ purpose: 'outcome', messages, parse: parseStatusVerdict, transcript, params: ONLINE_MIND2WEB_PARAMS });
          // utils.py extract_predication: no "status:" → 0.
          const label = out.value ?? 0;
          for (const s of scored) if (s.kept && !kept.includes(s)) s.kept = false;
          return {
            judge: name,
            outcome: label === 1 ? 'success' : 'failure',
            score: label,
            reasoning: out.text,
            details: {
              predicted_label: label,
              key_points: keyPoints,
              image_judge_record: scored,
              kept_images: kept.map((s) => s.index),
              evaluation_details: { response: out.text, predicted_label: label },
              input_text: text,
              system_msg: systemMsg,
              score_threshold: threshold,
              ...(out.value === null ? { unparsed: true } : {}),
            },
          };
        },
      });
    },
  };
}

export function createAutonomousJudge(opts: { model: JudgeModel; cache?: JudgeCache; name?: string; prompts?: PromptSet }): Judge {
  const name = opts.name ?? 'autonomous';
  const prompts = opts.prompts ?? GROVE_PROMPTS;
  return {
    name,
    judge(input: JudgeInput): Promise<Verdict> {
      const task = input.task.question;
      return runProtocol({
        name,
        config: {},
        prompts: promptRecord(prompts, 'autonomous'),
        model: opts.model,
        cache: opts.cache,
        input: { ...input, screenshots: lastK(input.screenshots, 1) },
        taskKey: { question: task },
        protocol: async ({ images, transcript }) => {
          const text = fill(promptText(prompts, 'autonomous.user', AUTONOMOUS_USER), { task, last_actions: numbered(input.actions) });
          const systemMsg = promptText(prompts, 'autonomous.system', AUTONOMOUS_SYSTEM);
          const parts = await Promise.all(images.map(jpegImagePart));
          const out = await opts.model.call({
            purpose: 'outcome',
            messages: [
              { role: 'system', content: systemMsg },
              { role: 'user', content: [{ type: 'text', text }, ...parts] },
            ],
            parse: parseStatusVerdict,
            transcript,
            params: ONLINE_MIND2WEB_PARAMS,
          });
          const label = out.value ?? 0;
          return {
            judge: name,
            outcome: label === 1 ? 'success' : 'failure',
            score: label,
            reasoning: out.text,
            details: {
              predicted_label: label,
              evaluation_details: { response: out.text, predicted_label: label },
              input_text: text,
              system_msg: systemMsg,
              ...(out.value === null ? { unparsed: true } : {}),
            },
          };
        },
      });
    },
  };
}
