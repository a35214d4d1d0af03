// Task loading: every offline task has a start URL on the base, a valid ground truth and a plan, and the
// plans' answers satisfy the tasks' own answer checks.
import { describe, expect, it } from 'vitest';
import { Task } from '../../protocol/task.ts';
import { GroundTruth, Plan } from '../../sites/spec.ts';
import { OFFLINE_SITES, loadOfflineTasks, readRows, startUrlFor, taskFilePath } from '../../sites/tasks.ts';
import { answerMatches } from '../../judges/rules/offline.ts';
import { productById } from '../../sites/shop/data.ts';
import { recipeBySlug } from '../../sites/recipes/data.ts';

const BASE = 'http://127.0.0.1:4567';
const tasks = loadOfflineTasks(BASE);

describe('loadOfflineTasks', () => {
  it('loads at least 10 tasks per site, all valid normalised Tasks with unique ids', () => {
    const perSite = Object.fromEntries(OFFLINE_SITES.map((s) => [s.site, tasks.filter((t) => t.extra.site_key === s.site).length]));
    expect(perSite).toEqual({ shop: 13, recipes: 12, forms: 11 });
    expect(new Set(tasks.map((t) => t.id)).size).toBe(tasks.length);
    for (const t of tasks) {
      expect(Task.parse(t)).toEqual(t);
      expect(t.suite).toBe('offline');
      expect(['easy', 'medium', 'hard']).toContain(t.level);
      expect(t.start_url!.startsWith(`${BASE}/${t.extra.site_key}/`)).toBe(true);
      expect(GroundTruth.safeParse(t.extra.ground_truth).success).toBe(true);
      expect(Plan.parse(t.extra.plan).length).toBeGreaterThan(0);
    }
  });

  it('keeps the JSONL files in WebVoyager format with the placeholder host', () => {
    for (const s of OFFLINE_SITES) {
      for (const r of readRows(taskFilePath(s.site))) {
        expect(Object.keys(r).sort()).toEqual(['id', 'ques', 'web', 'web_name']);
        expect(r.web.startsWith(`http://sites.grove.test/${s.site}/`)).toBe(true);
      }
    }
  });

  it('every plan ends with an answer, and answers satisfy the answer checks', () => {
    for (const t of tasks) {
      const plan = Plan.parse(t.extra.plan);
      const last = plan[plan.length - 1];
      expect('answer' in last, t.id).toBe(true);
      const answer = (last as { answer: string }).answer;
      for (const c of GroundTruth.parse(t.extra.ground_truth).checks) {
        if (c.kind === 'answer') expect(c.accepted.some((a) => answerMatches(answer, a)), `${t.id}: ${answer}`).toBe(true);
      }
    }
  });

  it('state checks name products and recipes that exist', () => {
    for (const t of tasks) {
      for (const c of GroundTruth.parse(t.extra.ground_truth).checks) {
        if (c.kind === 'cart' || c.kind === 'order') for (const i of c.items) expect(productById(i.id), `${t.id} ${i.id}`).toBeDefined();
        if (c.kind === 'favourites') for (const id of c.ids) expect(recipeBySlug(id), `${t.id} ${id}`).toBeDefined();
        if (c.kind === 'shopping_list') for (const e of c.entries) expect(recipeBySlug(e.recipe)).toBeDefined();
      }
    }
  });

  it('covers the page behaviours the sites offer (new tab, confirm, download, pagination)', () => {
    const plans = JSON.stringify(tasks.map((t) => t.extra.plan));
    expect(plans).toContain('"switch_tab":"last"');
    expect(plans).toContain('Remove Beatline Vibe'); // confirm()
    expect(plans).toContain('Clear list'); // confirm()
    expect(plans).toContain('Cancel booking'); // confirm()
    expect(plans).toContain('Next ›'); // pagination
    expect(tasks.filter((t) => JSON.stringify(t.extra.ground_truth).includes('"download"')).length).toBe(3);
  });
});

describe('startUrlFor', () => {
  it('adds the session id to the start URL, keeping other parameters', () => {
    const t = tasks[0];
    expect(startUrlFor(t, 'ep-7')).toBe(`${BASE}/shop/?grove_session=ep-7`);
    expect(startUrlFor({ ...t, start_url: `${BASE}/shop/search?q=a` }, 'x')).toBe(`${BASE}/shop/search?q=a&grove_session=x`);
    expect(() => startUrlFor({ ...t, start_url: undefined }, 'x')).toThrow(/no start URL/);
  });
});
