import { describe, expect, it } from 'vitest';
import { parseRunArgs } from '../../cli/commands/run-args.ts';
import { run } from '../../cli/commands/run.ts';

describe('grove run arguments', () => {
  it('parses a full VLM run with defaults filled in', () => {
    const r = parseRunArgs(['--suite', 'webvoyager', '--tasks', 'wv.jsonl', '--policy', 'http://127.0.0.1:8000/v1', '--model', 'qwen', '--concurrency', '4',
      '--judge-url', 'http://j/v1', '--judge-model', 'gpt', '--out', 'runs/a', '--resume', '--max-cost-usd', '2', '--price-in', '0.5', '--price-out', '1.5', '--max-minutes', '30']);
    expect(r).toEqual({
      ok: true,
      args: expect.objectContaining({
        suite: 'webvoyager', tasks: 'wv.jsonl', policy: 'http://127.0.0.1:8000/v1', model: 'qwen', format: 'qwen3vl', concurrency: 4,
        maxSteps: 30, judge: 'webvoyager', judgeModel: { baseURL: 'http://j/v1', model: 'gpt', apiKey: undefined, temperature: undefined, maxTokens: undefined, maxTokensField: undefined, promptsDir: undefined }, out: 'runs/a', resume: true,
        maxCostUsd: 2, priceIn: 0.5, priceOut: 1.5, maxMinutes: 30,
      }),
    });
  });
  it('defaults the offline suite to the rule judge and allows the scripted policy', () => {
    const r = parseRunArgs(['--suite', 'offline', '--policy', 'scripted', '--out', 'o']);
    expect(r.ok && r.args).toMatchObject({ suite: 'offline', judge: 'rule', policy: 'scripted', format: undefined });
  });
  it.each([
    [['--policy', 'scripted', '--out', 'o'], '--suite must be one of'],
    [['--suite', 'deepshop', '--policy', 'scripted', '--out', 'o'], '--tasks FILE is required'],
    [['--suite', 'offline', '--policy', 'ftp://x', '--out', 'o'], '--policy must be an http(s) URL'],
    [['--suite', 'offline', '--policy', 'http://x/v1', '--out', 'o'], '--model NAME is required'],
    [['--suite', 'webvoyager', '--tasks', 'f', '--policy', 'http://x/v1', '--model', 'm', '--out', 'o'], 'needs --judge-url and --judge-model'],
    [['--suite', 'webvoyager', '--tasks', 'f', '--policy', 'http://x/v1', '--model', 'm', '--judge', 'rule', '--out', 'o'], 'rule judge only knows'],
    [['--suite', 'offline', '--policy', 'scripted'], '--out DIR is required'],
    [['--suite', 'offline', '--policy', 'scripted', '--out', 'o', '--concurrency', '0'], '--concurrency must be an integer >= 1'],
    [['--suite', 'offline', '--policy', 'scripted', '--out', 'o', '--max-cost-usd', '1'], 'needs --price-in and --price-out'],
    [['--suite', 'offline', '--bogus'], "Unknown option '--bogus'"],
  ])('rejects %j', (argv, msg) => {
    const r = parseRunArgs(argv);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toContain(msg);
  });

  const vlm = ['--suite', 'offline', '--policy', 'http://127.0.0.1:9/v1', '--model', 'm', '--out', 'o'];

  it('rejects an unknown format before anything starts (exit 2), and names the known ones', async () => {
    const r = parseRunArgs([...vlm, '--format', 'bogus']);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/--format must be one of qwen3vl, orchard, .*\(got "bogus"\)/);
    const err = process.stderr.write;
    process.stderr.write = () => true; // the usage text
    try {
      expect(await run.run([...vlm, '--format', 'bogus'])).toBe(2);
    } finally {
      process.stderr.write = err;
    }
  });

  it('takes format aliases as their canonical names and picks each format its own API', () => {
    const a = parseRunArgs([...vlm, '--format', 'Qwen3-VL']);
    expect(a.ok && a.args).toMatchObject({ format: 'qwen3vl', api: 'chat' });
    expect(parseRunArgs([...vlm, '--format', 'claude'])).toMatchObject({ ok: true, args: { format: 'anthropic', api: 'anthropic' } });
    expect(parseRunArgs([...vlm, '--format', 'openai-cua'])).toMatchObject({ ok: true, args: { format: 'openai_cua', api: 'responses' } });
    expect(parseRunArgs([...vlm, '--format', 'openai-cua', '--api', 'chat'])).toMatchObject({ ok: true, args: { api: 'chat' } });
    expect(parseRunArgs([...vlm, '--api', 'soap'])).toMatchObject({ ok: false, error: expect.stringContaining('--api must be one of') });
  });

  it('exposes the context settings: last k screenshots, history mode and length, token budget', () => {
    const r = parseRunArgs([...vlm, '--keep-screenshots', '3', '--history', 'summary', '--max-history-steps', '8', '--context-tokens', '24000']);
    expect(r.ok && r.args.context).toEqual({ keepScreenshots: 3, history: 'summary', maxHistorySteps: 8, maxTokens: 24000 });
    expect(parseRunArgs([...vlm, '--history', 'all'])).toMatchObject({ ok: false, error: '--history must be turns or summary' });
    expect(parseRunArgs([...vlm, '--keep-screenshots', '-1'])).toMatchObject({ ok: false });
  });
});
