import { describe, expect, it } from 'vitest';
import { computeAgreement } from '../../judges/agreement.ts';
import { parseImageScore, parseKeyPoints, parseStatusVerdict, parseSuccessVerdict } from '../../judges/parse.ts';
import { buildReport, formatReport, resultLine, type JudgeResultLine } from '../../judges/report.ts';
import type { Verdict } from '../../protocol/task.ts';

describe('WebVoyager / DeepShop verdicts', () => {
  it.each([
    ['The answer matches the screenshot.\nSUCCESS', 1],
    ['Verdict: NOT SUCCESS', 0],
    // "NOT SUCCESS" wins even when "SUCCESS" appears elsewhere (it contains it).
    ['Some parts SUCCESS but overall NOT SUCCESS', 0],
    ['**SUCCESS**', 1],
    ['success', null], // case-sensitive, as the original
    ['The task was completed.', null],
    ['', null],
  ])('%j → %j', (text, want) => {
    expect(parseSuccessVerdict(text)).toBe(want);
  });
});

describe('Status verdicts (WebJudge, autonomous)', () => {
  it.each([
    ['Thoughts: all key points met.\nStatus: "success"', 1],
    ['Thoughts: filter missing.\nStatus: "failure"', 0],
    ['thoughts: x\nSTATUS: Success', 1],
    ['Status: failure\nStatus: success', 0], // only the first Status counts
    ['Thoughts: cannot tell', null],
    ['Status:', null],
    ['Status: unclear', 0],
  ])('%j → %j', (text, want) => {
    expect(parseStatusVerdict(text)).toBe(want);
  });
});

describe('WebJudge key points and image scores', () => {
  it('key points after the bold marker, blank lines collapsed, lines left-trimmed', () => {
    expect(parseKeyPoints('Sure.\n\n**Key Points**:\n  1. Filter by price\n\n  2. Sort by newest\n')).toBe('1. Filter by price\n2. Sort by newest');
    expect(parseKeyPoints('Key Points: a\nKey Points:\n 1. b')).toBe('1. b');
    expect(parseKeyPoints('1. only\n2. list')).toBe('1. only\n2. list');
  });
  it('score is the first digit 1-5 after "Score"; reason up to the first blank line', () => {
    expect(parseImageScore('**Reasoning**: The page shows\nthe filter applied.\n\nMore.\n**Score**: 4')).toEqual({ score: 4, reason: 'The page shows the filter applied.' });
    expect(parseImageScore('Reasoning: x\nScore: 9 then 3')).toEqual({ score: 3, reason: 'Reasoning: x Score: 9 then 3' });
    expect(parseImageScore('**Reasoning**: nothing here')).toBeNull();
    expect(parseImageScore('**Score**: 0')).toBeNull();
  });
});

describe('agreement and reports', () => {
  it('agreement, precision, recall and Cohen kappa', () => {
    const pairs = [
      ...Array(3).fill({ predicted: 'success', truth: 'success' }),
      { predicted: 'success', truth: 'failure' },
      { predicted: 'failure', truth: 'success' },
      ...Array(5).fill({ predicted: 'failure', truth: 'failure' }),
      { predicted: 'judge_error', truth: 'success' },
    ];
    const a = computeAgreement(pairs);
    expect(a).toMatchObject({ n: 10, tp: 3, fp: 1, fn: 1, tn: 5, skipped: 1, agreement: 0.8, precision: 0.75, recall: 0.75 });
    // pe = 0.4*0.4 + 0.6*0.6 = 0.52 → kappa = 0.28 / 0.48
    expect(a.kappa).toBeCloseTo(0.28 / 0.48, 10);
    expect(computeAgreement([]).kappa).toBeNull();
    expect(computeAgreement([{ predicted: 'success', truth: 'success' }]).kappa).toBeNull();
  });

  it('rates exclude judge_error; sites, levels and DeepShop dimensions', () => {
    const base = { layout: 'grove', task: 'q', suite: 'deepshop', judged_at: '', judge: 'deepshop' } as const;
    const lines: JudgeResultLine[] = [
      { ...base, episode: 'a', task_id: 'a', site: 'Amazon', level: 'easy', outcome: 'success', predicted_label: 1, dimensions: { attribute: 1, filter: 1, sort: null } },
      { ...base, episode: 'b', task_id: 'b', site: 'Amazon', level: 'easy', outcome: 'failure', predicted_label: 0, dimensions: { attribute: 1, filter: 0, sort: 0 } },
      { ...base, episode: 'c', task_id: 'c', site: 'Amazon', level: 'hard', outcome: 'judge_error', predicted_label: null, dimensions: { attribute: 'judge_error', filter: 1, sort: null } },
    ];
    const r = buildReport('deepshop', lines);
    expect(r.overall).toEqual({ episodes: 3, success: 1, failure: 1, unparsed: 0, judge_error: 1, rate: 0.5 });
    expect(r.by_level.easy.rate).toBe(0.5);
    expect(r.by_level.hard).toEqual({ episodes: 1, success: 0, failure: 0, unparsed: 0, judge_error: 1, rate: null });
    expect(r.by_dimension).toEqual({
      attribute: { present: 3, passed: 2, judge_error: 1, rate: 1 },
      filter: { present: 3, passed: 2, judge_error: 0, rate: 2 / 3 },
      sort: { present: 1, passed: 0, judge_error: 0, rate: 0 },
    });
  });

  it('replies without a verdict are counted apart: left out of the rate (WebVoyager unparsed) or failures (WebJudge)', () => {
    const base = { layout: 'grove', task: 'q', suite: 'webvoyager', site: 'S', judged_at: '', judge: 'x' } as const;
    const line = (episode: string, v: Verdict) => resultLine({ ...base, episode, task_id: episode }, v);
    const wv = buildReport('webvoyager', [
      line('a', { judge: 'webvoyager', outcome: 'success', score: 1 }),
      line('b', { judge: 'webvoyager', outcome: 'unparsed', details: { unparsed: true } }),
      line('c', { judge: 'webvoyager', outcome: 'judge_error', details: { error_kind: 'api_error' } }),
    ]);
    expect(wv.overall).toEqual({ episodes: 3, success: 1, failure: 0, unparsed: 1, judge_error: 1, rate: 1 });
    const wj = buildReport('webjudge', [
      line('a', { judge: 'webjudge', outcome: 'success', score: 1 }),
      line('b', { judge: 'webjudge', outcome: 'failure', score: 0, details: { unparsed: true } }),
    ]);
    expect(wj.overall).toEqual({ episodes: 2, success: 1, failure: 1, unparsed: 1, judge_error: 0, rate: 0.5 });
    expect(formatReport(wj)).toMatch(/^judge webjudge: success rate 50\.0% \(1\/2 judged\), unparsed 1, judge_error 0, episodes 2/);
  });
});
