import { describe, expect, it } from 'vitest';
import { formatDuration, progressStats, ProgressReporter, renderProgress } from '../../runner/progress.ts';
import { classifyRow, percentile, stepsHistogram, summarize, summaryTable } from '../../runner/summary.ts';
import { escapeHtml } from '../../protocol/html.ts';
import { latencyBuckets, renderReport } from '../../runner/report.ts';
import { runPool } from '../../runner/pool.ts';
import { costUsd, episodeDirName, sessionIdFor, successFrom } from '../../runner/benchmark.ts';
import { RunSummary, type EpisodeRow } from '../../runner/types.ts';
import type { TerminationReason, Verdict } from '../../protocol/task.ts';

function row(p: Partial<EpisodeRow> & { reason?: TerminationReason }): EpisodeRow {
  return {
    task_id: p.task_id ?? 't',
    site: p.site ?? 'shop',
    level: p.level,
    termination: p.termination ?? { reason: p.reason ?? 'task_completed' },
    steps: p.steps ?? 3,
    success: p.success ?? null,
    verdicts: p.verdicts ?? [],
    attempts: p.attempts ?? 1,
    duration_ms: p.duration_ms ?? 1000,
    step_ms: p.step_ms ?? [],
    tokens: p.tokens ?? { prompt: 0, completion: 0 },
    dir: p.dir ?? `episodes/${p.task_id ?? 't'}`,
    resumed: false,
    parse_failures: p.parse_failures ?? 0,
    noops: p.noops,
  };
}

describe('progress maths', () => {
  it('extrapolates the ETA from the observed throughput', () => {
    const s = progressStats({ total: 10, done: 2, failed: 1, running: 2, skipped: 0, steps: 30 }, 60_000);
    expect(s.remaining).toBe(8);
    expect(s.etaMs).toBe(240_000); // 8 remaining at 2 per minute
    expect(s.episodesPerMin).toBe(2);
    expect(s.stepsPerSec).toBe(0.5);
  });
  it('has no ETA before the first episode and zero when all are done; skipped ones count as done', () => {
    expect(progressStats({ total: 5, done: 0, failed: 0, running: 1, skipped: 0, steps: 4 }, 10_000).etaMs).toBeNull();
    const s = progressStats({ total: 5, done: 2, failed: 0, running: 0, skipped: 3, steps: 4 }, 10_000);
    expect(s.remaining).toBe(0);
    expect(s.etaMs).toBe(0);
    // resumed (skipped) episodes do not inflate the rate: remaining 2 of 4 at 1 done per 10 s
    expect(progressStats({ total: 4, done: 1, failed: 0, running: 1, skipped: 1, steps: 0 }, 10_000).etaMs).toBe(20_000);
  });
  it('formats durations and lines', () => {
    expect(formatDuration(null)).toBe('--:--');
    expect(formatDuration(65_000)).toBe('01:05');
    expect(formatDuration(3_723_000)).toBe('1:02:03');
    const line = renderProgress(progressStats({ total: 4, done: 1, failed: 1, running: 2, skipped: 1, steps: 10 }, 5000), 8);
    expect(line).toBe('[####....] 2/4 done (failed 1, running 2 skipped 1) 2.00 steps/s, 12.0 ep/min, elapsed 00:05, ETA 00:10');
  });
  it('writes plain lines when the stream is not a TTY', () => {
    const out: string[] = [];
    let now = 0;
    const p = new ProgressReporter({ write: (s) => out.push(s), isTTY: false }, 2, () => now);
    p.episodeStarted();
    p.step();
    now = 2000;
    p.episodeFinished(true, 'a');
    p.stop();
    expect(out).toEqual(['a: 1/2 done (failed 0, running 0) 0.50 steps/s, 30.0 ep/min, elapsed 00:02, ETA 00:02\n']);
  });
});

