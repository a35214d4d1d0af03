// `grove judge` over the three layouts: real WebVoyager trajectories, an Online-Mind2Web result folder and
// Grove recordings; resume, reports, records and the agreement with rule ground truth.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJudge } from '../../cli/commands/judge.ts';
import { IMAGE_SYSTEM, KEY_POINTS_SYSTEM } from '../../judges/webjudge.ts';
import { writeSyntheticEpisode } from '../../recording/synthetic.ts';
import { startOpenAIServer, type ChatRequestRecord, type OpenAITestServer, type ScriptedReply } from '../support/openai-server.ts';
import { DATASETS } from '../support/datasets.ts';

const DATA = DATASETS;
const EXAMPLES = join(DATA, 'webvoyager/examples');
const haveData = existsSync(EXAMPLES);
if (!haveData) console.warn(`[test/judges] ${EXAMPLES} is absent: the WebVoyager-trajectory tests are skipped`);

let server: OpenAITestServer;
let script: (req: ChatRequestRecord, i: number) => ScriptedReply = () => 'SUCCESS';
let dir: string;
beforeAll(async () => {
  server = await startOpenAIServer((req, i) => script(req, i));
  dir = await mkdtemp(join(tmpdir(), 'grove-judge-cli-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

async function judge(...argv: string[]) {
  let out = '';
  let err = '';
  const start = server.requests.length;
  const code = await runJudge(['--judge-url', server.url, '--judge-model', 'judge-model', '--retries', '0', ...argv], {
    out: (s) => (out += s),
    err: (s) => (err += s),
  });
  return { code, out, err, reqs: server.requests.slice(start) };
}
type Part = { type: string; text?: string; image_url?: { url: string } };
const parts = (r: ChatRequestRecord): Part[] => r.body.messages[1].content;
const firstText = (r: ChatRequestRecord) => parts(r).find((p) => p.type === 'text')!.text!;
const imageCount = (r: ChatRequestRecord) => parts(r).filter((p) => p.type === 'image_url').length;

describe.skipIf(!haveData)('WebVoyager-layout results (the three real trajectories)', () => {
  it('judges each task folder, reports by site, and resumes without new calls', async () => {
    const out = join(dir, 'wv-out');
    script = (r) => (firstText(r).includes('climate change data visualization') ? 'Matches the screenshot. SUCCESS' : 'NOT SUCCESS');
    const first = await judge('--suite', 'webvoyager', '--episodes', EXAMPLES, '--out', out, '--tasks', join(DATA, 'webvoyager/WebVoyager_data.jsonl'));
    expect(first.err).not.toMatch(/not judged/);
    expect(first.code).toBe(0);
    expect(first.reqs).toHaveLength(3);
    const gh = first.reqs.find((r) => firstText(r).includes('climate change'))!;
    expect(firstText(gh)).toBe(
      "Task: Search for an open-source project related to 'climate change data visualization' on GitHub and report the project with the most stars.\n" +
        "Agent's final response: resource-watch/resource-watch with 63 stars\nUp to the last 15 screenshots of the session follow, oldest first:",
    );
    // GitHub--0 has screenshot1-5, ArXiv--11 screenshot1-7: all sent (k = 15), as PNG.
    expect(first.reqs.map(imageCount).sort()).toEqual([5, 5, 7]);
    expect(parts(gh)[1].image_url!.url.startsWith('data:image/png;base64,iVBOR')).toBe(true);
    expect(first.out).toMatch(/judge webvoyager: success rate 33\.3% \(1\/3 judged\), unparsed 0, judge_error 0, episodes 3/);
    expect(first.out).toMatch(/GitHub\s+100\.0%\s+1\s+0\s+0/);
    expect(first.out).toMatch(/ArXiv\s+0\.0%\s+0\s+1\s+0/);
    const lines = (await readFile(join(out, 'webvoyager_results.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.episode, l.task_id, l.site, l.predicted_label]).sort()).toEqual([
      ['taskArXiv--11', 'ArXiv--11', 'ArXiv', 0],
      ['taskCoursera--16', 'Coursera--16', 'Coursera', 0],
      ['taskGitHub--0', 'GitHub--0', 'GitHub', 1],
    ]);
    const rec = JSON.parse(await readFile(join(out, 'records/taskGitHub--0/webvoyager.json'), 'utf8'));
    expect(rec.screenshots.map((s: { path: string }) => s.path.split('/').pop())).toEqual([1, 2, 3, 4, 5].map((n) => `screenshot${n}.png`));
    expect(rec.calls[0].response).toBe('Matches the screenshot. SUCCESS');

    const again = await judge('--suite', 'webvoyager', '--episodes', EXAMPLES, '--out', out);
    expect(again.code).toBe(0);
    expect(again.reqs).toHaveLength(0);
    expect(again.out).toMatch(/judged 0, resumed 3/);
    expect(again.out).toMatch(/success rate 33\.3%/);
  });

  it('k=3 (Orchard-GUI reward) sends the last three screenshots', async () => {
    script = () => 'SUCCESS';
    const r = await judge('--suite', 'webvoyager', '--episodes', join(EXAMPLES, 'taskArXiv--11'), '--out', join(dir, 'wv-k3'), '--k', '3', '--no-cache');
    expect(r.code).toBe(0);
    expect(r.reqs).toHaveLength(1);
    expect(imageCount(r.reqs[0])).toBe(3);
    const rec = JSON.parse(await readFile(join(dir, 'wv-k3/records/_root/webvoyager.json'), 'utf8'));
    expect(rec.screenshots.map((s: { path: string }) => s.path.split('/').pop())).toEqual(['screenshot5.png', 'screenshot6.png', 'screenshot7.png']);
  });
});

describe('Online-Mind2Web-layout results', () => {
  it('WebJudge reads result.json and trajectory/, keeps the original result fields, retries judge errors on resume', async () => {
    const root = join(dir, 'om2w');
    for (const id of ['t1', 't2']) {
      await mkdir(join(root, id, 'trajectory'), { recursive: true });
      await writeFile(
        join(root, id, 'result.json'),
        JSON.stringify({
          task_id: id,
          task: `Find a red kettle (${id})`,
          final_result_response: 'Found it',
          action_history: ['<input> -> TYPE: red kettle', '<button> Sort -> CLICK'],
          thoughts: ['search', 'sort'],
        }),
      );
      for (const n of [0, 1, 2]) {
        const png = await sharp({ create: { width: 8 + n, height: 8, channels: 3, background: '#336699' } }).png().toBuffer();
        await writeFile(join(root, id, 'trajectory', `${n}_full_screenshot.png`), png);
      }
    }
    let failT2 = true;
    script = (r) => {
      const sys = r.body.messages[0].content;
      if (sys === KEY_POINTS_SYSTEM) return '**Key Points**:\n1. Red kettle';
      if (sys === IMAGE_SYSTEM) return '**Reasoning**: relevant\n**Score**: 4';
      if (firstText(r).includes('(t2)') && failT2) return { status: 500 };
      return 'Thoughts: ok\nStatus: success';
    };
    const tasksFile = join(dir, 'om2w-tasks.json');
    await writeFile(
      tasksFile,
      JSON.stringify([
        { task_id: 't1', confirmed_task: 'Find a red kettle (t1)', website: 'https://www.kettles.example/', reference_length: 3, level: 'easy' },
        { task_id: 't2', confirmed_task: 'Find a red kettle (t2)', website: 'https://www.kettles.example/', reference_length: 5, level: 'hard' },
      ]),
    );
    const first = await judge('--suite', 'online-mind2web', '--episodes', root, '--out', join(dir, 'om2w-out'), '--tasks', tasksFile);
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/judge webjudge: success rate 100\.0% \(1\/1 judged\), unparsed 0, judge_error 1, episodes 2/);
    expect(first.out).toMatch(/easy\s+100\.0%\s+1\s+0\s+0\s+0/);
    expect(first.out).toMatch(/hard\s+-\s+0\s+0\s+0\s+1/);
    const outcome = first.reqs.find((r) => firstText(r).startsWith('User task: Find a red kettle (t1)'))!;
    expect(firstText(outcome)).toContain('Action history:\n1. <input> -> TYPE: red kettle\n2. <button> Sort -> CLICK');
    expect(imageCount(outcome)).toBe(3);
    const lines = (await readFile(join(dir, 'om2w-out/webjudge_results.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    const t1 = lines.find((l) => l.task_id === 't1');
    expect(t1).toMatchObject({ predicted_label: 1, key_points: '1. Red kettle', site: 'kettles.example', level: 'easy', evaluation_details: { predicted_label: 1 } });
    expect(t1.image_judge_record.map((r: { Score: number }) => r.Score)).toEqual([4, 4, 4]);
    expect(lines.find((l) => l.task_id === 't2')).toMatchObject({ outcome: 'judge_error', predicted_label: null, error_kind: 'api_error' });

    failT2 = false;
    const again = await judge('--suite', 'online-mind2web', '--episodes', root, '--out', join(dir, 'om2w-out'), '--tasks', tasksFile);
    expect(again.out).toMatch(/judged 1, resumed 1/);
    expect(again.out).toMatch(/success rate 100\.0% \(2\/2 judged\), unparsed 0, judge_error 0/);
    // Key points and image scores of t2 were cached from the first run: only the outcome call is new.
    expect(again.reqs).toHaveLength(1);
  });
});

describe('Grove recordings and agreement with rule ground truth', () => {
  it('records beside each episode, agreement/precision/recall/kappa against rule verdicts', async () => {
    const root = join(dir, 'grove');
    const truth = { a: 'success', b: 'success', c: 'failure', d: 'failure' } as const;
    for (const [id, outcome] of Object.entries(truth)) {
      await writeSyntheticEpisode(join(root, id), {
        episodeId: id,
        suite: 'offline',
        site: 'shop',
        steps: 2,
        question: `Buy item ${id}`,
        verdicts: [{ judge: 'rule:offline', outcome, score: outcome === 'success' ? 1 : 0 }],
      });
    }
    // The LLM judge says success for a and c: tp 1, fp 1, fn 1, tn 1.
    script = (r) => (/Buy item [ac]/.test(firstText(r)) ? 'SUCCESS' : 'NOT SUCCESS');
    const r = await judge('--suite', 'webvoyager', '--episodes', root, '--no-cache');
    expect(r.code).toBe(0);
    expect(r.reqs).toHaveLength(4);
    // Initial frame + the frames after the 2 page actions, oldest first: no duplicate frame after the answer step.
    expect(r.reqs.map(imageCount)).toEqual([3, 3, 3, 3]);
    expect(firstText(r.reqs[0])).toMatch(/Agent's final response: answer for [abcd]/);
    expect(r.out).toContain('agreement of webvoyager with rule* verdicts over 4 episodes');
    expect(r.out).toMatch(/agreement 0\.500 {2}precision 0\.500 {2}recall 0\.500 {2}cohen_kappa 0\.000/);
    expect(r.out).toMatch(/shop\s+50\.0%/);
    expect(existsSync(join(root, 'a', 'judge', 'webvoyager.json'))).toBe(true);
    expect(existsSync(join(root, 'webvoyager_results.jsonl'))).toBe(true);
  });

  it('argument and folder errors', async () => {
    expect((await judge('--episodes', dir)).code).toBe(2);
    expect((await judge('--suite', 'webvoyager')).code).toBe(2);
    expect((await judge('--suite', 'webvoyager', '--episodes', dir, '--score-threshold', '9')).code).toBe(2);
    expect((await judge('--suite', 'swe-bench', '--episodes', dir)).code).toBe(2);
    if (haveData) {
      // Foreign result folders are read-only input: no --out, no run.
      const noOut = await judge('--suite', 'webvoyager', '--episodes', EXAMPLES);
      expect(noOut.code).toBe(2);
      expect(noOut.err).toMatch(/--out DIR is required for webvoyager-layout result folders/);
      expect(noOut.reqs).toHaveLength(0);
    }
    const missing = await judge('--suite', 'webvoyager', '--episodes', join(dir, 'nope'));
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/no such directory/);
    await mkdir(join(dir, 'empty'));
    const empty = await judge('--suite', 'webvoyager', '--episodes', join(dir, 'empty'));
    expect(empty.code).toBe(1);
    expect(empty.err).toMatch(/no episodes found/);
    let err = '';
    expect(await runJudge(['--suite', 'webvoyager', '--episodes', dir], { out: () => {}, err: (s) => (err += s) })).toBe(2);
    expect(err).toMatch(/--judge-url URL and --judge-model NAME are required/);
  });
});

describe.skipIf(!haveData)('DeepShop over WebVoyager-layout folders', () => {
  it('joins the task file for the dimensions and reports per-dimension rates', async () => {
    // A DeepShop run writes WebVoyager-layout folders named task<id>; reuse a real trajectory's files.
    const root = join(dir, 'deepshop');
    const { cp } = await import('node:fs/promises');
    await cp(join(EXAMPLES, 'taskGitHub--0'), join(root, 'taskAmazon--49'), { recursive: true });
    await cp(join(EXAMPLES, 'taskCoursera--16'), join(root, 'taskAmazon--541'), { recursive: true });
    script = (r) => (firstText(r).startsWith('Task: **') ? 'NOT SUCCESS' : 'SUCCESS');
    const r = await judge('--suite', 'deepshop', '--episodes', root, '--out', join(dir, 'ds-out'), '--tasks', join(DATA, 'deepshop/deepshop_test.jsonl'), '--no-cache');
    expect(r.code).toBe(0);
    // Amazon--49 has only an attribute; Amazon--541 has all three (scrambled text, loaded anyway).
    expect(r.reqs).toHaveLength(4);
    expect(r.out).toMatch(/judge deepshop: success rate 50\.0% \(1\/2 judged\)/);
    expect(r.out).toMatch(/attribute\s+50\.0%\s+1\s+2\s+0/);
    expect(r.out).toMatch(/filter\s+0\.0%\s+0\s+1\s+0/);
    expect(r.out).toMatch(/sort\s+0\.0%\s+0\s+1\s+0/);
  });
});

describe('one spelling of the judge flags; --preview', () => {
  it('grove judge and grove run take the same judge flags, the API key and request parameters included', async () => {
    const { parseRunArgs } = await import('../../cli/commands/run-args.ts');
    const flags = ['--judge-url', server.url, '--judge-model', 'o4-mini', '--judge-api-key', 'sk-judge-123', '--judge-temperature', 'none', '--judge-max-tokens', '4000', '--judge-max-tokens-field', 'max_completion_tokens'];
    const run = parseRunArgs(['--suite', 'webvoyager', '--tasks', 't.jsonl', '--policy', 'http://p/v1', '--model', 'm', '--out', 'o', ...flags]);
    expect(run.ok && run.args.judgeModel).toEqual({
      baseURL: server.url, model: 'o4-mini', apiKey: 'sk-judge-123', temperature: null, maxTokens: 4000, maxTokensField: 'max_completion_tokens', promptsDir: undefined,
    });
    expect(parseRunArgs(['--suite', 'webvoyager', '--tasks', 't', '--policy', 'http://p/v1', '--model', 'm', '--out', 'o', '--judge-url', 'x', '--judge-model', 'j']))
      .toMatchObject({ ok: false, error: expect.stringMatching(/--judge-url must be an http/) });
    const root = join(dir, 'flags');
    await writeSyntheticEpisode(join(root, 'a'), { episodeId: 'a', suite: 'offline', site: 'shop', steps: 1, question: 'Buy a' });
    script = () => 'SUCCESS';
    let out = '';
    const start = server.requests.length;
    const code = await runJudge(['--suite', 'webvoyager', '--episodes', root, '--no-cache', '--retries', '0', ...flags], { out: (s) => (out += s), err: () => {} });
    expect(code).toBe(0);
    const [req] = server.requests.slice(start);
    expect(req.headers.authorization).toBe('Bearer sk-judge-123');
    expect([req.body.model, 'temperature' in req.body, 'max_tokens' in req.body, req.body.max_completion_tokens]).toEqual(['o4-mini', false, false, 4000]);
    expect(out).toMatch(/success rate 100\.0%/);
  });

  it('--preview prints the exact requests for one episode without calling a model or writing anything', async () => {
    const root = join(dir, 'preview');
    await writeSyntheticEpisode(join(root, 'a'), { episodeId: 'a', suite: 'offline', site: 'shop', steps: 2, question: 'Buy item a' });
    let out = '';
    let err = '';
    const start = server.requests.length;
    const code = await runJudge(['--suite', 'webvoyager', '--episodes', root, '--preview'], { out: (s) => (out += s), err: (s) => (err += s) });
    expect(code).toBe(0);
    expect(server.requests.length).toBe(start);
    expect(existsSync(join(root, 'a', 'judge'))).toBe(false);
    expect(existsSync(join(root, 'webvoyager_results.jsonl'))).toBe(false);
    const reqs = out.trim().split('\n').map((l) => JSON.parse(l));
    expect(reqs).toHaveLength(1);
    expect(reqs[0]).toMatchObject({ model: 'judge-model', temperature: 0, max_tokens: 1000, seed: 42 });
    const content = reqs[0].messages[1].content;
    expect(content[0].text).toMatch(/^Task: Buy item a\nAgent's final response: answer for a\n/);
    expect(content.filter((p: { type: string }) => p.type === 'image_url')).toHaveLength(3);
    expect(content[1].image).toMatchObject({ mime: expect.stringMatching(/^image\//), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(err).toMatch(/preview of webvoyager for episode a: 1 request\(s\), prompts: grove/);
  });
});
