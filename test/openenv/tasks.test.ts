// OpenEnv's task listing (GET /openenv/<key>/<env>/tasks) from every suite Grove has: the browser environment lists
// the offline sites' tasks and every suite the server loaded (the real WebVoyager, Online-Mind2Web and DeepShop files
// beside the checkout, and the Orchard-GUI fixture file), each entry the `task` its reset takes and what the agent is
// told (never a reference answer); claw lists the built-in tasks, swe the fixture instances. And the attacker's side.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS, REPO } from '../support/datasets.ts';
import { KEY, serve, type Served } from './support.ts';

const FILES: Record<string, string> = {
  webvoyager: join(DATASETS, 'webvoyager/WebVoyager_data.jsonl'),
  'online-mind2web': join(DATASETS, 'online-mind2web/Online_Mind2Web.json'),
  deepshop: join(DATASETS, 'deepshop/deepshop_test.jsonl'),
  'orchard-gui': join(REPO, 'test/tasks/fixtures/orchard-gui.jsonl'),
};
const present = Object.entries(FILES).filter(([, f]) => existsSync(f));
if (present.length < 4) console.warn(`[test/openenv/tasks] missing task files: ${Object.keys(FILES).filter((k) => !present.some(([p]) => p === k)).join(', ')} (those suites are not checked)`);

let s: Served;
beforeAll(async () => {
  s = await serve({ taskFiles: present.map(([suite, f]) => `${suite}=${f}`).join(',') });
});
afterAll(async () => {
  await s?.close();
});

const tasks = (env: string, key = KEY) => s.app.inject({ url: `/openenv/${key}/${env}/tasks` });

describe('OpenEnv task listing', () => {
  it('browser: offline and every loaded suite, as reset(task="suite/id") takes them, without reference answers', async () => {
    const r = await tasks('browser');
    expect(r.statusCode).toBe(200);
    const body = r.json() as { env: string; count: number; tasks: { task: string; suite: string; id: string; question: string }[] };
    expect(body.env).toBe('browser');
    expect(body.count).toBe(body.tasks.length);
    const bySuite = new Map<string, number>();
    for (const t of body.tasks) bySuite.set(t.suite, (bySuite.get(t.suite) ?? 0) + 1);
    expect(bySuite.get('offline')).toBeGreaterThan(0);
    // Every usable row (the Orchard-GUI fixture's fourth row has no website: a load issue, not a task).
    const expected: Record<string, number> = { webvoyager: 643, 'online-mind2web': 300, deepshop: 150, 'orchard-gui': 3 };
    for (const [suite] of present) expect(bySuite.get(suite), suite).toBe(expected[suite]);
    for (const t of body.tasks) {
      expect(Object.keys(t).sort()).toEqual(['id', 'question', 'suite', 'task']);
      expect(t.task).toBe(`${t.suite}/${t.id}`);
    }
    // No suite's answers leak into the listing (WebVoyager's reference answer of its first task).
    if (present.some(([p]) => p === 'webvoyager')) expect(r.body).not.toContain('Vegetarian Four Cheese Lasagna');
  });

  it('claw: the built-in tasks; swe: the fixture instances', async () => {
    const claw = (await tasks('claw')).json() as { tasks: { task: string; suite: string }[] };
    expect(claw.tasks.length).toBeGreaterThan(100);
    expect(new Set(claw.tasks.map((t) => t.suite))).toEqual(new Set(['claw']));
    const swe = (await tasks('swe')).json() as { tasks: { task: string; suite: string; question: string }[] };
    expect(swe.tasks.length).toBeGreaterThan(0);
    expect(swe.tasks[0]).toMatchObject({ suite: 'swe' });
    expect(swe.tasks[0].question.length).toBeGreaterThan(10);
    expect((await tasks('shell')).json()).toEqual({ env: 'shell', count: 0, tasks: [] });
  });

  it('attacker: a wrong key, no key, an unknown environment answer stable codes without a stack trace', async () => {
    const wrong = await tasks('browser', 'wrong-key-0123456789');
    expect(wrong.statusCode).toBe(403);
    const none = await s.app.inject({ url: '/openenv/browser/tasks' });
    expect(none.statusCode).toBe(401);
    const unknown = await tasks('nope');
    expect([unknown.statusCode, unknown.json()]).toEqual([404, { detail: 'Not Found' }]);
    // A path climbing out of the key segment is normalised to /openenv/<env>/tasks without a key: 401.
    const climb = await tasks('../browser');
    expect(climb.statusCode).toBe(401);
    // An environment name over the router's parameter length is no route: refused before any handler (the server's
    // own key check answers it).
    const long = await tasks('x'.repeat(5000));
    expect([401, 404]).toContain(long.statusCode);
    for (const r of [wrong, none, unknown, climb, long]) expect(r.body).not.toMatch(/at \w+ \(|node_modules|\.ts:\d+/);
  });
});