describe('summary aggregation', () => {
  const ok: Verdict = { judge: 'rule', outcome: 'success' };
  const bad: Verdict = { judge: 'rule', outcome: 'failure' };
  const jerr: Verdict = { judge: 'rule', outcome: 'judge_error', reasoning: 'boom' };
  const rows = [
    row({ task_id: 'a', site: 'shop', level: 'easy', success: true, verdicts: [ok], steps: 2, step_ms: [100, 300] }),
    row({ task_id: 'b', site: 'shop', level: 'hard', success: false, verdicts: [bad], steps: 5, step_ms: [200] }),
    row({ task_id: 'c', site: 'recipes', level: 'easy', success: null, verdicts: [jerr], steps: 4 }),
    row({ task_id: 'd', site: 'recipes', reason: 'env_error', success: null, steps: 0 }),
    row({ task_id: 'e', site: 'forms', reason: 'max_steps_exhausted', success: false, steps: 10, attempts: 2 }),
  ];
  it('classifies rows', () => {
    expect(rows.map(classifyRow)).toEqual(['succeeded', 'failed', 'judge_error', 'infra', 'failed']);
  });
  it('counts judge and env failures apart from the model', () => {
    const s = summarize(rows, { run_id: 'r', suite: 'offline', started_at: 'x', finished_at: 'y', duration_ms: 1, total: 6 });
    expect(RunSummary.parse(s)).toBeTruthy();
    expect(s).toMatchObject({ total: 6, finished: 5, not_started: 1, succeeded: 1, failed: 2, judge_errors: 1, infra_failures: 1, env_retries: 1 });
    expect(s.success_rate).toBeCloseTo(1 / 3);
    expect(s.success_rate_all).toBeCloseTo(1 / 6);
    expect(s.by_site).toEqual({
      forms: { total: 1, succeeded: 0, success_rate: 0 },
      recipes: { total: 2, succeeded: 0, success_rate: 0 },
      shop: { total: 2, succeeded: 1, success_rate: 0.5 },
    });
    expect(s.by_level).toEqual({ easy: { total: 2, succeeded: 1, success_rate: 1 }, hard: { total: 1, succeeded: 0, success_rate: 0 } });
    expect(s.termination_reasons).toEqual({ task_completed: 3, env_error: 1, max_steps_exhausted: 1 });
    expect(s.steps).toMatchObject({ max: 10, median: 4 });
    expect(s.steps.histogram['10']).toBe(1);
    expect(s.step_latency_ms.p50).toBe(200);
    expect(summaryTable(s)).toContain('success rate 33.3% (strict 16.7%)');
  });
  it('percentiles, histograms', () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([1, 2, 3, 4], 90)).toBe(4);
    expect(percentile([], 50)).toBe(0);
    expect(stepsHistogram([0, 1, 1, 3])).toEqual({ '0': 1, '1': 2, '2': 0, '3': 1 });
    const h = stepsHistogram([0, 39, 79]);
    expect(Object.keys(h)[0]).toBe('0-3');
    expect(Object.values(h).reduce((a, b) => a + b, 0)).toBe(3);
  });
  it('success rules', () => {
    expect(successFrom([ok], { termination: { reason: 'task_completed' } }, true)).toBe(true);
    expect(successFrom([jerr], { termination: { reason: 'task_completed' } }, true)).toBeNull();
    expect(successFrom([], { termination: { reason: 'max_steps_exhausted' } }, true)).toBe(false);
    expect(successFrom([], { termination: { reason: 'website_error' } }, true)).toBeNull();
    expect(successFrom([], { termination: { reason: 'task_completed' } }, false)).toBe(true);
  });
  it('helpers', () => {
    expect(episodeDirName('Allrecipes--0')).toBe('Allrecipes--0');
    expect(episodeDirName('../a b/c')).toBe('__a_b_c');
    expect(sessionIdFor('shop/1 x')).toMatch(/^shop_1_x_[0-9a-f]{12}$/);
    expect(costUsd({ prompt: 2_000_000, completion: 1_000_000 }, { inputPerMTok: 0.5, outputPerMTok: 2 })).toBe(3);
    expect(costUsd({ prompt: 1, completion: 1 })).toBeUndefined();
  });
});

