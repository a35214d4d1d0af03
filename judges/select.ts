// Which judge scores which suite: the one table `grove run`, `grove judge` and the episode service (POST
// /sandboxes/{id}/evaluate) read. Kept free of the judges' code so argument parsing can import it cheaply.
import type { Suite } from '../protocol/task.ts';

/** The LLM judges of the registry (judges/index.ts JUDGES defines exactly these). */
export const LLM_JUDGE_NAMES = ['webvoyager', 'webjudge', 'autonomous', 'deepshop'] as const;
export type LlmJudgeName = (typeof LLM_JUDGE_NAMES)[number];

/**
 * A suite's judge: an LLM judge, or `rule` (the offline sites' state-based ground truth, judges/rules),
 * `tests` (SWE-bench: the instance's FAIL_TO_PASS / PASS_TO_PASS tests, swe-env grading) or `claw` (Claw tasks'
 * graders, with judges/claw.ts for free-text rubrics).
 */
export type SuiteJudgeName = LlmJudgeName | 'rule' | 'tests' | 'claw';

/** Every suite has exactly one default judge (the Record type makes a missing suite a compile error). */
export const SUITE_JUDGES: Readonly<Record<Suite, SuiteJudgeName>> = {
  webvoyager: 'webvoyager',
  'online-mind2web': 'webjudge',
  deepshop: 'deepshop',
  // Orchard-GUI's reward is a WebVoyager-style judgement of the last screenshots.
  'orchard-gui': 'webvoyager',
  offline: 'rule',
  'swe-bench': 'tests',
  claw: 'claw',
};

export function isLlmJudge(name: string): name is LlmJudgeName {
  return (LLM_JUDGE_NAMES as readonly string[]).includes(name);
}

/** The default judge of a suite, or undefined for a name that is no suite. */
export function judgeForSuite(suite: string): SuiteJudgeName | undefined {
  return Object.hasOwn(SUITE_JUDGES, suite) ? SUITE_JUDGES[suite as Suite] : undefined;
}

/** The suite's default judge when it is an LLM judge (what `grove judge` and the episode service can run). */
export function llmJudgeForSuite(suite: string): LlmJudgeName | undefined {
  const name = judgeForSuite(suite);
  return name !== undefined && isLlmJudge(name) ? name : undefined;
}
