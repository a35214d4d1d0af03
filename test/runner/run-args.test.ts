import { describe, expect, it } from 'vitest';
import { parseRunArgs } from '../../cli/commands/run-args.ts';

describe('grove run arguments', () => {
  it('parses a full VLM run with defaults filled in', () => {
    const r = parseRunArgs(['--suite', 'webvoyager', '--tasks', 'wv.jsonl', '--policy', 'http://127.0.0.1:8000/v1', '--model', 'qwen', '--concurrency', '4',
      '--judge-url', 'http://j/v1', '--judge-model', 'gpt', '--out', 'runs/a', '--resume', '--max-cost-usd', '2', '--price-in', '0.5', '--price-out', '1.5', '--max-minutes', '30']);
    expect(r).toEqual({
      ok: true,
      args: expect.objectContaining({
        suite: 'webvoyager', tasks: 'wv.jsonl', policy: 'http://127.0.0.1:8000/v1', model: 'qwen', format: 'qwen3vl', concurrency: 4,
        maxSteps: 30, judge: 'webvoyager', judgeUrl: 'http://j/v1', judgeModel: 'gpt', out: 'runs/a', resume: true,
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
});
