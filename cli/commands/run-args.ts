// Argument parsing of `grove run` (pure: unit-tested).
import { FILTER_OPTIONS, listFilters, options, tryParseArgs } from '../args.ts';
import { FORMAT_NAMES, getFormat } from '../../vlm-client/formats/index.ts';
import { LLM_JUDGE_NAMES, judgeForSuite } from '../../judges/select.ts';
import { JUDGE_FLAGS_HELP, JUDGE_FLAGS_USAGE, JUDGE_MODEL_FLAGS, parseJudgeModelFlags, type JudgeModelFlags } from './judge-flags.ts';

export const RUN_SUITES = ['offline', 'webvoyager', 'online-mind2web', 'deepshop'] as const;
type RunSuite = (typeof RUN_SUITES)[number];
const RUN_JUDGES = ['rule', ...LLM_JUDGE_NAMES, 'none'] as const;
type RunJudge = (typeof RUN_JUDGES)[number];

export const RUN_USAGE = `grove run --suite offline|webvoyager|online-mind2web|deepshop [--tasks FILE]
    --policy URL|scripted [--model NAME] [--format qwen3vl] [--policy-api-key KEY]
    [--concurrency N] [--max-steps N] [--episode-timeout SEC]
    [--judge ${RUN_JUDGES.join('|')}] [--judge-all]
    [${JUDGE_FLAGS_USAGE}]
    [--server URL --api-key KEY | (embedded server)] [--browser-processes N]
    --out DIR [--resume] [--max-cost-usd X --price-in USD_PER_MTOK --price-out USD_PER_MTOK] [--max-minutes N]
    [--site S[,S]] [--level L[,L]] [--ids ID[,ID]] [--limit N] [--retries N]
    [--api chat|anthropic|responses] [--keep-screenshots K] [--history turns|summary] [--max-history-steps N]
    [--context-tokens N]

Runs every task as an episode (a worker pool of --concurrency), records each under DIR/episodes/<task>/,
judges it and writes DIR/summary.json and DIR/report.html. Progress goes to stderr.
--policy: an OpenAI-compatible base URL (…/v1) for a VLM policy, or "scripted" (offline suite only).
--tasks: the suite's task file (not needed for offline: the offline sites bring their own tasks).
--resume: skip tasks whose recording in DIR is complete.
Without --server, a Grove server runs inside this process on a free loopback port.
--format: ${FORMAT_NAMES.join(', ')} (default qwen3vl). --api: the policy API; chat completions (default), Anthropic's
Messages API (default for --format anthropic) or OpenAI's Responses API (default for --format openai_cua).
Context: --keep-screenshots K sends the last K screenshots (default 1), --history turns|summary replays past steps as
turns or as one text list, --max-history-steps N keeps at most N past steps, --context-tokens N is the prompt budget.
${JUDGE_FLAGS_HELP}
The server (--server), the policy and the judge model are checked before the first episode: one that does not
answer (or refuses the key) stops the run at once.
Exit code: 0 when the run finished (whatever the success rate), 1 when it could not start, every episode ended
generation_error / env_error / website_error, or on a crash, 2 on bad arguments, 130 after Ctrl-C.`;

export interface RunArgs {
  suite: RunSuite;
  tasks?: string;
  policy: string;
  model?: string;
  format?: string;
  policyApiKey?: string;
  concurrency: number;
  maxSteps: number;
  episodeTimeoutSec?: number;
  judge: RunJudge;
  /** The judge model's endpoint and request parameters (shared with `grove judge`). */
  judgeModel?: JudgeModelFlags;
  judgeAll: boolean;
  server?: string;
  apiKey?: string;
  browserProcesses?: number;
  out: string;
  resume: boolean;
  maxCostUsd?: number;
  priceIn?: number;
  priceOut?: number;
  maxMinutes?: number;
  site?: string[];
  level?: string[];
  ids?: string[];
  limit?: number;
  retries?: number;
  /** Policy API (default by format: anthropic → anthropic, openai_cua → responses, else chat). */
  api?: PolicyApi;
  context?: { keepScreenshots?: number; history?: 'turns' | 'summary'; maxHistorySteps?: number; maxTokens?: number };
}

const POLICY_APIS = ['chat', 'anthropic', 'responses'] as const;
type PolicyApi = (typeof POLICY_APIS)[number];

export type ParsedRunArgs = { ok: true; args: RunArgs } | { ok: false; error: string; help?: boolean };

function num(name: string, v: string | undefined, { int = false, min = 0 } = {}): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < min || (int && !Number.isInteger(n))) {
    throw new Error(`--${name} must be ${int ? 'an integer' : 'a number'} >= ${min} (got "${v}")`);
  }
  return n;
}

