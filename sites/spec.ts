// Schemas of what each offline task carries in `extra`: the state-based ground truth (checked by
// judges/rules) and the scripted plan (run by runner/scripted-policy.ts).
import { z } from 'zod';

const FieldValue = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.array(z.string()),
  /** Free text: the field must contain this (normalised). */
  z.object({ contains: z.string() }),
]);
export type FieldValue = z.infer<typeof FieldValue>;

const Line = z.object({ id: z.string(), qty: z.number().int().min(1) });

/** One check; a task's ground truth is a list of checks that must all hold. */
export const Check = z.discriminatedUnion('kind', [
  /** The cart holds these lines (with `exact`, nothing else). */
  z.object({ kind: z.literal('cart'), items: z.array(Line), exact: z.boolean().default(true) }),
  /** Some placed order has exactly these lines, and shipping fields matching `shipping`. */
  z.object({ kind: z.literal('order'), items: z.array(Line), shipping: z.record(z.string(), FieldValue).default({}) }),
  /** The favourites contain these recipes (with `exact`, only these). */
  z.object({ kind: z.literal('favourites'), ids: z.array(z.string()), exact: z.boolean().default(false) }),
  /** The shopping list has these recipes with these servings (with `exact`, only these). */
  z.object({ kind: z.literal('shopping_list'), entries: z.array(z.object({ recipe: z.string(), servings: z.number().int() })), exact: z.boolean().default(true) }),
  /** Some submission of `form` has these field values (and status, default active). */
  z.object({ kind: z.literal('submission'), form: z.string(), fields: z.record(z.string(), FieldValue), status: z.enum(['active', 'cancelled']).default('active'), count: z.number().int().optional() }),
  /** A download whose served filename matches `filename` (a regular expression) happened. */
  z.object({ kind: z.literal('download'), filename: z.string() }),
  /** The final answer names one of `accepted` (normalised: case, spacing, punctuation, thousands separators). */
  z.object({ kind: z.literal('answer'), accepted: z.array(z.string()).min(1) }),
]);
export type Check = z.infer<typeof Check>;
type CheckInput = z.input<typeof Check>;

export const GroundTruth = z.object({ checks: z.array(Check).min(1) });
export type GroundTruth = z.infer<typeof GroundTruth>;

/** Which SoM element a plan step means: matched on its text (aria-label first, then visible text). */
export const Target = z.object({
  text: z.string().min(1),
  /** Only elements with one of these tags (e.g. ['input','textarea']). */
  tag: z.array(z.string()).optional(),
  /** Require the whole text to match (otherwise exact matches win, then substrings). */
  exact: z.boolean().optional(),
  /** Pick the n-th match in document order (default 0). */
  nth: z.number().int().min(0).optional(),
});
export type Target = z.infer<typeof Target>;

export const PlanStep = z.union([
  z.object({ click: Target }),
  z.object({ type: Target.extend({ value: z.string(), clear: z.boolean().optional(), submit: z.boolean().optional() }) }),
  z.object({ key: z.string() }),
  z.object({ wait: z.number().int().min(0).max(10_000) }),
  /** Switch to the newest tab ('last') or a tab index. */
  z.object({ switch_tab: z.union([z.literal('last'), z.number().int().min(0)]) }),
  z.object({ close_tab: z.literal(true) }),
  z.object({ answer: z.string() }),
]);
export type PlanStep = z.infer<typeof PlanStep>;

export const Plan = z.array(PlanStep).min(1);

/** What a site's task module defines per task id (the JSONL holds web_name/id/ques/web). */
export interface TaskSpec {
  level: 'easy' | 'medium' | 'hard';
  ground_truth: { checks: CheckInput[] };
  plan: PlanStep[];
}
