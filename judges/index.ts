// Judge registry: one definition per LLM judge (name, description, factory), plus re-exports. Which judge
// scores which suite is decided once, in select.ts.
import type { Logger } from '../sandbox/log.ts';
import type { JudgeCache } from './cache.ts';
import { createDeepShopJudge } from './deepshop.ts';
import { JudgeModel } from './model.ts';
import type { PromptSet } from './prompts.ts';
import { LLM_JUDGE_NAMES, type LlmJudgeName } from './select.ts';
import type { Judge, JudgeModelConfigInput } from './types.ts';
import { createAutonomousJudge, createWebJudge } from './webjudge.ts';
import { createWebVoyagerJudge } from './webvoyager.ts';

export * from './types.ts';
export { JudgeModel } from './model.ts';
export { memoryCache, fileCache } from './cache.ts';
export { createWebVoyagerJudge } from './webvoyager.ts';
export { createWebJudge, createAutonomousJudge } from './webjudge.ts';
export { createDeepShopJudge } from './deepshop.ts';
export { loadPromptDir, PromptDirError } from './prompts.ts';
export { formatReport } from './report.ts';
export { formatAgreement } from './agreement.ts';
export { llmJudgeForSuite } from './select.ts';

export interface CreateJudgeOptions {
  /** The judge's own endpoint (a JudgeModel, or its config). */
  model: JudgeModel | JudgeModelConfigInput;
  /** Screenshots sent by WebVoyager-style judges (webvoyager, deepshop): default 15. */
  k?: number;
  /** WebJudge screenshot threshold (1-5): default 3. */
  scoreThreshold?: number;
  cache?: JudgeCache;
  /** Prompt texts (default: Grove's own; `loadPromptDir` for user-supplied ones). */
  prompts?: PromptSet;
  fetch?: typeof fetch;
  log?: Logger;
}

export interface JudgeDef {
  name: LlmJudgeName;
  description: string;
  create(model: JudgeModel, opts: CreateJudgeOptions): Judge;
}

/** One definition per LLM judge, keyed by name: select.ts's LLM_JUDGE_NAMES and these cannot drift apart. */
const DEFS: { [K in LlmJudgeName]: Omit<JudgeDef, 'name'> } = {
  webvoyager: {
    description: 'WebVoyager auto-eval: task + answer + last k screenshots → SUCCESS / NOT SUCCESS',
    create: (model, o) => createWebVoyagerJudge({ model, k: o.k, cache: o.cache, prompts: o.prompts }),
  },
  webjudge: {
    description: 'Online-Mind2Web WebJudge: key points, per-screenshot scores, outcome',
    create: (model, o) => createWebJudge({ model, scoreThreshold: o.scoreThreshold, cache: o.cache, prompts: o.prompts }),
  },
  autonomous: {
    description: 'Online-Mind2Web autonomous eval: task + action history + last screenshot',
    create: (model, o) => createAutonomousJudge({ model, cache: o.cache, prompts: o.prompts }),
  },
  deepshop: {
    description: 'DeepShop: one judgement per present dimension (attribute, filter, sort)',
    create: (model, o) => createDeepShopJudge({ model, k: o.k, cache: o.cache, prompts: o.prompts }),
  },
};

export const JUDGES: JudgeDef[] = LLM_JUDGE_NAMES.map((name) => ({ name, ...DEFS[name] }));

export function createJudge(name: string, opts: CreateJudgeOptions): Judge {
  const def = JUDGES.find((j) => j.name === name);
  if (!def) throw new Error(`unknown judge "${name}" (known: ${JUDGES.map((j) => j.name).join(', ')})`);
  const model = opts.model instanceof JudgeModel ? opts.model : new JudgeModel(opts.model, { cache: opts.cache, fetch: opts.fetch, log: opts.log });
  return def.create(model, opts);
}
