// DeepShop (youganglyu/DeepShop data/deepshop_test.jsonl): WebVoyager fields plus attribute, filter, sort
// (the literal string "None" means the query has no such sub-goal), category and difficulty. The evaluation
// judges each present dimension separately (src/evaluation/auto_eval_{attribute,filter,sort}.py).
import { z } from 'zod';
import type { Task } from '../protocol/task.ts';
import type { SuiteLoader } from './types.ts';
import { nonEmpty, uniqueId, zodReason } from './util.ts';

const DEEPSHOP_DIMENSIONS = ['attribute', 'filter', 'sort'] as const;
export type DeepShopDimension = (typeof DEEPSHOP_DIMENSIONS)[number];

const Dim = z.union([z.string(), z.null()]).optional();
const Row = z.object({
  web_name: z.string().optional(),
  id: nonEmpty,
  ques: nonEmpty,
  web: z.string().url(),
  attribute: Dim,
  filter: Dim,
  sort: Dim,
  category: z.string().optional(),
  difficulty: z.string().optional(),
});

/** "None", "", null and undefined all mean the dimension is absent. */
function dimensionText(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const t = v.trim();
  return t === '' || t === 'None' ? null : v;
}

/**
 * Signs that a dimension's text is garbled (three published rows interleave two sentences): a stub left
 * after removing Markdown `**`, unbalanced `**`, or a four-word run that repeats inside the field. Tuned on
 * deepshop_test.jsonl, where exactly Amazon--539, --541 and --595 trip it.
 */
function looksScrambled(text: string): boolean {
  if (text.replace(/\*/g, '').trim().length < 8) return true;
  if ((text.match(/\*\*/g) ?? []).length % 2 === 1 || text.includes('****')) return true;
  const words = text.toLowerCase().match(/[a-z0-9$.]+/g) ?? [];
  const grams = new Set<string>();
  for (let i = 0; i + 4 <= words.length; i++) {
    const g = words.slice(i, i + 4).join(' ');
    if (grams.has(g)) return true;
    grams.add(g);
  }
  return false;
}

/** The dimensions a DeepShop task has (attribute/filter/sort whose text is not "None"). */
export function presentDimensions(task: Task): { dimension: DeepShopDimension; text: string }[] {
  const out: { dimension: DeepShopDimension; text: string }[] = [];
  for (const d of DEEPSHOP_DIMENSIONS) {
    const t = dimensionText(task.extra[d]);
    if (t !== null) out.push({ dimension: d, text: t });
  }
  return out;
}

export const deepshopLoader: SuiteLoader = {
  suite: 'deepshop',
  description: 'DeepShop (150 Amazon shopping queries; attribute/filter/sort sub-goals)',
  convert(value, _where, ctx): Task | string {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'row is not a JSON object';
    const r = Row.safeParse(value);
    if (!r.success) return zodReason(r.error);
    const row = r.data;
    const flags: string[] = [];
    const extra: Record<string, unknown> = {};
    for (const d of DEEPSHOP_DIMENSIONS) {
      const t = dimensionText(row[d]);
      extra[d] = t; // null = absent
      if (t !== null && looksScrambled(t)) flags.push(`scrambled:${d}`);
    }
    if (row.category) extra.category = row.category;
    return {
      id: uniqueId(ctx, row.id, flags),
      suite: 'deepshop',
      site: row.web_name || 'Amazon',
      question: row.ques,
      start_url: row.web,
      level: row.difficulty || undefined,
      extra,
      flags,
    };
  },
};
