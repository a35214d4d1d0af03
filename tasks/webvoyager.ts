// WebVoyager (MinorJerry/WebVoyager data/): WebVoyager_data.jsonl rows {web_name, id, ques, web}, joined with
// reference_answer.json ({<site>: {notice?, answers: [{id: number, type: "golden"|"possible", ans}]}}) on
// web_name + the number after "--" in id. GAIA_web.jsonl rows ({task_id, Level, "Final answer", id, web, ques})
// load too, with the final answer as a golden reference.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { Task } from '../protocol/task.ts';
import { readJsonFile, TaskFileError } from './read.ts';
import type { LoaderContext, LoadOptions, SuiteLoader } from './types.ts';
import { nonEmpty, siteOf, uniqueId, zodReason } from './util.ts';

const WebVoyagerRow = z.object({ web_name: nonEmpty, id: nonEmpty, ques: nonEmpty, web: z.string().url() });
const GaiaRow = z.object({
  task_id: z.string().optional(),
  Level: z.union([z.number(), z.string()]),
  'Final answer': z.union([z.string(), z.number()]),
  id: nonEmpty,
  web: z.string().url(),
  ques: nonEmpty,
});

const ReferenceFile = z.record(
  z.string(),
  z.object({
    notice: z.string().optional(),
    answers: z.array(z.object({ id: z.number().int(), type: z.string(), ans: z.string() })),
  }),
);
type ReferenceFile = z.infer<typeof ReferenceFile>;

interface WebVoyagerContext extends LoaderContext {
  /** `${site}--${n}` → reference. */
  references?: Map<string, { type: string; answer: string; notice?: string }>;
}

/** Read reference_answer.json into a lookup by "<site>--<id>". */
async function loadWebVoyagerReferences(
  file: string,
): Promise<Map<string, { type: string; answer: string; notice?: string }>> {
  const parsed = ReferenceFile.safeParse(await readJsonFile(file));
  if (!parsed.success) {
    throw new TaskFileError('wrong_shape', file, `not a WebVoyager reference file (${zodReason(parsed.error)})`);
  }
  const map = new Map<string, { type: string; answer: string; notice?: string }>();
  for (const [site, entry] of Object.entries(parsed.data)) {
    const notice = entry.notice?.trim() || undefined;
    for (const a of entry.answers) map.set(`${site}--${a.id}`, { type: a.type, answer: a.ans, notice });
  }
  return map;
}

export const webvoyagerLoader: SuiteLoader = {
  suite: 'webvoyager',
  description: 'WebVoyager (643 tasks on 15 live sites; reference answers joined) and GAIA-web rows',
  async prepare(file: string, opts: LoadOptions): Promise<WebVoyagerContext> {
    const ctx: WebVoyagerContext = { seenIds: new Map() };
    if (opts.references === false) return ctx;
    const refFile = opts.references ?? join(dirname(file), 'reference_answer.json');
    if (opts.references === undefined && !existsSync(refFile)) return ctx;
    ctx.references = await loadWebVoyagerReferences(refFile);
    return ctx;
  },
  convert(value, _where, rawCtx): Task | string {
    const ctx = rawCtx as WebVoyagerContext;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'row is not a JSON object';
    const flags: string[] = [];
    if ('web_name' in value) {
      const r = WebVoyagerRow.safeParse(value);
      if (!r.success) return zodReason(r.error);
      const row = r.data;
      const task: Task = {
        id: uniqueId(ctx, row.id, flags),
        suite: 'webvoyager',
        site: row.web_name,
        question: row.ques,
        start_url: row.web,
        extra: {},
        flags,
      };
      if (ctx.references) {
        const ref = ctx.references.get(row.id);
        if (ref) {
          task.reference = [{ type: ref.type, answer: ref.answer }];
          if (ref.notice) task.extra.reference_notice = ref.notice;
        } else flags.push('no_reference');
      }
      return task;
    }
    if ('Level' in value || 'Final answer' in value) {
      const r = GaiaRow.safeParse(value);
      if (!r.success) return zodReason(r.error);
      const row = r.data;
      return {
        id: uniqueId(ctx, row.id, flags),
        suite: 'webvoyager',
        site: siteOf(row.web),
        question: row.ques,
        start_url: row.web,
        level: String(row.Level),
        reference: [{ type: 'golden', answer: String(row['Final answer']) }],
        extra: { gaia_task_id: row.task_id },
        flags,
      };
    }
    return 'neither a WebVoyager row (web_name, id, ques, web) nor a GAIA row (Level, Final answer, id, web, ques)';
  },
};
