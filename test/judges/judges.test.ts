// Every LLM judge against the local OpenAI-compatible server: what each protocol sends (images, order, count,
// text fields) and how each reply shape parses, failures included.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAutonomousJudge,
  createDeepShopJudge,
  createWebJudge,
  createWebVoyagerJudge,
  JudgeModel,
  memoryCache,
  type JudgeInput,
  type JudgeModelConfigInput,
} from '../../judges/index.ts';
import { IMAGE_SYSTEM, KEY_POINTS_SYSTEM, OUTCOME_SYSTEM } from '../../judges/webjudge.ts';
import type { Task } from '../../protocol/task.ts';
import { startOpenAIServer, type ChatRequestRecord, type OpenAITestServer, type ScriptedReply } from '../support/openai-server.ts';

// One server for the file; each test installs its own reply script.
let server: OpenAITestServer;
let script: (req: ChatRequestRecord, i: number) => ScriptedReply = () => 'SUCCESS';
let dir: string;
beforeAll(async () => {
  server = await startOpenAIServer((req, i) => script(req, i));
  dir = await mkdtemp(join(tmpdir(), 'grove-judges-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

const cfg = (o: Partial<JudgeModelConfigInput> = {}): JudgeModelConfigInput => ({
  baseURL: server.url,
  model: 'judge-model',
  retries: 1,
  httpRetries: 0,
  timeoutMs: 5_000,
  ...o,
});
/** Requests made while `fn` runs. */
async function during<T>(fn: () => Promise<T>): Promise<{ value: T; reqs: ChatRequestRecord[] }> {
  const start = server.requests.length;
  const value = await fn();
  return { value, reqs: server.requests.slice(start) };
}

const shots = (n: number) => Array.from({ length: n }, (_, i) => ({ bytes: Buffer.from(`shot-${i}`), mime: 'image/png' }));
const task = (o: Partial<Task> = {}): Task => ({
  id: 'Site--1',
  suite: 'webvoyager',
  site: 'Site',
  question: 'Find the cheapest red kettle',
  extra: {},
  flags: [],
  ...o,
});
const input = (o: Partial<JudgeInput> = {}): JudgeInput => ({
  task: task(),
  answer: 'The Acme kettle at $12',
  screenshots: shots(7),
  actions: ['Click [3]', 'Type [1]; red kettle', 'ANSWER; The Acme kettle at $12'],
  ...o,
});

type Part = { type: string; text?: string; image_url?: { url: string } };
const userParts = (r: ChatRequestRecord): Part[] => r.body.messages[1].content;
const system = (r: ChatRequestRecord): string => r.body.messages[0].content;
/** The decoded images of a request, in order, as their text (the test bytes are "shot-N"). */
const images = (r: ChatRequestRecord) =>
  userParts(r)
    .filter((p) => p.type === 'image_url')
    .map((p) => {
      const m = /^data:(.+?);base64,(.*)$/.exec(p.image_url!.url)!;
      return `${m[1]}:${Buffer.from(m[2], 'base64').toString()}`;
    });
const texts = (r: ChatRequestRecord) => userParts(r).filter((p) => p.type === 'text').map((p) => p.text!);

describe('WebVoyager auto-eval protocol', () => {
  it('sends task, answer and the last k screenshots oldest first, then a closing text part', async () => {
    script = () => 'The kettle is shown in the cart.\nSUCCESS';
    const judge = createWebVoyagerJudge({ model: new JudgeModel(cfg()), k: 3 });
    const { value: v, reqs } = await during(() => judge.judge(input()));
    expect(reqs).toHaveLength(1);
    const r = reqs[0];
    expect(r.body.model).toBe('judge-model');
    expect(r.body.temperature).toBe(0);
    expect(r.body.seed).toBe(42);
    expect(r.body.max_tokens).toBe(1024);
    expect(r.body.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user']);
    expect(system(r)).toMatch(/SUCCESS or NOT SUCCESS/);
    expect(userParts(r).map((p) => p.type)).toEqual(['text', 'image_url', 'image_url', 'image_url', 'text']);
    expect(images(r)).toEqual(['image/png:shot-4', 'image/png:shot-5', 'image/png:shot-6']);
    expect(texts(r)[0]).toBe(
      "Task: Find the cheapest red kettle\nAgent's final response: The Acme kettle at $12\nThe last 3 screenshot(s) of the session, oldest first:",
    );
    expect(texts(r)[1]).toBe('Your verdict:');
    expect(v).toMatchObject({ judge: 'webvoyager', outcome: 'success', score: 1, details: { predicted_label: 1, k: 3, images_sent: 3 } });
  });

  it('k defaults to 15 (all 7 here); fewer screenshots than k sends them all', async () => {
    script = () => 'NOT SUCCESS';
    const judge = createWebVoyagerJudge({ model: new JudgeModel(cfg()) });
    const { value: v, reqs } = await during(() => judge.judge(input({ screenshots: shots(20) })));
    expect(images(reqs[0])).toHaveLength(15);
    expect(images(reqs[0])[0]).toBe('image/png:shot-5');
    expect(v.outcome).toBe('failure');
    expect(v.score).toBe(0);
  });

  it('no answer → failure without calling the model', async () => {
    const judge = createWebVoyagerJudge({ model: new JudgeModel(cfg()) });
    for (const answer of [undefined, '', '   ']) {
      const { value: v, reqs } = await during(() => judge.judge(input({ answer })));
      expect(reqs).toHaveLength(0);
      expect(v).toMatchObject({ outcome: 'failure', score: 0, details: { no_answer: true } });
    }
  });

  it('a reply with neither verdict is retried, then judge_error (missing_verdict) with the raw reply', async () => {
    script = () => 'I am not sure what happened here.';
    const judge = createWebVoyagerJudge({ model: new JudgeModel(cfg({ retries: 2 })) });
    const { value: v, reqs } = await during(() => judge.judge(input()));
    expect(reqs).toHaveLength(3);
    expect(v).toMatchObject({ outcome: 'judge_error', details: { error_kind: 'missing_verdict', raw: 'I am not sure what happened here.' } });
    expect(v.score).toBeUndefined();
  });

  it('a retry that yields a verdict wins', async () => {
    const start = server.requests.length;
    script = (_r, i) => (i === start ? 'hmm' : 'SUCCESS');
    const judge = createWebVoyagerJudge({ model: new JudgeModel(cfg({ retries: 1 })) });
    const { value: v, reqs } = await during(() => judge.judge(input()));
    expect(reqs).toHaveLength(2);
    expect(v.outcome).toBe('success');
  });

  it.each([
    ['HTTP 500', { status: 500 } as ScriptedReply, 'api_error'],
    ['HTTP 400', { status: 400, body: { error: { message: 'bad image', type: 'invalid_request_error' } } } as ScriptedReply, 'api_error'],
    ['malformed JSON body', { raw: '{"choices": [' } as ScriptedReply, 'api_error'],
    ['empty content', { content: null } as ScriptedReply, 'missing_verdict'],
  ])('%s → judge_error (%s), never a failure', async (_name, reply, kind) => {
    script = () => reply;
    const judge = createWebVoyagerJudge({ model: new JudgeModel(cfg({ retries: 1 })) });
    const { value: v, reqs } = await during(() => judge.judge(input()));
    expect(reqs).toHaveLength(2);
    expect(v.outcome).toBe('judge_error');
    expect(v.details?.error_kind).toBe(kind);
  });

  it('timeout → judge_error (timeout)', async () => {
    script = () => ({ delay_ms: 1500, reply: 'SUCCESS' });
    const judge = createWebVoyagerJudge({ model: new JudgeModel(cfg({ retries: 0, timeoutMs: 200 })) });
    const v = await judge.judge(input());
    expect(v).toMatchObject({ outcome: 'judge_error', details: { error_kind: 'timeout' } });
  });

  it('results are cached by a hash of the inputs; the record beside the episode holds inputs and raw outputs', async () => {
    script = () => 'Looks right. SUCCESS';
    const cache = memoryCache();
    const judge = createWebVoyagerJudge({ model: new JudgeModel(cfg(), { cache }), k: 2, cache });
    const ep = join(dir, 'ep-cache');
    const first = await during(() => judge.judge(input({ episodeDir: ep })));
    expect(first.reqs).toHaveLength(1);
    const again = await during(() => judge.judge(input({ episodeDir: ep })));
    expect(again.reqs).toHaveLength(0);
    expect(again.value).toMatchObject({ outcome: 'success', details: { cached: true } });
    // A different answer is a different input.
    const other = await during(() => judge.judge(input({ answer: 'Another kettle', episodeDir: ep })));
    expect(other.reqs).toHaveLength(1);
    const rec = JSON.parse(await readFile(join(ep, 'judge', 'webvoyager.json'), 'utf8'));
    expect(rec).toMatchObject({ judge: 'webvoyager', config: { k: 2 }, answer: 'Another kettle', cached: false, verdict: { outcome: 'success' } });
    expect(rec.screenshots.map((s: { bytes: number }) => s.bytes)).toEqual([6, 6]);
    expect(rec.calls).toHaveLength(1);
    expect(rec.calls[0].response).toBe('Looks right. SUCCESS');
    // Images are recorded by hash, not inlined.
    expect(rec.calls[0].request.messages[1].content[1]).toMatchObject({ type: 'image_url', image: { mime: 'image/png', bytes: 6 } });
    expect(JSON.stringify(rec)).not.toContain('base64');
  });

  it('judge errors are not cached', async () => {
    const cache = memoryCache();
    script = () => 'no verdict';
    const judge = createWebVoyagerJudge({ model: new JudgeModel(cfg({ retries: 0 }), { cache }), cache });
    expect((await judge.judge(input())).outcome).toBe('judge_error');
    expect(cache.size()).toBe(0);
    script = () => 'SUCCESS';
    expect((await judge.judge(input())).outcome).toBe('success');
  });

  it('a missing screenshot file is a judge_error (bad_input), not a task failure', async () => {
    const judge = createWebVoyagerJudge({ model: new JudgeModel(cfg()) });
    const v = await judge.judge(input({ screenshots: [{ path: join(dir, 'nope.png'), mime: 'image/png' }] }));
    expect(v).toMatchObject({ outcome: 'judge_error', details: { error_kind: 'bad_input' } });
  });
});

describe('Online-Mind2Web WebJudge', () => {
  // Route replies by stage (system prompt) and, for images, by which screenshot was sent.
  const scores: Record<string, string> = {
    'shot-0': '**Reasoning**: The search page with the query typed.\n**Score**: 5',
    'shot-1': '**Reasoning**: An unrelated banner.\n**Score**: 2',
    'shot-2': 'I cannot tell.',
    'shot-3': '**Reasoning**: Results sorted by price, kettle visible.\n\nExtra text.\n**Score**: 4',
  };
  const webjudgeScript = (outcome: string) => (r: ChatRequestRecord): ScriptedReply => {
    const sys = system(r);
    if (sys === KEY_POINTS_SYSTEM) return 'Here they are.\n\n**Key Points**:\n  1. Red kettle\n\n  2. Sort by price: low to high';
    if (sys === IMAGE_SYSTEM) return scores[images(r)[0].split(':')[1]];
    if (sys === OUTCOME_SYSTEM) return outcome;
    return { status: 500 };
  };

  it('key points, then every screenshot scored, then the outcome with kept screenshots and reasons', async () => {
    script = webjudgeScript('Thoughts: the sort was applied and the kettle found.\nStatus: "success"');
    const judge = createWebJudge({ model: new JudgeModel(cfg({ retries: 0 })) });
    const { value: v, reqs } = await during(() => judge.judge(input({ screenshots: shots(4) })));
    const kp = reqs.filter((r) => system(r) === KEY_POINTS_SYSTEM);
    const img = reqs.filter((r) => system(r) === IMAGE_SYSTEM);
    const out = reqs.filter((r) => system(r) === OUTCOME_SYSTEM);
    expect([kp.length, img.length, out.length]).toEqual([1, 4, 1]);
    expect([kp[0].body.max_tokens, img[0].body.max_tokens, out[0].body.max_tokens]).toEqual([2048, 2048, 1024]);
    // Stage 1: the task alone, no image.
    expect(texts(kp[0])).toEqual(['Task: Find the cheapest red kettle']);
    expect(images(kp[0])).toEqual([]);
    // Stage 2: one image per request, with task and parsed key points.
    expect(img.map((r) => images(r)).sort()).toEqual([['image/png:shot-0'], ['image/png:shot-1'], ['image/png:shot-2'], ['image/png:shot-3']]);
    expect(texts(img[0])[0]).toBe(
      'Task: Find the cheapest red kettle\n\nKey points for completing the task:\n1. Red kettle\n2. Sort by price: low to high\n\nThe screenshot of the web page follows.',
    );
    // Stage 3: kept screenshots (score >= 3) in trajectory order, their reasons numbered, actions numbered.
    expect(images(out[0])).toEqual(['image/png:shot-0', 'image/png:shot-3']);
    expect(texts(out[0])).toEqual([
      'User task: Find the cheapest red kettle\n\nKey points:\n1. Red kettle\n2. Sort by price: low to high\n\n' +
        'Action history:\n1. Click [3]\n2. Type [1]; red kettle\n3. ANSWER; The Acme kettle at $12\n\n' +
        "Screenshots from the agent's session that may matter, and why each was selected:\n" +
        // The reason runs to the first blank line, so a score line right below it comes along (as in the original).
        '1. The search page with the query typed. **Score**: 5\n2. Results sorted by price, kettle visible.',
    ]);
    expect(v.outcome).toBe('success');
    expect(v.details).toMatchObject({
      predicted_label: 1,
      key_points: '1. Red kettle\n2. Sort by price: low to high',
      kept_images: [0, 3],
      evaluation_details: { predicted_label: 1 },
      system_msg: OUTCOME_SYSTEM,
      score_threshold: 3,
    });
    const record = v.details!.image_judge_record as { Score: number; kept: boolean; parse_error?: string }[];
    expect(record.map((r) => r.Score)).toEqual([5, 2, 0, 4]);
    expect(record.map((r) => r.kept)).toEqual([true, false, false, true]);
    expect(record[2].parse_error).toMatch(/no verdict/);
  });

  it('threshold 5 keeps one screenshot; no kept screenshot leaves the section out; failure parses', async () => {
    script = webjudgeScript('Thoughts: no sort applied.\nStatus: "failure"');
    const judge5 = createWebJudge({ model: new JudgeModel(cfg({ retries: 0 })), scoreThreshold: 5 });
    const a = await during(() => judge5.judge(input({ screenshots: shots(4) })));
    expect(images(a.reqs.find((r) => system(r) === OUTCOME_SYSTEM)!)).toEqual(['image/png:shot-0']);
    expect(a.value).toMatchObject({ outcome: 'failure', score: 0, details: { predicted_label: 0 } });
    const b = await during(() => judge5.judge(input({ screenshots: shots(4).slice(1, 3) })));
    const out = b.reqs.find((r) => system(r) === OUTCOME_SYSTEM)!;
    expect(images(out)).toEqual([]);
    expect(texts(out)[0]).not.toContain('Screenshots from');
    expect(texts(out)[0].endsWith('3. ANSWER; The Acme kettle at $12')).toBe(true);
  });

  it('an outcome without "Status:" is a judge_error; an image call failing on the wire too', async () => {
    script = webjudgeScript('Thoughts: fine.');
    const judge = createWebJudge({ model: new JudgeModel(cfg({ retries: 0 })) });
    expect(await judge.judge(input({ screenshots: shots(2) }))).toMatchObject({ outcome: 'judge_error', details: { error_kind: 'missing_verdict' } });
    script = (r) => (system(r) === IMAGE_SYSTEM ? { status: 503 } : webjudgeScript('Status: success')(r));
    expect(await judge.judge(input({ screenshots: shots(2) }))).toMatchObject({ outcome: 'judge_error', details: { error_kind: 'api_error' } });
  });

  it('screenshots are scored in parallel, bounded by the endpoint concurrency', async () => {
    // Server-side count: a request is active from its arrival until its delayed reply is sent.
    let active = 0;
    let peak = 0;
    script = (r) => {
      if (system(r) !== IMAGE_SYSTEM) return webjudgeScript('Status: success')(r);
      active++;
      peak = Math.max(peak, active);
      setTimeout(() => active--, 80);
      return { delay_ms: 80, reply: '**Reasoning**: ok\n**Score**: 3' };
    };
    const judge = createWebJudge({ model: new JudgeModel(cfg({ concurrency: 3 })) });
    const v = await judge.judge(input({ screenshots: shots(8) }));
    expect(v.outcome).toBe('success');
    expect(peak).toBe(3);
  });
});

describe('Online-Mind2Web autonomous eval', () => {
  it('sends task, numbered actions and only the last screenshot; Status parses', async () => {
    script = () => 'Thoughts: done.\nStatus: success';
    const judge = createAutonomousJudge({ model: new JudgeModel(cfg()) });
    const { value: v, reqs } = await during(() => judge.judge(input({ screenshots: shots(5) })));
    expect(reqs).toHaveLength(1);
    expect(images(reqs[0])).toEqual(['image/png:shot-4']);
    expect(texts(reqs[0])[0]).toBe(
      'User task: Find the cheapest red kettle\n\nAction history:\n1. Click [3]\n2. Type [1]; red kettle\n3. ANSWER; The Acme kettle at $12\n\nThe last screenshot of the session follows.',
    );
    expect(v).toMatchObject({ judge: 'autonomous', outcome: 'success', details: { predicted_label: 1 } });
  });
});

describe('DeepShop', () => {
  const ds = (o: Record<string, unknown>) =>
    task({ id: 'Amazon--1', suite: 'deepshop', site: 'Amazon', extra: { attribute: 'Red kettle, 1.7 L', filter: 'Rated 4+ stars', sort: null, ...o } });

  it('one judgement per present dimension with its text as the task; all must pass', async () => {
    script = (r) => (texts(r)[0].startsWith('Task: Red kettle') ? 'Attribute met. SUCCESS' : 'Rating filter not applied. NOT SUCCESS');
    const judge = createDeepShopJudge({ model: new JudgeModel(cfg()), k: 2 });
    const { value: v, reqs } = await during(() => judge.judge(input({ task: ds({}) })));
    expect(reqs).toHaveLength(2);
    const byTask = reqs.map((r) => texts(r)[0].split('\n')[0]).sort();
    expect(byTask).toEqual(['Task: Rated 4+ stars', 'Task: Red kettle, 1.7 L']);
    for (const r of reqs) {
      expect(images(r)).toEqual(['image/png:shot-5', 'image/png:shot-6']);
      expect(texts(r)[0]).toContain("Agent's final response: The Acme kettle at $12");
    }
    expect(v).toMatchObject({ outcome: 'failure', score: 0, details: { dimensions: { attribute: 1, filter: 0, sort: null }, predicted_label: 0 } });
  });

  it('all present dimensions passing is success; "None" strings count as absent', async () => {
    script = () => 'SUCCESS';
    const judge = createDeepShopJudge({ model: new JudgeModel(cfg()) });
    const { value: v, reqs } = await during(() => judge.judge(input({ task: ds({ filter: 'None', sort: 'Price: low to high' }) })));
    expect(reqs).toHaveLength(2);
    expect(v).toMatchObject({ outcome: 'success', details: { dimensions: { attribute: 1, filter: null, sort: 1 } } });
  });

  it('no answer → every present dimension 0 without a call; a dimension without verdict → judge_error', async () => {
    const judge = createDeepShopJudge({ model: new JudgeModel(cfg({ retries: 0 })) });
    const none = await during(() => judge.judge(input({ task: ds({}), answer: undefined })));
    expect(none.reqs).toHaveLength(0);
    expect(none.value).toMatchObject({ outcome: 'failure', details: { dimensions: { attribute: 0, filter: 0, sort: null } } });
    script = (r) => (texts(r)[0].startsWith('Task: Red kettle') ? 'SUCCESS' : 'unclear');
    const v = await judge.judge(input({ task: ds({}) }));
    expect(v).toMatchObject({ outcome: 'judge_error', details: { dimensions: { attribute: 1, filter: 'judge_error', sort: null }, error_kind: 'missing_verdict' } });
  });

  it('a task without DeepShop fields is a judge_error (bad_input), not a vacuous success', async () => {
    const judge = createDeepShopJudge({ model: new JudgeModel(cfg()) });
    const { value: v, reqs } = await during(() => judge.judge(input()));
    expect(reqs).toHaveLength(0);
    expect(v).toMatchObject({ outcome: 'judge_error', details: { error_kind: 'bad_input' } });
    expect(v.reasoning).toMatch(/--tasks/);
  });
});
