// The viewer's JSON API over a directory holding Grove runs and WebVoyager result folders (fastify inject, no port).
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { buildViewer } from '../../viewer/server.ts';
import { writeSyntheticEpisode, writeSyntheticRun } from '../../recording/synthetic.ts';
import { DATASETS } from '../support/datasets.ts';
import { runJudge } from '../../cli/commands/judge.ts';
import { IMAGE_SYSTEM, KEY_POINTS_SYSTEM } from '../../judges/webjudge.ts';
import { startOpenAIServer, type OpenAITestServer } from '../support/openai-server.ts';

const WV_EXAMPLES = join(DATASETS, 'webvoyager', 'examples');

let root: string;
let app: Awaited<ReturnType<typeof buildViewer>>;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'grove-viewer-'));
  await writeSyntheticRun(root, { count: 12, steps: 3, runId: 'r1', durable: false });
  await writeSyntheticEpisode(join(root, 'r2', 'live'), { episodeId: 'live', runId: 'r2', taskId: 'shop--0', site: 'shop', steps: 2, unfinished: true, durable: false });
  await cp(WV_EXAMPLES, join(root, 'wv'), { recursive: true });
  const har = { log: { entries: [{ request: { url: 'http://a.test/' }, response: { status: 200, content: { size: 10 } } }, { request: { url: 'http://a.test/x.js' }, response: { status: 404, content: { size: 5 } } }] } };
  await writeFile(join(root, 'r1', 'ep-00003', 'network.har'), JSON.stringify(har));
  app = await buildViewer({ root });
});
afterAll(async () => {
  await app?.close();
  await rm(root, { recursive: true, force: true });
});

const get = async (url: string) => {
  const r = await app.inject({ method: 'GET', url });
  return { status: r.statusCode, json: () => r.json(), body: r.rawPayload, headers: r.headers };
};

