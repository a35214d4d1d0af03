// Every LLM judge against the local OpenAI-compatible server: what each protocol sends (images, order, count,
// text fields) and how each reply shape parses, failures included.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import sharp from 'sharp';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAutonomousJudge,
  createDeepShopJudge,
  createWebJudge,
  createWebVoyagerJudge,
  JudgeModel,
  loadPromptDir,
  memoryCache,
  type JudgeInput,
  type JudgeModelConfigInput,
} from '../../judges/index.ts';
import { IMAGE_SYSTEM, KEY_POINTS_SYSTEM, OUTCOME_SYSTEM } from '../../judges/webjudge.ts';
import type { Task } from '../../protocol/task.ts';
import { startOpenAIServer, type ChatRequestRecord, type OpenAITestServer, type ScriptedReply } from '../support/openai-server.ts';

// One server for the file; each test installs its own reply script.
let server: OpenAITestServer;
let script: (req: ChatRequestRecord, i: number) => ScriptedReply | Promise<ScriptedReply> = () => 'SUCCESS';
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
    // auto_eval.py's request parameters.
    expect(r.body.max_tokens).toBe(1000);
    expect(r.body.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user']);
    expect(system(r)).toMatch(/SUCCESS or NOT SUCCESS/);
    expect(userParts(r).map((p) => p.type)).toEqual(['text', 'image_url', 'image_url', 'image_url', 'text']);
    expect(images(r)).toEqual(['image/png:shot-4', 'image/png:shot-5', 'image/png:shot-6']);
    expect(texts(r)[0]).toBe(
      "Task: Find the cheapest red kettle\nAgent's final response: The Acme kettle at $12\nUp to the last 3 screenshots of the session follow, oldest first:",
    );
    expect(texts(r)[1]).toBe('Your verdict:');
    expect(v).toMatchObject({ judge: 'webvoyager', outcome: 'success', score: 1, details: { predicted_label: 1, k: 3, images_sent: 3, prompts: 'grove' } });
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

  it('a reply with neither verdict is unparsed (auto_eval.py: None, left out): not retried, not a judge_error', async () => {
    for (const reply of ['I am not sure what happened here.', 'not success', { content: null } as ScriptedReply]) {
      script = () => reply;
      const judge = createWebVoyagerJudge({ model: new JudgeModel(cfg({ retries: 2 })) });
      const { value: v, reqs } = await during(() => judge.judge(input()));
      expect(reqs).toHaveLength(1);
      expect(v).toMatchObject({ outcome: 'unparsed', details: { predicted_label: null, unparsed: true } });
      expect(v.score).toBeUndefined();
    }
  });

  it('a retry after a transport failure that yields a verdict wins', async () => {
    const start = server.requests.length;
    script = (_r, i) => (i === start ? { status: 502 } : 'SUCCESS');
    const judge = createWebVoyagerJudge({ model: new JudgeModel(cfg({ retries: 1 })) });
    const { value: v, reqs } = await during(() => judge.judge(input()));
    expect(reqs).toHaveLength(2);
    expect(v.outcome).toBe('success');
  });

  it.each([
    ['HTTP 500', { status: 500 } as ScriptedReply, 'api_error'],
    ['HTTP 400', { status: 400, body: { error: { message: 'bad image', type: 'invalid_request_error' } } } as ScriptedReply, 'api_error'],
    ['malformed JSON body', { raw: '{"choices": [' } as ScriptedReply, 'api_error'],
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
    script = () => ({ status: 500 });
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

/** Real PNG screenshots whose width tells them apart (10 + i px): WebJudge re-encodes them, so bytes change. */
const pngShots = (n: number) =>
  Promise.all(
    Array.from({ length: n }, async (_, i) => ({
      bytes: await sharp({ create: { width: 10 + i, height: 8, channels: 4, background: { r: 200, g: 40, b: 40, alpha: 1 } } }).png().toBuffer(),
      mime: 'image/png',
    })),
  );
/** The images of a request as "<mime>/<detail>:shot-<i>", decoded (the index from the width). */
async function jpegImages(r: ChatRequestRecord): Promise<string[]> {
  const parts = userParts(r).filter((p) => p.type === 'image_url') as { image_url: { url: string; detail?: string } }[];
  return Promise.all(
    parts.map(async (p) => {
      const m = /^data:(.+?);base64,(.*)$/.exec(p.image_url.url)!;
      const meta = await sharp(Buffer.from(m[2], 'base64')).metadata();
      return `${m[1]}/${meta.format}/${p.image_url.detail}:shot-${meta.width! - 10}`;
    }),
  );
}

describe('Online-Mind2Web WebJudge', () => {
  // Route replies by stage (system prompt) and, for images, by which screenshot was sent.
  const scores: Record<string, string> = {
    'shot-0': '**Reasoning**: The search page with the query typed.\n**Score**: 5',
    'shot-1': '**Reasoning**: An unrelated banner.\n**Score**: 2',
    'shot-2': 'I cannot tell.',
    'shot-3': '**Reasoning**: Results sorted by price, kettle visible.\n\nExtra text.\n**Score**: 4',
  };
  const webjudgeScript = (outcome: string) => async (r: ChatRequestRecord): Promise<ScriptedReply> => {
    const sys = system(r);
    if (sys === KEY_POINTS_SYSTEM) return 'Here they are.\n\n**Key Points**:\n  1. Red kettle\n\n  2. Sort by price: low to high';
    if (sys === IMAGE_SYSTEM) return scores[(await jpegImages(r))[0].split(':')[1]];
    if (sys === OUTCOME_SYSTEM) return outcome;
    return { status: 500 };
  };
  const actions = ['Click [3]', 'Type [1]; red kettle'];

  it('key points, then every screenshot scored, then the outcome with kept screenshots (JPEG, detail high) and reasons', async () => {
    script = webjudgeScript('Thoughts: the sort was applied and the kettle found.\nStatus: "success"');
    const judge = createWebJudge({ model: new JudgeModel(cfg({ retries: 0 })) });
    const { value: v, reqs } = await during(async () => judge.judge(input({ screenshots: await pngShots(4), actions })));
    const kp = reqs.filter((r) => system(r) === KEY_POINTS_SYSTEM);
    const img = reqs.filter((r) => system(r) === IMAGE_SYSTEM);
    const out = reqs.filter((r) => system(r) === OUTCOME_SYSTEM);
    expect([kp.length, img.length, out.length]).toEqual([1, 4, 1]);
    // OpenaiEngine.generate's parameters on every stage.
    for (const r of [kp[0], img[0], out[0]]) expect([r.body.temperature, r.body.max_tokens]).toEqual([0, 512]);
    // Stage 1: the task alone, no image.
    expect(texts(kp[0])).toEqual(['Task: Find the cheapest red kettle']);
    expect(images(kp[0])).toEqual([]);
    // Stage 2: one image per request, re-encoded to JPEG with detail high, with task and parsed key points.
    expect((await Promise.all(img.map(jpegImages))).sort()).toEqual([
      ['image/jpeg/jpeg/high:shot-0'],
      ['image/jpeg/jpeg/high:shot-1'],
      ['image/jpeg/jpeg/high:shot-2'],
      ['image/jpeg/jpeg/high:shot-3'],
    ]);
    expect(texts(img[0])[0]).toBe(
      'Task: Find the cheapest red kettle\n\nKey points for completing the task:\n1. Red kettle\n2. Sort by price: low to high\n\nThe screenshot of the web page follows.',
    );
    // Stage 3: kept screenshots (score >= 3) in trajectory order, their reasons numbered, actions numbered.
    expect(await jpegImages(out[0])).toEqual(['image/jpeg/jpeg/high:shot-0', 'image/jpeg/jpeg/high:shot-3']);
    expect(texts(out[0])).toEqual([
      'User task: Find the cheapest red kettle\n\nKey points:\n1. Red kettle\n2. Sort by price: low to high\n\n' +
        'Action history:\n1. Click [3]\n2. Type [1]; red kettle\n\n' +
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
      prompts: 'grove',
    });
    const record = v.details!.image_judge_record as { Score: number; kept: boolean; parse_error?: string }[];
    expect(record.map((r) => r.Score)).toEqual([5, 2, 0, 4]);
    expect(record.map((r) => r.kept)).toEqual([true, false, false, true]);
    expect(record[2].parse_error).toMatch(/no score/);
  });

  it('threshold 5 keeps one screenshot; no kept screenshot leaves the section out; failure parses', async () => {
    script = webjudgeScript('Thoughts: no sort applied.\nStatus: "failure"');
    const judge5 = createWebJudge({ model: new JudgeModel(cfg({ retries: 0 })), scoreThreshold: 5 });
    const four = await pngShots(4);
    const a = await during(() => judge5.judge(input({ screenshots: four, actions })));
    expect(await jpegImages(a.reqs.find((r) => system(r) === OUTCOME_SYSTEM)!)).toEqual(['image/jpeg/jpeg/high:shot-0']);
    expect(a.value).toMatchObject({ outcome: 'failure', score: 0, details: { predicted_label: 0 } });
    const b = await during(() => judge5.judge(input({ screenshots: four.slice(1, 3), actions })));
    const out = b.reqs.find((r) => system(r) === OUTCOME_SYSTEM)!;
    expect(images(out)).toEqual([]);
    expect(texts(out)[0]).not.toContain('Screenshots from');
    expect(texts(out)[0].endsWith('2. Type [1]; red kettle')).toBe(true);
  });

  it('an outcome without "Status:" counts 0 as utils.py does (a failure marked unparsed), not retried; a wire failure is a judge_error', async () => {
    script = webjudgeScript('Thoughts: fine.');
    const judge = createWebJudge({ model: new JudgeModel(cfg({ retries: 2 })) });
    const { value, reqs } = await during(async () => judge.judge(input({ screenshots: await pngShots(2) })));
    expect(reqs.filter((r) => system(r) === OUTCOME_SYSTEM)).toHaveLength(1);
    expect(value).toMatchObject({ outcome: 'failure', score: 0, details: { predicted_label: 0, unparsed: true } });
    script = async (r) => (system(r) === IMAGE_SYSTEM ? { status: 503 } : webjudgeScript('Status: success')(r));
    expect(await judge.judge(input({ screenshots: await pngShots(2) }))).toMatchObject({ outcome: 'judge_error', details: { error_kind: 'api_error' } });
  });

  it('an undecodable screenshot is a judge_error (bad_input)', async () => {
    script = webjudgeScript('Status: success');
    const judge = createWebJudge({ model: new JudgeModel(cfg({ retries: 0 })) });
    expect(await judge.judge(input({ screenshots: shots(1) }))).toMatchObject({ outcome: 'judge_error', details: { error_kind: 'bad_input' } });
  });

  it('screenshots are scored in parallel, bounded by the endpoint concurrency', async () => {
    // Server-side count: a request is active from its arrival until shortly before its delayed reply is sent. The
    // count ends on a timer due before the reply's, so it has always ended when the client can send its next
    // request (with both due at 80 ms, a loaded CI machine ran the reply first once, and counted 4).
    let active = 0;
    let peak = 0;
    script = (r) => {
      if (system(r) !== IMAGE_SYSTEM) return webjudgeScript('Status: success')(r);
      active++;
      peak = Math.max(peak, active);
      setTimeout(() => active--, 60);
      return { delay_ms: 80, reply: '**Reasoning**: ok\n**Score**: 3' };
    };
    const judge = createWebJudge({ model: new JudgeModel(cfg({ concurrency: 3 })) });
    const v = await judge.judge(input({ screenshots: await pngShots(8) }));
    expect(v.outcome).toBe('success');
    expect(peak).toBe(3);
  });
});

describe('Online-Mind2Web autonomous eval', () => {
  it('sends task, numbered actions and only the last screenshot (JPEG, detail high); Status parses', async () => {
    script = () => 'Thoughts: done.\nStatus: success';
    const judge = createAutonomousJudge({ model: new JudgeModel(cfg()) });
    const { value: v, reqs } = await during(async () => judge.judge(input({ screenshots: await pngShots(5), actions: ['Click [3]'] })));
    expect(reqs).toHaveLength(1);
    expect(await jpegImages(reqs[0])).toEqual(['image/jpeg/jpeg/high:shot-4']);
    expect(texts(reqs[0])[0]).toBe('User task: Find the cheapest red kettle\n\nAction history:\n1. Click [3]\n\nThe last screenshot of the session follows.');
    expect(v).toMatchObject({ judge: 'autonomous', outcome: 'success', details: { predicted_label: 1 } });
  });
});

describe('judge request parameters', () => {
  it("unset: the original's values; null drops a field (reasoning models); max_completion_tokens on request", async () => {
    script = () => 'SUCCESS';
    const send = async (o: Partial<JudgeModelConfigInput>) =>
      (await during(() => createWebVoyagerJudge({ model: new JudgeModel(cfg(o)) }).judge(input()))).reqs[0].body;
    const original = await send({});
    expect([original.temperature, original.max_tokens, original.seed]).toEqual([0, 1000, 42]);
    const o4 = await send({ model: 'o4-mini', temperature: null, maxTokens: null });
    expect('temperature' in o4 || 'max_tokens' in o4 || 'max_completion_tokens' in o4).toBe(false);
    const mct = await send({ temperature: null, maxTokens: 4000, maxTokensField: 'max_completion_tokens' });
    expect([mct.max_completion_tokens, 'max_tokens' in mct, 'temperature' in mct]).toEqual([4000, false, false]);
    const set = await send({ temperature: 0.5, maxTokens: 300 });
    expect([set.temperature, set.max_tokens]).toEqual([0.5, 300]);
  });
});

describe('--judge-prompts: user-supplied prompt texts', () => {
  it('fills the original placeholders, sends the texts as given, and records which prompts were used', async () => {
    const pdir = join(dir, 'prompts');
    await mkdir(pdir, { recursive: true });
    await writeFile(join(pdir, 'webvoyager.system.txt'), 'USER SYSTEM TEXT');
    await writeFile(join(pdir, 'webvoyager.user.txt'), 'TASK: <task>\nResult Response: <answer>\n<num> screenshots at the end: ');
    await writeFile(join(pdir, 'webvoyager.closing.txt'), 'Your verdict:\n');
    const prompts = await loadPromptDir(pdir);
    script = () => 'SUCCESS';
    const judge = createWebVoyagerJudge({ model: new JudgeModel(cfg()), k: 15, prompts });
    const ep = join(dir, 'ep-prompts');
    const { value: v, reqs } = await during(() => judge.judge(input({ screenshots: shots(2), episodeDir: ep })));
    expect(system(reqs[0])).toBe('USER SYSTEM TEXT');
    expect(texts(reqs[0])).toEqual(['TASK: Find the cheapest red kettle\nResult Response: The Acme kettle at $12\n15 screenshots at the end: ', 'Your verdict:\n']);
    expect(v.details?.prompts).toBe('user');
    const rec = JSON.parse(await readFile(join(ep, 'judge', 'webvoyager.json'), 'utf8'));
    expect(rec.prompts).toMatchObject({ source: 'user', dir: pdir, files: { 'webvoyager.system': expect.stringMatching(/^[0-9a-f]{64}$/) } });
    // A judge with no file in the folder keeps Grove's texts, and says so.
    const auto = await createAutonomousJudge({ model: new JudgeModel(cfg()), prompts }).judge(input({ screenshots: await pngShots(1) }));
    expect(auto.details?.prompts).toBe('grove');
  });

  it('an unknown file name in the folder is an error naming the known slots', async () => {
    const pdir = join(dir, 'prompts-typo');
    await mkdir(pdir, { recursive: true });
    await writeFile(join(pdir, 'webvoyager.sytem.txt'), 'x');
    await expect(loadPromptDir(pdir)).rejects.toThrow(/unknown prompt file webvoyager\.sytem\.txt.*webvoyager\.system\.txt/);
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

  it('no answer → every present dimension 0 without a call; a dimension without verdict scores 0 (as DeepShop) and is marked unparsed', async () => {
    const judge = createDeepShopJudge({ model: new JudgeModel(cfg({ retries: 0 })) });
    const none = await during(() => judge.judge(input({ task: ds({}), answer: undefined })));
    expect(none.reqs).toHaveLength(0);
    expect(none.value).toMatchObject({ outcome: 'failure', details: { dimensions: { attribute: 0, filter: 0, sort: null } } });
    script = (r) => (texts(r)[0].startsWith('Task: Red kettle') ? 'SUCCESS' : 'unclear');
    const v = await judge.judge(input({ task: ds({}) }));
    expect(v).toMatchObject({ outcome: 'failure', score: 0, details: { dimensions: { attribute: 1, filter: 0, sort: null }, unparsed: true, unparsed_dimensions: ['filter'] } });
    script = (r) => (texts(r)[0].startsWith('Task: Red kettle') ? 'SUCCESS' : { status: 500 });
    const e = await judge.judge(input({ task: ds({}) }));
    expect(e).toMatchObject({ outcome: 'judge_error', details: { dimensions: { attribute: 1, filter: 'judge_error', sort: null }, error_kind: 'api_error' } });
  });

  it('a task without DeepShop fields is a judge_error (bad_input), not a vacuous success', async () => {
    const judge = createDeepShopJudge({ model: new JudgeModel(cfg()) });
    const { value: v, reqs } = await during(() => judge.judge(input()));
    expect(reqs).toHaveLength(0);
    expect(v).toMatchObject({ outcome: 'judge_error', details: { error_kind: 'bad_input' } });
    expect(v.reasoning).toMatch(/--tasks/);
  });
});
