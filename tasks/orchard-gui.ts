// Orchard-GUI's RL training tasks (MSR-Orchard/slime examples/orchard_gui/data/webgym_filtered_*.jsonl, the
// WebGym-filtered set): rows {benchmark_name, task_name, domain, subdomain, website, definite_answer, task_id,
// difficulty, evaluator_reference: [{id, description, facts[]}], metadata: {intent, start_url, ...}}.
// Format read from the published file; the loader is ours. Judged like WebVoyager (Orchard's reward judge
// adapts the WebVoyager prompt: task + answer + last screenshots → SUCCESS / NOT SUCCESS).
import { z } from 'zod';
import type { Task } from '../protocol/task.ts';
import type { SuiteLoader } from './types.ts';
import { nonEmpty, siteOf, uniqueId, zodReason } from './util.ts';

const Reference = z.object({ id: z.union([z.number(), z.string()]).optional(), description: z.string().optional(), facts: z.array(z.string()).default([]) });

const OrchardRow = z.object({
  task_id: z.union([nonEmpty, z.number().int()]).transform(String),
  task_name: nonEmpty,
  website: z.string().url(),
  benchmark_name: z.string().optional(),
  domain: z.string().optional(),
  subdomain: z.string().optional(),
  definite_answer: z.string().nullable().optional(),
  difficulty: z.union([z.number(), z.string()]).nullable().optional(),
  evaluator_reference: z.array(Reference).nullable().optional(),
  metadata: z.object({ intent: z.string().optional(), start_url: z.string().optional() }).passthrough().optional(),
});

export const orchardGuiLoader: SuiteLoader = {
  suite: 'orchard-gui',
  description: "Orchard-GUI's RL training tasks (WebGym-filtered JSONL from MSR-Orchard/slime examples/orchard_gui/data/)",
  convert(value, _where, ctx): Task | string {
    const r = OrchardRow.safeParse(value);
    if (!r.success) return zodReason(r.error);
    const row = r.data;
    const flags: string[] = [];
    // Orchard's generate loop opens metadata.start_url; several start pages are joined with " |AND| ".
    const start = row.metadata?.start_url?.trim() || row.website;
    const startUrls = start.split(' |AND| ');
    if (startUrls.length > 1) flags.push('several_start_urls');
    const answer = row.definite_answer?.trim();
    return {
      id: uniqueId(ctx, row.task_id, flags),
      suite: 'orchard-gui',
      site: siteOf(row.website),
      question: row.metadata?.intent?.trim() || row.task_name,
      start_url: startUrls[0],
      level: row.difficulty === null || row.difficulty === undefined ? undefined : String(row.difficulty),
      reference: answer ? [{ type: 'definite', answer }] : undefined,
      extra: {
        benchmark_name: row.benchmark_name,
        domain: row.domain,
        subdomain: row.subdomain,
        evaluator_reference: row.evaluator_reference ?? [],
        ...(startUrls.length > 1 ? { start_urls: startUrls } : {}),
      },
      flags,
    };
  },
};