describe('viewer API', () => {
  it('serves the page and its static files, nothing else', async () => {
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(page.body.toString()).toContain('/static/app.js');
    expect(page.body.toString()).not.toMatch(/https?:\/\//); // no CDN
    expect((await get('/static/app.js')).status).toBe(200);
    expect((await get('/static/..%2Fserver.ts')).status).toBe(404);
  });

  it('lists every episode with facets, filters, search and pagination', async () => {
    const f = (await get('/api/facets')).json();
    expect(f.total).toBe(12 + 1 + 3);
    expect(f.facets.layout).toEqual({ grove: 13, webvoyager: 3 });
    expect(f.facets.status).toMatchObject({ complete: 15, running: 1 }); // this process is the live writer
    const all = (await get('/api/episodes?limit=5')).json();
    expect(all.total).toBe(16);
    expect(all.items).toHaveLength(5);
    const page2 = (await get('/api/episodes?limit=5&offset=5')).json();
    expect(page2.items.map((i: { id: string }) => i.id)).not.toContain(all.items[0].id);
    const ok = (await get('/api/episodes?success=true&limit=100')).json();
    expect(ok.total).toBe(8); // i % 3 != 0 of 12
    expect(ok.items.every((i: { success: boolean }) => i.success === true)).toBe(true);
    const shop = (await get('/api/episodes?site=shop&level=easy&limit=100')).json();
    expect(shop.items.length).toBeGreaterThan(0);
    expect(shop.items.every((i: { site: string; level: string }) => i.site === 'shop' && i.level === 'easy')).toBe(true);
    const timeout = (await get('/api/episodes?termination=timeout')).json();
    expect(timeout.items.every((i: { termination: string }) => i.termination === 'timeout')).toBe(true);
    const verdict = (await get('/api/episodes?verdict=judge_error')).json();
    expect(verdict.total).toBeGreaterThan(0);
    const q = (await get(`/api/episodes?q=${encodeURIComponent('climate change data')}`)).json();
    expect(q.items.map((i: { id: string }) => i.id)).toEqual(['wv/taskGitHub--0']);
    expect((await get('/api/episodes?success=maybe')).status).toBe(400);
  });

  it('returns an episode with siblings, neighbours in a filtered list, frames, thumbnails and diffs', async () => {
    const id = 'r1/ep-00005';
    const ep = (await get(`/api/episode?id=${encodeURIComponent(id)}`)).json();
    expect(ep.layout).toBe('grove');
    expect(ep.steps).toHaveLength(4);
    expect(ep.steps[2].diff.noop).toBe(true);
    expect(ep.siblings.map((s: { id: string }) => s.id)).toEqual([]);
    const nb = (await get(`/api/neighbours?id=${encodeURIComponent(id)}&run=r1`)).json();
    expect(nb).toMatchObject({ index: 5, total: 12, prev: 'r1/ep-00004', next: 'r1/ep-00006' });
    const frame = await get(`/api/file?id=${encodeURIComponent(id)}&path=${encodeURIComponent(ep.steps[0].frame)}`);
    expect(frame.status).toBe(200);
    expect(frame.headers['content-type']).toBe('image/jpeg');
    const thumb = await get(`/api/thumb?id=${encodeURIComponent(id)}&path=frames/0001.jpg&w=100`);
    expect((await sharp(thumb.body).metadata()).width).toBe(100);
    const diff = await get(`/api/diff?id=${encodeURIComponent(id)}&step=1`);
    expect(diff.headers['content-type']).toBe('image/png');
    expect(Number(diff.headers['x-changed-share'])).toBeGreaterThan(0.01);
    const same = await get(`/api/diff?id=${encodeURIComponent(id)}&step=3`);
    expect(Number(same.headers['x-changed-share'])).toBe(0);
  });

  it('finds siblings of the same task across runs and layouts, and opens WebVoyager folders', async () => {
    const ep = (await get(`/api/episode?id=${encodeURIComponent('r1/ep-00000')}`)).json();
    expect(ep.task.id).toBe('shop--0');
    expect(ep.siblings.map((s: { id: string }) => s.id)).toEqual(['r2/live']);
    const wv = (await get(`/api/episode?id=${encodeURIComponent('wv/taskArXiv--11')}`)).json();
    expect(wv.layout).toBe('webvoyager');
    expect(wv.steps).toHaveLength(7);
    expect((await get(`/api/file?id=${encodeURIComponent('wv/taskArXiv--11')}&path=screenshot7.png`)).status).toBe(200);
  });

  it('summarises a network recording kept beside an episode', async () => {
    const ep = (await get(`/api/episode?id=${encodeURIComponent('r1/ep-00003')}`)).json();
    expect(ep.har).toEqual({ file: 'network.har', entries: 2, urls: ['http://a.test/', 'http://a.test/x.js'], statuses: { '2xx': 1, '4xx': 1 }, bytes: 15 });
    expect((await get(`/api/episode?id=${encodeURIComponent('r1/ep-00004')}`)).json().har).toBeUndefined();
    expect((await get(`/api/file?id=${encodeURIComponent('r1/ep-00003')}&path=network.har`)).status).toBe(200);
  });

  it('refuses paths outside an episode and unknown episodes with clear errors', async () => {
    const id = encodeURIComponent('r1/ep-00001');
    for (const p of ['../ep-00002/episode.json', '/etc/passwd', 'frames/../../ep-00002/frames/0001.jpg']) {
      const r = await get(`/api/file?id=${id}&path=${encodeURIComponent(p)}`);
      expect(r.status, p).toBe(400);
      expect(r.json().error.code).toBe('bad_path');
    }
    expect((await get(`/api/file?id=${id}&path=steps.jsonl`)).json().error.code).toBe('bad_path');
    const missing = await get('/api/episode?id=nope');
    expect(missing.status).toBe(404);
    expect(missing.json().error.code).toBe('episode_not_found');
    expect((await get('/api/episode')).status).toBe(400);
  });

  it("serves the run's report.html beside the viewer (its episode links open here), 404 without one", async () => {
    expect((await get('/report.html')).status).toBe(404);
    await writeFile(join(root, 'report.html'), '<!doctype html><a href="./#/episode?id=r1%2Fep-00001">view</a>');
    const r = await get('/report.html');
    expect(r.status).toBe(200);
    expect(String(r.headers['content-type'])).toMatch(/text\/html/);
    expect(r.body.toString()).toContain('./#/episode?id=r1%2Fep-00001');
  });
});

// `grove judge --out OUT` over WebVoyager and Online-Mind2Web result folders writes its verdicts under OUT, not into
// the result folders: the viewer shows them beside each episode (outcome, score, reasoning, details).
describe('verdicts of grove judge --out for foreign result folders', () => {
  let dir: string;
  let model: OpenAITestServer;
  let viewer: Awaited<ReturnType<typeof buildViewer>> | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'grove-viewer-judged-'));
    model = await startOpenAIServer((r) => {
      const sys = r.body.messages[0].content;
      if (sys === KEY_POINTS_SYSTEM) return '**Key Points**:\n1. Red kettle';
      if (sys === IMAGE_SYSTEM) return '**Reasoning**: the kettle is shown\n**Score**: 5';
      const text = JSON.stringify(r.body.messages);
      if (text.includes('climate change data visualization')) return 'The screenshots show the repository and its stars. SUCCESS';
      if (text.includes('User task:')) return 'Thoughts: the red kettle was found.\nStatus: success';
      return 'The answer is not supported by the screenshots. NOT SUCCESS';
    });
    // An Online-Mind2Web result folder (v1 layout) with one task.
    await mkdir(join(dir, 'om2w', 't1', 'trajectory'), { recursive: true });
    await writeFile(
      join(dir, 'om2w', 't1', 'result.json'),
      JSON.stringify({ task_id: 't1', task: 'Find a red kettle', final_result_response: 'Found it', action_history: ['<button> Search -> CLICK'], thoughts: ['search'] }),
    );
    for (const n of [0, 1]) {
      const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#aa3344' } }).png().toBuffer();
      await writeFile(join(dir, 'om2w', 't1', 'trajectory', `${n}_full_screenshot.png`), png);
    }
    const quiet = { out: () => {}, err: () => {} };
    const judge = (...argv: string[]) => runJudge(['--judge-url', model.url, '--judge-model', 'judge-model', '--retries', '0', '--no-cache', ...argv], quiet);
    await cp(WV_EXAMPLES, join(dir, 'wv'), { recursive: true });
    expect(await judge('--suite', 'webvoyager', '--episodes', join(dir, 'wv'), '--out', join(dir, 'wv-judged'))).toBe(0);
    expect(await judge('--suite', 'online-mind2web', '--episodes', join(dir, 'om2w'), '--out', join(dir, 'om2w-judged'))).toBe(0);
  });
  afterAll(async () => {
    await viewer?.close();
    await model?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const episode = async (app: Awaited<ReturnType<typeof buildViewer>>, id: string) => (await app.inject({ method: 'GET', url: `/api/episode?id=${encodeURIComponent(id)}` })).json();
  const list = async (app: Awaited<ReturnType<typeof buildViewer>>) =>
    (await app.inject({ method: 'GET', url: '/api/episodes?limit=100' })).json().items as { id: string; verdict: string; success: boolean | null }[];

  it('WebVoyager folders: each episode shows the webvoyager verdict and reasoning, and the list counts them', async () => {
    viewer = await buildViewer({ root: join(dir, 'wv'), judged: [join(dir, 'wv-judged')] });
    const gh = await episode(viewer, 'taskGitHub--0');
    expect(gh.layout).toBe('webvoyager');
    expect(gh.meta.verdicts).toEqual([
      expect.objectContaining({ judge: 'webvoyager', outcome: 'success', reasoning: expect.stringContaining('repository and its stars') }),
    ]);
    const arxiv = await episode(viewer, 'taskArXiv--11');
    expect(arxiv.meta.verdicts).toEqual([expect.objectContaining({ judge: 'webvoyager', outcome: 'failure' })]);
    const rows = await list(viewer);
    expect(rows.map((r) => [r.id, r.verdict, r.success]).sort()).toEqual([
      ['taskArXiv--11', 'failure', false],
      ['taskCoursera--16', 'failure', false],
      ['taskGitHub--0', 'success', true],
    ]);
    await viewer.close();
    // Without the judge's output folder nothing is claimed.
    viewer = await buildViewer({ root: join(dir, 'wv') });
    expect((await episode(viewer, 'taskGitHub--0')).meta.verdicts).toEqual([]);
    await viewer.close();
    viewer = undefined;
  });

  it('Online-Mind2Web folders: the WebJudge verdict with its score, reasoning and per-screenshot details', async () => {
    viewer = await buildViewer({ root: join(dir, 'om2w'), judged: [join(dir, 'om2w-judged')] });
    const t1 = await episode(viewer, 't1');
    expect(t1.layout).toBe('online-mind2web');
    const v = t1.meta.verdicts.find((x: { judge: string }) => x.judge === 'webjudge');
    expect(v).toMatchObject({ outcome: 'success', reasoning: expect.stringContaining('red kettle was found') });
    expect(v.details.key_points).toBe('1. Red kettle');
    expect(v.details.image_judge_record.map((r: { Score: number }) => r.Score)).toEqual([5, 5]);
    expect((await list(viewer)).find((r) => r.id === 't1')).toMatchObject({ verdict: 'success', success: true });
    await viewer.close();
    viewer = undefined;
  });
});