describe('report HTML', () => {
  it('is self-contained, escapes, links episode directories and draws SVG charts', () => {
    const rows = [
      row({ task_id: 'a<b>', site: 'shop', success: true, verdicts: [{ judge: 'rule', outcome: 'success' }], step_ms: [40, 700] }),
      row({ task_id: 'c d', site: 'forms', reason: 'consecutive_parse_failures', termination: { reason: 'consecutive_parse_failures', detail: '3 in a row' }, success: false, dir: 'episodes/c_d' }),
    ];
    const s = summarize(rows, { run_id: 'r1', suite: 'offline', started_at: 'x', finished_at: 'y', duration_ms: 1, total: 2 });
    const html = renderReport(s);
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/);
    expect(html).toContain('a&lt;b&gt;');
    expect(html).not.toContain('a<b>');
    expect(html).toContain('href="episodes/c_d/"');
    expect(html).toContain('href="episodes/c_d/episode.json"');
    expect((html.match(/<svg /g) ?? []).length).toBe(4); // no level chart without levels
    expect(html).toContain('consecutive_parse_failures');
    expect(html).toContain('100.0% (1/1)');
    expect(html).toContain('0.0% (0/1)');
    expect(escapeHtml(`"'&`)).toBe('&quot;&#39;&amp;');
    expect(latencyBuckets([10, 60, 700, 20_000]).filter((b) => b.count).map((b) => b.label)).toEqual(['<50', '50-100', '0.5-1s', '>10s']);
  });
});

describe('worker pool', () => {
  it('keeps at most N in flight and stops handing out work when told', async () => {
    let inflight = 0;
    let peak = 0;
    const seen: number[] = [];
    await runPool({
      concurrency: 3,
      items: [1, 2, 3, 4, 5, 6, 7],
      work: async (x) => {
        inflight++;
        peak = Math.max(peak, inflight);
        await new Promise((r) => setImmediate(r));
        seen.push(x);
        inflight--;
      },
    });
    expect(peak).toBe(3);
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    let n = 0;
    const r = await runPool({ concurrency: 1, items: [1, 2, 3, 4], work: async () => void n++, shouldStop: () => n >= 2 });
    expect(r.started).toBe(2);
    await expect(runPool({ concurrency: 2, items: [1, 2], work: async (x) => { if (x === 2) throw new Error('x'); } })).rejects.toThrow('x');
  });
});

