// Judge selection lives once (judges/select.ts): every suite has a judge, the registry defines exactly the LLM
// judges the table names, and `grove run`, `grove judge` and the episode service (evaluate) pick what it says.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJudge } from '../../cli/commands/judge.ts';
import { parseRunArgs, RUN_SUITES } from '../../cli/commands/run-args.ts';
import { EpisodeService } from '../../episodes/service.ts';
import { createJudge, JUDGES } from '../../judges/index.ts';
import { isLlmJudge, judgeForSuite, LLM_JUDGE_NAMES, llmJudgeForSuite, SUITE_JUDGES } from '../../judges/select.ts';
import { BrowserCreateOptions } from '../../protocol/sandbox.ts';
import { Suite } from '../../protocol/task.ts';
import { writeSyntheticEpisode } from '../../recording/synthetic.ts';
import { silentLogger } from '../../sandbox/log.ts';

const ROOT = resolve(import.meta.dirname, '../..');
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'grove-judge-select-'));
  await writeSyntheticEpisode(join(dir, 'a'), { episodeId: 'a', suite: 'offline', site: 'shop', steps: 1, question: 'Buy a' });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the suite → judge table', () => {
  it('gives every suite exactly one known judge', () => {
    expect(Object.keys(SUITE_JUDGES).sort()).toEqual([...Suite.options].sort());
    for (const suite of Suite.options) {
      const name = judgeForSuite(suite);
      expect(name, suite).toBeDefined();
      expect(isLlmJudge(name!) || ['rule', 'tests', 'claw'].includes(name!), `${suite} → ${name}`).toBe(true);
    }
    expect(judgeForSuite('no-such-suite')).toBeUndefined();
    expect(judgeForSuite('constructor')).toBeUndefined();
  });

  it('names only LLM judges the registry can build, and the registry has no others', () => {
    expect(JUDGES.map((j) => j.name)).toEqual([...LLM_JUDGE_NAMES]);
    for (const name of LLM_JUDGE_NAMES) {
      expect(createJudge(name, { model: { baseURL: 'http://127.0.0.1:1/v1', model: 'm' } }).name).toMatch(new RegExp(`^${name}`));
    }
  });
});

describe('every caller picks what the table says', () => {
  it('grove run: the default --judge of each suite it runs', () => {
    for (const suite of RUN_SUITES) {
      const judgeFlags = suite === 'offline' ? [] : ['--judge-url', 'http://127.0.0.1:1/v1', '--judge-model', 'j'];
      const r = parseRunArgs(['--suite', suite, '--tasks', 't.jsonl', '--policy', 'http://p/v1', '--model', 'm', '--out', 'o', ...judgeFlags]);
      expect(r.ok, suite).toBe(true);
      expect(r.ok && r.args.judge, suite).toBe(judgeForSuite(suite));
    }
  });

  it('grove judge: the default judge of each suite (LLM-judged suites only; others need --judge)', async () => {
    for (const suite of Suite.options) {
      let err = '';
      const code = await runJudge(['--suite', suite, '--episodes', dir, '--preview'], { out: () => {}, err: (s) => (err += s) });
      const name = llmJudgeForSuite(suite);
      if (name) {
        expect(code, `${suite}: ${err}`).toBe(0);
        expect(err).toMatch(new RegExp(`preview of ${name}\\b`));
      } else {
        expect(code, suite).toBe(2);
        expect(err).toMatch(new RegExp(`no default for suite ${suite}`));
      }
    }
  });

  it('the episode service (evaluate): the judge of the task\'s suite', async () => {
    const service = new EpisodeService({ log: silentLogger });
    try {
      for (const suite of Suite.options) {
        const body = BrowserCreateOptions.parse({ type: 'browser', task: { id: `t-${suite}`, suite, question: 'Find x' } });
        const prepared = await service.prepare(body);
        service.attach(`sb_${suite}`, prepared.state);
        const { verdict } = await service.evaluate(`sb_${suite}`, { answer: 'x' });
        const name = llmJudgeForSuite(suite);
        // No judge endpoint here: the verdict names the judge the suite would be judged by.
        expect(verdict?.outcome, suite).toBe('judge_error');
        if (name) expect(verdict?.reasoning, suite).toMatch(new RegExp(`judged by the ${name} LLM judge`));
        else expect(verdict?.reasoning, suite).toMatch(/has no LLM judge/);
      }
    } finally {
      await service.close();
    }
  });

  it('no other module maps suites to judges by hand', () => {
    const suites = Suite.options.join('|');
    const judges = [...LLM_JUDGE_NAMES, 'rule'].join('|');
    // `'online-mind2web': 'webjudge'` (a table) or `suite === 'orchard-gui' ? 'webvoyager'` (a ternary).
    const mapping = new RegExp(`['"](${suites})['"]\\s*(:|\\?)\\s*['"](${judges})['"]`);
    const offenders: string[] = [];
    for (const top of ['cli', 'runner', 'episodes', 'server', 'judges', 'viewer', 'tasks']) {
      for (const file of walk(join(ROOT, top))) {
        if (file.endsWith(join('judges', 'select.ts'))) continue;
        readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
          if (mapping.test(line)) offenders.push(`${file.slice(ROOT.length + 1)}:${i + 1}: ${line.trim()}`);
        });
      }
    }
    expect(offenders).toEqual([]);
  });
});

function* walk(d: string): Generator<string> {
  for (const name of readdirSync(d)) {
    const p = join(d, name);
    if (statSync(p).isDirectory()) yield* walk(p);
    else if (p.endsWith('.ts')) yield p;
  }
}
