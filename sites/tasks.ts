// Loads the offline tasks (WebVoyager JSONL per site + ground truth and plan from each site's tasks.ts)
// as normalised Tasks of suite 'offline'. Start URLs use the placeholder host http://sites.grove.test,
// replaced by the real base URL of the sites server.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { Task } from '../protocol/task.ts';
import { FORM_TASKS } from './forms/tasks.ts';
import { RECIPE_TASKS } from './recipes/tasks.ts';
import { SHOP_TASKS } from './shop/tasks.ts';
import { GroundTruth, Plan, type TaskSpec } from './spec.ts';

/** The host task files name the sites by; replaced by the base URL of the sites server that serves an episode. */
export const PLACEHOLDER_BASE = 'http://sites.grove.test';

/** One row of a WebVoyager-format task file. */
export const WebVoyagerRow = z.object({ web_name: z.string(), id: z.string(), ques: z.string(), web: z.string() });
export type WebVoyagerRow = z.infer<typeof WebVoyagerRow>;

export const OFFLINE_SITES = [
  { site: 'shop', file: 'shop/tasks.jsonl', specs: SHOP_TASKS },
  { site: 'recipes', file: 'recipes/tasks.jsonl', specs: RECIPE_TASKS },
  { site: 'forms', file: 'forms/tasks.jsonl', specs: FORM_TASKS },
] as const;

/** Absolute path of a site's JSONL file (for tools that want the raw WebVoyager rows). */
export function taskFilePath(site: (typeof OFFLINE_SITES)[number]['site']): string {
  const def = OFFLINE_SITES.find((s) => s.site === site)!;
  return fileURLToPath(new URL(`./${def.file}`, import.meta.url));
}

export function readRows(file: string): WebVoyagerRow[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l, i) => {
      const r = WebVoyagerRow.safeParse(JSON.parse(l));
      if (!r.success) throw new Error(`${file}:${i + 1}: not a WebVoyager task row: ${r.error.message}`);
      return r.data;
    });
}

function rebase(url: string, baseUrl: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  return url.startsWith(PLACEHOLDER_BASE) ? base + url.slice(PLACEHOLDER_BASE.length) : url;
}

function toTask(row: WebVoyagerRow, site: string, spec: TaskSpec | undefined, baseUrl: string): Task {
  if (!spec) throw new Error(`offline task ${row.id} has no ground truth / plan in sites/${site}/tasks.ts`);
  const ground_truth = GroundTruth.parse(spec.ground_truth);
  const plan = Plan.parse(spec.plan);
  return {
    id: row.id,
    suite: 'offline',
    site: row.web_name,
    question: row.ques,
    start_url: rebase(row.web, baseUrl),
    level: spec.level,
    extra: { web_name: row.web_name, web: row.web, site_key: site, ground_truth, plan },
    flags: [],
  };
}

/** Every offline task, with start URLs on `baseUrl` (e.g. the `url` returned by startSites). */
export function loadOfflineTasks(baseUrl: string): Task[] {
  return OFFLINE_SITES.flatMap((s) => readRows(taskFilePath(s.site)).map((row) => toTask(row, s.site, (s.specs as Record<string, TaskSpec>)[row.id], baseUrl)));
}

/** The start URL of a task for one episode: adds `grove_session=<id>` (the server then sets the cookie). */
export function startUrlFor(task: Task, sessionId: string): string {
  if (!task.start_url) throw new Error(`task ${task.id} has no start URL`);
  const u = new URL(task.start_url);
  u.searchParams.set('grove_session', sessionId);
  return u.toString();
}
