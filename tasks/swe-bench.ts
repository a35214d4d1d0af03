// SWE-bench instances (princeton-nlp/SWE-bench*): FAIL_TO_PASS / PASS_TO_PASS arrive as JSON-encoded strings
// in the published parquet/JSON exports; arrays are accepted as well. A row whose test lists cannot be
// decoded cannot be graded, so it is unusable.
import { z } from 'zod';
import type { Task } from '../protocol/task.ts';
import type { SuiteLoader } from './types.ts';
import { nonEmpty, uniqueId, zodReason } from './util.ts';

const TestList = z.union([z.string(), z.array(z.string())]);
const Row = z
  .object({
    instance_id: nonEmpty,
    repo: nonEmpty,
    base_commit: nonEmpty,
    problem_statement: z.string(),
    patch: z.string().optional(),
    test_patch: z.string().optional(),
    FAIL_TO_PASS: TestList,
    PASS_TO_PASS: TestList.optional(),
    version: z.union([z.string(), z.number()]).optional(),
    environment_setup_commit: z.string().optional(),
    hints_text: z.string().optional(),
    created_at: z.string().optional(),
  })
  .loose();

/** Decode a test list: a JSON-encoded array of strings, or already an array. */
function decodeTestList(v: string | string[] | undefined, field: string): string[] | string {
  if (v === undefined) return [];
  if (Array.isArray(v)) return v;
  if (v.trim() === '') return [];
  try {
    const parsed: unknown = JSON.parse(v);
    if (Array.isArray(parsed) && parsed.every((x) => typeof x === 'string')) return parsed;
    return `${field}: not a JSON array of test names`;
  } catch {
    return `${field}: not a JSON-encoded list`;
  }
}

export const sweBenchLoader: SuiteLoader = {
  suite: 'swe-bench',
  description: 'SWE-bench instances (repo, base_commit, problem_statement, FAIL_TO_PASS, PASS_TO_PASS)',
  convert(value, _where, ctx): Task | string {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'row is not a JSON object';
    const r = Row.safeParse(value);
    if (!r.success) return zodReason(r.error);
    const row = r.data;
    const f2p = decodeTestList(row.FAIL_TO_PASS, 'FAIL_TO_PASS');
    if (typeof f2p === 'string') return f2p;
    const p2p = decodeTestList(row.PASS_TO_PASS, 'PASS_TO_PASS');
    if (typeof p2p === 'string') return p2p;
    const flags: string[] = [];
    if (f2p.length === 0) flags.push('empty_FAIL_TO_PASS');
    const { instance_id, problem_statement, FAIL_TO_PASS: _f, PASS_TO_PASS: _p, ...rest } = row;
    return {
      id: uniqueId(ctx, instance_id, flags),
      suite: 'swe-bench',
      site: row.repo,
      question: problem_statement,
      extra: { ...rest, FAIL_TO_PASS: f2p, PASS_TO_PASS: p2p },
      flags,
    };
  },
};
