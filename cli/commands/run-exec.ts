// The implementation of `grove run` (loaded on demand by run.ts): a benchmark suite end to end — tasks, a Grove server (remote or embedded), a policy, judges —
// through the runner; prints the summary table and where summary.json, report.html and the recordings are.
import { join, resolve } from 'node:path';
import { GroveClient } from '../../client/index.ts';
import type { Task } from '../../protocol/task.ts';
import type { BrowserCreateInput } from '../../protocol/sandbox.ts';
import { readEnvSetting } from '../../sandbox/config.ts';
import type { Logger } from '../../sandbox/log.ts';
import { startSites, type SitesServer } from '../../sites/server.ts';
import { loadOfflineTasks, startUrlFor } from '../../sites/tasks.ts';
import { loadTasks, matches, type TaskFilter } from '../../tasks/index.ts';
import { createJudge } from '../../judges/index.ts';
import { JudgeModel } from '../../judges/model.ts';
import { fetchOfflineState, offlineRuleJudge } from '../../judges/rules/offline.ts';
import type { Judge } from '../../judges/types.ts';
import { loadPromptDir } from '../../judges/prompts.ts';
import { judgeModelConfig } from './judge-flags.ts';
import { runBenchmark, type BenchmarkOptions, type BenchmarkResult } from '../../runner/benchmark.ts';
import type { Policy } from '../../runner/policy.ts';
import type { ProgressStream } from '../../runner/progress.ts';
import { summaryTable } from '../../runner/summary.ts';
import { getFormat } from '../../vlm-client/formats/index.ts';
import { makePolicyFactory } from './run-policy.ts';
import type { RunArgs } from './run-args.ts';
import { startEmbeddedGrove } from './run-embedded.ts';
import { preflight, RunStopped } from './run-preflight.ts';

export interface RunIO {
  out(s: string): void;
  err(s: string): void;
  /** Where the progress bar goes (stderr). */
  progress?: ProgressStream;
  logger?: Logger;
}

export interface RunHooks {
  /** Replaces the policy built from --policy (tests, the demo). */
  policy?: (task: Task) => Policy;
  /** Extra runner options (e.g. retry policy). */
  benchmark?: Partial<BenchmarkOptions>;
  /** Simulated API delay of the offline sites, [min, max] ms (the sites' default is [200, 600]). */
  sitesApiDelayMs?: [number, number];
  signal?: AbortSignal;
}

export const stdio: RunIO = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  progress: process.stderr,
};

async function judgesFor(args: RunArgs, sites: SitesServer | undefined, log?: Logger): Promise<Judge[]> {
  if (args.judge === 'none') return [];
  if (args.judge === 'rule') {
    if (!sites) throw new Error('the rule judge needs the offline sites');
    return [offlineRuleJudge(sites.url)];
  }
  if (!args.judgeModel) throw new Error(`--judge ${args.judge} needs --judge-url and --judge-model`);
  const model = new JudgeModel(judgeModelConfig(args.judgeModel, readEnvSetting('GROVE_JUDGE_API_KEY') ?? readEnvSetting('OPENAI_API_KEY')), { log });
  const prompts = args.judgeModel.promptsDir ? await loadPromptDir(args.judgeModel.promptsDir) : undefined;
  return [createJudge(args.judge, { model, prompts })];
}