export function parseRunArgs(argv: string[]): ParsedRunArgs {
  const parsed = tryParseArgs({
    args: argv,
    options: options(
      ['suite', 'tasks', 'policy', 'model', 'format', 'policy-api-key', 'concurrency', 'max-steps', 'episode-timeout', 'judge', ...JUDGE_MODEL_FLAGS,
        'server', 'api-key', 'browser-processes', 'out', 'max-cost-usd', 'price-in', 'price-out', 'max-minutes', ...FILTER_OPTIONS, 'retries',
        'api', 'keep-screenshots', 'history', 'max-history-steps', 'context-tokens'],
      ['judge-all', 'resume'],
    ),
    allowPositionals: false,
  });
  if ('error' in parsed) return { ok: false, error: parsed.error };
  const values: Record<string, string | boolean | undefined> = parsed.values;
  if (values.help) return { ok: false, error: '', help: true };
  const s = (k: string) => values[k] as string | undefined;
  const suite = s('suite');
  if (!suite || !(RUN_SUITES as readonly string[]).includes(suite)) return { ok: false, error: `--suite must be one of ${RUN_SUITES.join(', ')}` };
  const st = suite as RunSuite;
  if (st !== 'offline' && !s('tasks')) return { ok: false, error: `--tasks FILE is required for the ${st} suite` };
  const policy = s('policy');
  if (!policy) return { ok: false, error: '--policy URL|scripted is required' };
  if (policy === 'scripted' && st !== 'offline') return { ok: false, error: '--policy scripted only knows the offline suite' };
  if (policy !== 'scripted') {
    if (!/^https?:\/\//.test(policy)) return { ok: false, error: `--policy must be an http(s) URL of an OpenAI-compatible API or "scripted" (got "${policy}")` };
    if (!s('model')) return { ok: false, error: '--model NAME is required with a policy URL' };
  }
  // An unknown format is a usage error before anything starts (not an env_error in every episode).
  const format = s('format') === undefined ? (policy === 'scripted' ? undefined : 'qwen3vl') : getFormat(s('format')!)?.name;
  if (s('format') !== undefined && !format) return { ok: false, error: `--format must be one of ${FORMAT_NAMES.join(', ')} (got "${s('format')}")` };
  const api = s('api') ?? (format === 'anthropic' ? 'anthropic' : format === 'openai_cua' ? 'responses' : 'chat');
  if (!(POLICY_APIS as readonly string[]).includes(api)) return { ok: false, error: `--api must be one of ${POLICY_APIS.join(', ')}` };
  const history = s('history');
  if (history !== undefined && history !== 'turns' && history !== 'summary') return { ok: false, error: '--history must be turns or summary' };
  // The suite's judge comes from the one table (judges/select.ts).
  const judge = (s('judge') ?? judgeForSuite(st)) as RunJudge;
  if (!(RUN_JUDGES as readonly string[]).includes(judge)) return { ok: false, error: `--judge must be one of ${RUN_JUDGES.join(', ')}` };
  if (judge === 'rule' && st !== 'offline') return { ok: false, error: 'the rule judge only knows the offline sites; pick an LLM judge' };
  let judgeModel: JudgeModelFlags;
  try {
    judgeModel = parseJudgeModelFlags(values);
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
  if (judge !== 'rule' && judge !== 'none' && (!judgeModel.baseURL || !judgeModel.model)) {
    return { ok: false, error: `--judge ${judge} needs --judge-url and --judge-model (an OpenAI-compatible judge model)` };
  }
  const out = s('out');
  if (!out) return { ok: false, error: '--out DIR is required' };
  if (s('server') && !/^https?:\/\//.test(s('server')!)) return { ok: false, error: '--server must be an http(s) URL' };
  try {
    const maxCostUsd = num('max-cost-usd', s('max-cost-usd'));
    const priceIn = num('price-in', s('price-in'));
    const priceOut = num('price-out', s('price-out'));
    if (maxCostUsd !== undefined && (priceIn === undefined || priceOut === undefined)) {
      throw new Error('--max-cost-usd needs --price-in and --price-out (USD per million tokens) to compute the cost');
    }
    return {
      ok: true,
      args: {
        suite: st,
        tasks: s('tasks'),
        policy,
        model: s('model'),
        format,
        policyApiKey: s('policy-api-key'),
        concurrency: num('concurrency', s('concurrency'), { int: true, min: 1 }) ?? 2,
        maxSteps: num('max-steps', s('max-steps'), { int: true, min: 1 }) ?? 30,
        episodeTimeoutSec: num('episode-timeout', s('episode-timeout'), { min: 1 }),
        judge,
        judgeModel,
        judgeAll: values['judge-all'] === true,
        server: s('server'),
        apiKey: s('api-key'),
        browserProcesses: num('browser-processes', s('browser-processes'), { int: true, min: 1 }),
        out,
        resume: values.resume === true,
        maxCostUsd,
        priceIn,
        priceOut,
        maxMinutes: num('max-minutes', s('max-minutes'), { min: 0 }),
        ...listFilters({ site: s('site'), level: s('level'), ids: s('ids') }),
        limit: num('limit', s('limit'), { int: true, min: 1 }),
        retries: num('retries', s('retries'), { int: true, min: 0 }),
        ...(policy === 'scripted' ? {} : { api: api as PolicyApi }),
        context: {
          keepScreenshots: num('keep-screenshots', s('keep-screenshots'), { int: true, min: 0 }),
          history: history as 'turns' | 'summary' | undefined,
          maxHistorySteps: num('max-history-steps', s('max-history-steps'), { int: true, min: 0 }),
          maxTokens: num('context-tokens', s('context-tokens'), { int: true, min: 1000 }),
        },
      },
    };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}
