// The Claw task format: prompt, seed fixture, apps and tools offered, limits, graders (completion checks,
// safety checks, an optional LLM-judge rubric) and, for generated and hand-written tasks, a reference
// solution that scripted policies and tests replay. Claw-Eval's task.yaml is converted into this (claw-eval.ts).
import { z } from 'zod';
import { FaultConfig } from '../faults.ts';
import { AppName, ClawState, COLLECTIONS } from '../state.ts';

/** A field matcher: a literal (case-insensitive for strings), or one of the operator objects. */
export type Matcher =
  | string
  | number
  | boolean
  | null
  | { contains: string }
  | { in: (string | number)[] }
  | { at: string }
  | { exists: boolean }
  | { not: Matcher };
export const Matcher: z.ZodType<Matcher> = z.lazy(() =>
  z.union([
    z.string(),
    z.number(),
    z.boolean(),
    z.null(),
    z.object({ contains: z.string() }).strict(),
    z.object({ in: z.array(z.union([z.string(), z.number()])) }).strict(),
    z.object({ at: z.string() }).strict(),
    z.object({ exists: z.boolean() }).strict(),
    z.object({ not: Matcher }).strict(),
  ]),
);
/** Field path (dots descend, arrays match if any element does) → matcher. */
export const Where = z.record(z.string(), Matcher);
export type Where = z.infer<typeof Where>;

const Collection = z.enum(COLLECTIONS);
const weight = z.number().min(0).default(1);

export const Check = z.discriminatedUnion('type', [
  z.object({ type: z.literal('tool_called'), name: z.string().optional(), tool: z.string(), min_calls: z.number().int().min(1).default(1), args: Where.optional(), weight }),
  // match: all keywords (default) or any one of them (Claw-Eval's lists of alternatives)
  z.object({ type: z.literal('keywords_present'), name: z.string().optional(), keywords: z.array(z.string()).min(1), match: z.enum(['any', 'all']).optional(), weight }),
  z.object({ type: z.literal('record'), name: z.string().optional(), collection: Collection, where: Where, count: z.number().int().min(0).optional(), weight }),
  z.object({ type: z.literal('unchanged'), name: z.string().optional(), collection: Collection, ids: z.array(z.string()).min(1), weight }),
  z.object({ type: z.literal('llm_judge'), name: z.string().optional(), rubric: z.string().min(1), weight }),
]);
export type Check = z.infer<typeof Check>;

export const SafetyCheck = z.discriminatedUnion('type', [
  z.object({ type: z.literal('tool_not_called'), tool: z.string(), args: Where.optional(), description: z.string().default('') }),
  z.object({ type: z.literal('no_record'), collection: Collection, where: Where, description: z.string().default('') }),
  z.object({ type: z.literal('unchanged'), collection: Collection, ids: z.array(z.string()).min(1), description: z.string().default('') }),
]);
export type SafetyCheck = z.infer<typeof SafetyCheck>;

export const ToolStep = z.object({ tool: z.string(), args: z.record(z.string(), z.unknown()).default({}) });
export type ToolStep = z.infer<typeof ToolStep>;

export const ClawTask = z.object({
  id: z.string().min(1),
  title: z.string().default(''),
  prompt: z.string().min(1),
  apps: z.array(AppName).min(1),
  /** Tools offered (default: every tool of `apps`). */
  tools: z.array(z.string()).optional(),
  seed: ClawState,
  limits: z.object({ max_turns: z.number().int().min(1).max(500).default(20), timeout_seconds: z.number().int().min(1).max(86_400).default(300) }).default({ max_turns: 20, timeout_seconds: 300 }),
  faults: FaultConfig.optional(),
  completion: z.array(Check).min(1),
  safety: z.array(SafetyCheck).default([]),
  /** A reference trajectory (tool calls, then the final answer) for scripted policies and tests. */
  solution: z.array(ToolStep).optional(),
  answer: z.string().optional(),
  /** A plan through the web UI for the browser runner's scripted policy (sites/spec.ts PlanStep shape:
   * {click:{text}}, {type:{text, value}}, {answer}), kept opaque here. */
  web_plan: z.array(z.record(z.string(), z.unknown())).optional(),
  /** An unsafe continuation (tests: the "unsafe" trajectory is solution + trap). */
  trap: z.array(ToolStep).optional(),
  source: z.enum(['generated', 'handwritten', 'claw-eval']).default('handwritten'),
  template: z.string().optional(),
  category: z.string().default(''),
  tags: z.array(z.string()).default([]),
  /** Tool names the agent calls → tools that run (Claw-Eval task.yaml tools → compat tools). */
  aliases: z.record(z.string(), z.string()).default({}),
  /** Tool definitions shown to the model instead of the built-in ones (a task.yaml's own tools). */
  tool_defs: z
    .array(z.object({ type: z.literal('function'), function: z.object({ name: z.string(), description: z.string(), parameters: z.record(z.string(), z.unknown()) }) }))
    .optional(),
});
export type ClawTask = z.infer<typeof ClawTask>;
export type ClawTaskInput = z.input<typeof ClawTask>;

export function parseTask(input: unknown, where: string): ClawTask {
  const r = ClawTask.safeParse(input);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new Error(`${where}: ${i.path.join('.') || '(root)'}: ${i.message}`);
  }
  return r.data;
}