/** Runs the benchmark described by `args`; everything it started is stopped before it returns. */
export async function executeRun(args: RunArgs, io: RunIO = stdio, hooks: RunHooks = {}): Promise<BenchmarkResult> {
  const closers: (() => Promise<void>)[] = [];
  try {
    const filter: TaskFilter = { site: args.site, level: args.level, ids: args.ids, limit: args.limit };
    let sites: SitesServer | undefined;
    let tasks: Task[];
    if (args.suite === 'offline') {
      sites = await startSites({ log: io.logger, apiDelayMs: hooks.sitesApiDelayMs });
      const s = sites;
      closers.push(() => s.close());
      tasks = loadOfflineTasks(sites.url).filter((t) => matches(t, filter));
      if (args.limit !== undefined) tasks = tasks.slice(0, args.limit);
    } else {
      const loaded = await loadTasks(args.suite, args.tasks!, { filter });
      for (const i of loaded.issues.slice(0, 20)) io.err(`skipped task row (${i.where}${i.id ? `, ${i.id}` : ''}): ${i.reason}\n`);
      if (loaded.issues.length > 20) io.err(`… and ${loaded.issues.length - 20} more unusable rows\n`);
      tasks = loaded.tasks;
    }
    if (tasks.length === 0) throw new RunStopped('no tasks to run (check --tasks and the filters)');

    const remote = args.server ? new GroveClient({ baseUrl: args.server, apiKey: args.apiKey ?? readEnvSetting('GROVE_API_KEY') }) : undefined;
    // Every endpoint the episodes need answers before anything heavy starts: one clear message instead of a run of
    // generation_error / env_error episodes.
    const judgeEnvKey = readEnvSetting('GROVE_JUDGE_API_KEY') ?? readEnvSetting('OPENAI_API_KEY');
    await preflight({
      grove: remote && args.server ? { url: args.server, client: remote } : undefined,
      policy: !hooks.policy && args.policy !== 'scripted' ? { url: args.policy, apiKey: args.policyApiKey ?? readEnvSetting('GROVE_POLICY_API_KEY'), api: args.api } : undefined,
      judge: args.judgeModel?.baseURL && args.judge !== 'rule' && args.judge !== 'none' ? { url: args.judgeModel.baseURL, apiKey: args.judgeModel.apiKey ?? judgeEnvKey } : undefined,
    });
    if (remote) closers.push(async () => remote.close());
    const out = resolve(args.out);
    let env = remote;
    if (!env) {
      const g = await startEmbeddedGrove({
        browserProcesses: args.browserProcesses,
        maxSandboxes: Math.max(32, args.concurrency * 2),
        recordingsDir: join(out, 'server-recordings'),
      });
      closers.push(() => g.close());
      io.err(`embedded Grove server on ${g.url}\n`);
      env = new GroveClient({ baseUrl: g.url, apiKey: g.apiKey });
    }

    const judges = await judgesFor(args, sites, io.logger);
    const sitesUrl = sites?.url;
    const sitesHost = sites ? new URL(sites.url).host : undefined;
    const policy = hooks.policy ?? makePolicyFactory(args, io.logger);
    return await runBenchmark({
      suite: args.suite,
      tasks,
      env,
      policy,
      judges,
      judgeAll: args.judgeAll,
      judgeState: sitesUrl ? (_t, sessionId) => fetchOfflineState(sitesUrl, sessionId) : undefined,
      outDir: out,
      concurrency: args.concurrency,
      maxSteps: args.maxSteps,
      episodeTimeoutMs: args.episodeTimeoutSec !== undefined ? args.episodeTimeoutSec * 1000 : undefined,
      // The format's own environment (Orchard-GUI: 1280x1000, PNG, rel1000) is the base of every sandbox.
      sandbox: sandboxFor(args.format, sitesHost),
      startUrl: sites ? (t, sessionId) => startUrlFor(t, sessionId) : undefined,
      format: args.format,
      retry: args.retries !== undefined ? { maxRestarts: args.retries } : undefined,
      resume: args.resume,
      maxMinutes: args.maxMinutes,
      maxCostUsd: args.maxCostUsd,
      price: args.priceIn !== undefined && args.priceOut !== undefined ? { inputPerMTok: args.priceIn, outputPerMTok: args.priceOut } : undefined,
      // LLM judges look at screenshots; the recorded frames on disk serve them, so nothing is kept in memory.
      keepScreenshots: false,
      progress: io.progress,
      logger: io.logger,
      signal: hooks.signal,
      meta: { model: args.model, policy: args.policy === 'scripted' ? 'scripted' : `${args.policy} (${args.format})`, judge: judges.map((j) => j.name).join(', ') || 'none' },
      config: { policy: args.policy, model: args.model, format: args.format, judge: args.judge },
      ...hooks.benchmark,
    });
  } finally {
    for (const c of closers.reverse()) {
      try {
        await c();
      } catch (err) {
        io.err(`warning: shutdown step failed: ${(err as Error).message}\n`);
      }
    }
  }
}

/** Prints what a finished run produced. */
export function printRunResult(r: BenchmarkResult, io: Pick<RunIO, 'out'>): void {
  io.out(`${summaryTable(r.summary)}\n`);
  const dir = resolve(r.summaryPath, '..');
  io.out(`summary:    ${r.summaryPath}\nreport:     ${r.reportPath}\nrecordings: ${resolve(dir, 'episodes')}\nbrowse:     grove view ${dir}\n`);
}

/** Sandbox options of every episode: the policy format's environment defaults, then the offline sites' needs. */
export function sandboxFor(format: string | undefined, sitesHost: string | undefined): ((t: Task) => Omit<BrowserCreateInput, 'type'>) | undefined {
  const base = (format && getFormat(format)?.sandbox) || {};
  if (!sitesHost && !Object.keys(base).length) return undefined;
  // Offline sites live on loopback, which sandboxes block unless allowed; SoM labels drive the scripted plans.
  return () => ({ ...base, ...(sitesHost ? { som: true, network: { allow: [sitesHost] } } : {}) });
}
