// Online-Mind2Web (OSU-NLP-Group; HF osunlp/Online-Mind2Web): a JSON array of
// {task_id, confirmed_task, website, reference_length, level}. Older copies name the instruction
// `task_description`. Difficulty comes from `level` (easy|medium|hard).
import { z } from 'zod';
import type { Task } from '../protocol/task.ts';
import type { SuiteLoader } from './types.ts';
import { nonEmpty, siteOf, uniqueId, zodReason } from './util.ts';

const Row = z.object({
  task_id: nonEmpty,
  confirmed_task: nonEmpty.optional(),
  task_description: nonEmpty.optional(),
  website: nonEmpty,
  reference_length: z.number().int().nonnegative().optional(),
  level: z.string().optional(),
});

export const onlineMind2WebLoader: SuiteLoader = {
  suite: 'online-mind2web',
  description: 'Online-Mind2Web (300 live-website tasks, level easy/medium/hard)',
  convert(value, _where, ctx): Task | string {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'row is not a JSON object';
    const r = Row.safeParse(value);
    if (!r.success) return zodReason(r.error);
    const row = r.data;
    const question = row.confirmed_task ?? row.task_description;
    if (!question) return 'confirmed_task (or task_description): missing';
    const flags: string[] = [];
    const extra: Record<string, unknown> = {};
    if (row.reference_length !== undefined) extra.reference_length = row.reference_length;
    if (!row.level) flags.push('no_level');
    return {
      id: uniqueId(ctx, row.task_id, flags),
      suite: 'online-mind2web',
      site: siteOf(row.website),
      question,
      start_url: row.website,
      level: row.level || undefined,
      extra,
      flags,
    };
  },
};
