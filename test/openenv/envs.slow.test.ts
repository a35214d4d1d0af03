// Every environment through OpenEnv's WebSocket session protocol with real sandboxes: browser (real Chromium on an
// offline site's task: canonical actions, a policy's raw text, the terminal reward from the task's rule judge),
// shell (bubblewrap exec, MCP tools), SWE (the fixture repository; the gold patch submitted is graded 1, an empty
// one 0), browser sessions side by side, and observation frames as UTF-8 JSON text whatever the page's text.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createBrowserEnvironment } from '../../browser-env/index.ts';
import { fixtureInstances } from '../../swe-env/fixture.ts';
import { serve, Frames, KEY, wsUrl, type Served } from './support.ts';
import { shellEnvironment } from '../../server/server.ts';
import { loadConfig } from '../../sandbox/config.ts';

let s: Served;
let dataDir: string;
beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-openenv-envs-'));
  const flags = { dataDir, maxSandboxes: 12 };
  const config = loadConfig({ env: {}, flags: { apiKey: KEY, ...flags } });
  s = await serve(flags, {
    environments: async (log) => ({
      browser: await createBrowserEnvironment({ executablePath: config.chromiumPath, processes: 1, recycleAfter: 50, warmPool: 0, dataDir: path.join(dataDir, 'browser'), headless: true, extraArgs: [] }),
      shell: await shellEnvironment(config, log),
    }),
  });
}, 60_000);
afterAll(async () => {
  await s?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const url = (env: string) => wsUrl(s.base, `/openenv/${KEY}/${env}/ws`);

describe('browser', () => {
  it('an offline task: screenshot and page facts, actions, raw model output, the judged terminal step', async () => {
    const ws = await Frames.open(url('browser'));
    const reset = await ws.send({ type: 'reset', data: { task: 'offline/Shop--0', episode_id: 'b1', viewport: { width: 800, height: 600 } } });
    expect(reset.type).toBe('observation');
    const o = reset.data.observation;
    expect(o.screenshot).toMatchObject({ mime: 'image/jpeg', width: 800, height: 600 });
    expect(o.screenshot.base64.length).toBeGreaterThan(1000);
    expect(o.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(o.goal.length).toBeGreaterThan(5);
    const scroll = await ws.send({ type: 'step', data: { action: { action: 'scroll', direction: 'down', amount: 2 }, metadata: {} } });
    expect(scroll.data).toMatchObject({ reward: null, done: false, observation: { terminated: false } });
    expect(scroll.data.observation.actions[0].error).toBeNull();
    const text = await ws.send({ type: 'step', data: { model_output: 'Thought: look up.\nAction: scroll(point=\'<point>400 300</point>\', direction=\'up\')', format: 'uitars', screenshot: 'none' } });
    expect(text.data.observation.parse).toMatchObject({ ok: true });
    expect(text.data.observation.screenshot).toBeNull();
    const bad = await ws.send({ type: 'step', data: { model_output: 'no action here', format: 'qwen3vl' } });
    expect(bad.data.observation.parse.ok).toBe(false);
    const end = await ws.send({ type: 'step', data: { action: { action: 'answer', text: 'nothing' } } });
    expect(end.data.done).toBe(true);
    expect(end.data.observation.evaluation).toMatchObject({ task_id: 'Shop--0' });
    expect(end.data.reward).toBe(end.data.observation.evaluation.reward);
    const st = await ws.send({ type: 'state' });
    expect(st.data).toMatchObject({ episode_id: 'b1', step_count: 4, done: true });
    await ws.close();
    await expect.poll(() => s.app.grove.registry.list().length, { timeout: 30_000 }).toBe(0);
  }, 120_000);

  it('an observation frame is UTF-8 JSON text whatever the page says: quotes, U+2028, non-ASCII, a look-alike placeholder', async () => {
    const title = 'a "quoted" \u2028 line — é 漢字 😀 "grove-openenv-b64-00" \\ end';
    const w = new WebSocket(url('browser'));
    await new Promise((ok, fail) => w.once('open', ok).once('error', fail));
    const next = () => new Promise<{ text: string; binary: boolean }>((ok) => w.once('message', (raw: Buffer, binary: boolean) => ok({ text: raw.toString('utf8'), binary })));
    w.send(JSON.stringify({ type: 'reset', data: { start_url: `data:text/html;charset=utf-8,${encodeURIComponent(`<title>${title}</title><p>x</p>`)}` } }));
    const reset = await next();
    w.send(JSON.stringify({ type: 'step', data: { action: { action: 'wait', ms: 10 } } }));
    const step = await next();
    for (const f of [reset, step]) {
      expect(f.binary).toBe(false);
      const o = JSON.parse(f.text).data.observation;
      expect(o.title).toBe(title);
      // The base64 spliced in is the whole JPEG, nothing of the JSON around it.
      expect(o.screenshot.base64).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
      expect([...Buffer.from(o.screenshot.base64, 'base64').subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    }
    w.close();
    await expect.poll(() => s.app.grove.registry.list().filter((i) => i.status !== 'closed').length, { timeout: 30_000 }).toBe(0);
  }, 120_000);

  it('MCP tools over the session are the mcp/ room\'s browser tools; two sessions step side by side', async () => {
    const [a, b] = await Promise.all([Frames.open(url('browser')), Frames.open(url('browser'))]);
    await Promise.all([a.send({ type: 'reset', data: { start_url: 'data:text/html,<h1>a</h1>' } }), b.send({ type: 'reset', data: { start_url: 'data:text/html,<h1>b</h1>' } })]);
    const tools = await a.send({ type: 'step', data: { type: 'list_tools' } });
    const names = tools.data.observation.tools.map((t: { name: string }) => t.name);
    expect(names).toEqual(expect.arrayContaining(['screenshot', 'click']));
    const [ra, rb] = await Promise.all([
      a.send({ type: 'step', data: { type: 'call_tool', tool_name: 'screenshot', arguments: {} } }),
      b.send({ type: 'step', data: { action: { action: 'wait', ms: 10 } } }),
    ]);
    expect(ra.data.observation.result.content[0].type).toBe('image');
    expect(rb.data.observation.url).toMatch(/^data:text\/html,<h1>b/);
    await Promise.all([a.close(), b.close()]);
    await expect.poll(() => s.app.grove.registry.list().length, { timeout: 30_000 }).toBe(0);
  }, 120_000);
});

describe('shell', () => {
  it('exec steps and MCP tools in a bubblewrap sandbox', async () => {
    const ws = await Frames.open(url('shell'));
    await ws.send({ type: 'reset', data: {} });
    const r = await ws.send({ type: 'step', data: { command: 'echo hi > f.txt && cat f.txt && id -u' } });
    expect(r.data.observation).toMatchObject({ exit_code: 0, step: 1 });
    expect(r.data.observation.stdout).toMatch(/^hi\n\d+\n$/);
    const net = await ws.send({ type: 'step', data: { command: ['sh', '-c', 'exec 3<>/dev/tcp/1.1.1.1/80'] } });
    expect(net.data.observation.exit_code).not.toBe(0);
    const read = await ws.send({ type: 'mcp', data: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'f.txt' } } } });
    expect(JSON.stringify(read.data.result)).toContain('hi');
    await ws.close();
    await expect.poll(() => s.app.grove.registry.list().length, { timeout: 30_000 }).toBe(0);
  }, 120_000);
});

describe('swe', () => {
  it('the gold patch is graded 1 in a fresh sandbox, an empty submission 0', async () => {
    const inst = (await fixtureInstances()).find((i) => i.instance_id === 'grove__textkit-2')!;
    const ws = await Frames.open(url('swe'));
    const reset = await ws.send({ type: 'reset', data: { task: inst.instance_id } });
    expect(reset.data.observation.problem_statement).toBe(inst.problem_statement);
    const head = await ws.send({ type: 'step', data: { command: 'git rev-parse HEAD' } });
    expect(head.data.observation.stdout.trim()).toBe(inst.base_commit);
    const gold = await ws.send({ type: 'step', data: { submit: true, patch: inst.patch } });
    expect(gold.data).toMatchObject({ done: true, reward: 1, observation: { evaluation: { resolved: true, resolution: 'FULL' } } });
    await ws.send({ type: 'reset', data: { task: inst.instance_id } });
    const empty = await ws.send({ type: 'step', data: { command: 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached' } });
    expect(empty.data).toMatchObject({ done: true, reward: 0, observation: { evaluation: { error: 'empty_patch' } } });
    await ws.close();
    await expect.poll(() => s.app.grove.registry.list().length, { timeout: 30_000 }).toBe(0);
  }, 300_000);
});