describe('judge input', () => {
  it('builds the judges/ JudgeInput from an episode: frames on disk or in memory, action history, state', async () => {
    const { judgeInput } = await import('../../runner/benchmark.ts');
    const { episodeHistory } = await import('../../judges/episodes.ts');
    const task = { id: 'x', suite: 'offline' as const, site: 's', question: 'q', extra: {}, flags: [] };
    const click = { action: 'click' as const, x: 500, y: 250, space: 'rel1000' as const };
    const answer = { action: 'answer' as const, text: '42' };
    const input = await judgeInput(
      task,
      {
        result: {
          task_id: 'x', episode_id: 'e', termination: { reason: 'task_completed' }, steps: 3, answer: '42', attempts: 1, attempt_failures: [],
          parse_failures: 1, started_at: 'now', duration_ms: 1, reset_ms: 1, step_timings: [], tokens: { prompt: 0, completion: 0 },
        },
        initial: { frame: 'frames/0000.jpg' },
        trajectory: [
          { step: 1, output: 'bad', actions: [], parse_error: 'no tool call', url: 'u', title: 't' },
          { step: 2, output: 'go', actions: [click], css: [{ x: 640, y: 180 }], url: 'u', title: 't', frame: 'frames/0002.png', screenshot: { mime: 'image/png', base64: Buffer.from('png').toString('base64') } },
          { step: 3, output: 'ok', thought: 'done', actions: [answer], url: 'u', title: 't', frame: 'frames/0003.png' },
        ],
      },
      '/runs/r/episodes/x',
      'sess_1',
      async (_t, s) => ({ session: s }),
    );
    expect(input.answer).toBe('42');
    // The final answer step is not an action of the history, and the frame after it (the same screen) is not sent.
    expect(input.actions).toEqual(['(unparsed: no tool call)', 'CLICK (640, 180)']);
    expect(input.thoughts).toEqual(['', '', 'done']);
    expect(input.screenshots).toEqual([
      { path: '/runs/r/episodes/x/frames/0000.jpg', mime: 'image/jpeg' },
      { bytes: Buffer.from('png'), mime: 'image/png' },
    ]);
    // `grove judge` over the recording of the same episode gives the same action texts and frames.
    const step = (n: number, fields: object) => ({ step: n, ts: '', url: 'u', title: 't', tabs: [], events: [], last_action_error: null, timings: { action: 0, settle: 0, capture: 0, encode: 0, total: 0 }, ...fields });
    const recorded = episodeHistory({
      layout: 'grove',
      initial: { frame: 'frames/0000.jpg' },
      steps: [
        step(1, { actions: [], parse_error: 'no tool call' }),
        step(2, { actions: [{ action: click, css: { x: 640, y: 180 }, error: null, ms: 1 }], frame: 'frames/0002.png' }),
        step(3, { actions: [{ action: answer, error: null, ms: 0 }], frame: 'frames/0003.png' }),
      ],
    } as unknown as Parameters<typeof episodeHistory>[0]);
    expect(recorded).toEqual({ frames: ['frames/0000.jpg', 'frames/0002.png'], actions: input.actions });
    expect(input.state).toEqual({ session: 'sess_1' });
    expect(input.episodeDir).toBe('/runs/r/episodes/x');
  });

  it('says why each episode failed, links each to the viewer, counts parse errors and no-ops, and clips no label', () => {
    const longSite = 'A Very Long Website Name Indeed';
    const rows = [
      row({ task_id: 'ok', site: longSite, success: true, verdicts: [{ judge: 'webvoyager', outcome: 'success', reasoning: 'fine' }] }),
      row({
        task_id: 'bad', site: 'shop', success: false, parse_failures: 2, noops: 3, dir: 'episodes/bad',
        verdicts: [{ judge: 'webvoyager', outcome: 'failure', reasoning: `The cart shows a blue kettle,\nnot a red one. ${'x'.repeat(400)}` }],
      }),
      row({ task_id: 'gone', site: 'shop', reason: 'consecutive_parse_failures', termination: { reason: 'consecutive_parse_failures', detail: '3 unparsable outputs in a row' }, success: false }),
    ];
    const s = summarize(rows, { run_id: 'r', suite: 'webvoyager', started_at: 'x', finished_at: 'y', duration_ms: 1, total: 3 });
    const html = renderReport(s);
    // Why: the judge's reasoning (an excerpt, one line) for the failure; the termination detail for the other.
    expect(html).toMatch(/<div class="s why">The cart shows a blue kettle, not a red one\. x+…<\/div>/);
    expect(html).not.toContain('<div class="s why">fine</div>');
    expect(html).toContain('3 unparsable outputs in a row');
    // A link that opens the episode in the viewer (served with the report by grove view).
    expect(html).toContain('href="./#/episode?id=episodes%2Fbad"');
    // Parse errors and no-ops, per episode and in total.
    expect(html).toContain('<div class="s">2 parse errors, 3 no-ops</div>');
    expect(html).toMatch(/parse errors<\/td><td>2 steps in 1 episodes/);
    expect(html).toMatch(/no-op steps<\/td><td>3 steps in 1 episodes/);
    // The site chart's label column fits the longest label (text-anchor end at labelW - 6 must leave it room).
    const chart = html.slice(html.indexOf('Success rate by site'));
    const x = Number(/<text x="(\d+)" y="\d+" text-anchor="end">A Very Long Website Name Indeed<\/text>/.exec(chart)![1]);
    expect(x).toBeGreaterThanOrEqual(longSite.length * 7);
    const termChart = html.slice(html.indexOf('Termination reasons'));
    const tx = Number(/<text x="(\d+)" y="\d+" text-anchor="end">consecutive_parse_failures<\/text>/.exec(termChart)![1]);
    expect(tx).toBeGreaterThanOrEqual('consecutive_parse_failures'.length * 7);
  });
});
