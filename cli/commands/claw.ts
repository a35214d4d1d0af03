// `grove claw tasks` and `grove claw run`: the Claw task set (generated, hand-written, Claw-Eval task.yaml) run with
// a tool-calling policy over k trials, with recordings for `grove view` and a pass@k / pass^k report.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { intOption, list, options, parseCommandArgs, STDIO, usageError, valueError, type CommandIO } from '../args.ts';
import type { Command } from '../command.ts';
import { CLAW_EVAL_USAGE, clawEvalRun, clawEvalTasks } from './claw-eval.ts';

const usage = `grove claw tasks [--source generated|handwritten|claw-eval] [--template T] [--yaml PATH[,PATH]]
grove claw run (--policy URL --model M [--policy-key K] | --scripted)
    [--ids ID[,ID]] [--source S] [--template T] [--limit N] [--yaml PATH[,PATH]]
    [--trials K] [--concurrency N] [--out DIR] [--faults 429=R,500=R,slow=R]
    [--judge-url URL --judge-model M [--judge-key K]] [--api URL [--api-key K]]
    [--browser [--format F] [--max-steps N]]

Runs Claw tasks (built-in: 200+ generated and ~20 hand-written; --yaml: Claw-Eval task.yaml files or folders
of them) with a tool-calling policy through an OpenAI-compatible endpoint (OpenAI tools), --trials times each
(default 3), and prints Claw-Eval scores with pass@k and pass^k (k = trials). --out writes one recording per
trial (episodes/, readable by \`grove view DIR\`), claw-summary.json and claw-report.md. --scripted replays each
task's reference solution. --api runs every trial in a Claw sandbox of that Grove server (built-in tasks);
by default the apps run in this process. A task.yaml Grove cannot run fails at load (unsupported_service:<name>).
--browser runs the tasks through the apps' web UI instead, with the browser runner and a computer-use policy
(--format, default qwen3vl; --scripted follows the tasks' web plans), in Chromium sandboxes paired with each
task's Claw sandbox (an embedded server unless --api); graded by the same graders.

${CLAW_EVAL_USAGE}`;

function yamlFiles(p: string): string[] {
  if (!existsSync(p)) return [p];
  if (statSync(p).isFile()) return [p];
  const out: string[] = [];
  for (const name of readdirSync(p).sort()) {
    const sub = path.join(p, name);
    if (statSync(sub).isDirectory()) out.push(...yamlFiles(sub));
    else if (name === 'task.yaml') out.push(sub);
  }
  return out;
}

async function selectTasks(values: Record<string, string | boolean | undefined>, io: CommandIO) {
  const [{ builtinTasks }, { loadClawEvalTask, ClawTaskError }] = await Promise.all([import('../../claw-env/tasks/index.ts'), import('../../claw-env/tasks/claw-eval.ts')]);
  let tasks = typeof values.yaml === 'string' ? [] : builtinTasks();
  let failed = 0;
  for (const p of list(values.yaml as string | undefined) ?? []) {
    for (const f of yamlFiles(p)) {
      try {
        tasks.push(loadClawEvalTask(f));
      } catch (err) {
        failed++;
        io.err(`grove claw: ${f}: not loaded: ${err instanceof ClawTaskError ? err.message : (err as Error).message}\n`);
      }
    }
  }
  const ids = list(values.ids as string | undefined);
  const unknown = ids?.filter((id) => !tasks.some((t) => t.id === id)) ?? [];
  if (ids) tasks = tasks.filter((t) => ids.includes(t.id));
  if (typeof values.source === 'string') tasks = tasks.filter((t) => t.source === values.source);
  if (typeof values.template === 'string') tasks = tasks.filter((t) => t.template === values.template);
  return { tasks, failed, unknown };
}

function parseFaults(s: string): { rate_429: number; rate_500: number; rate_slow: number } | Error {
  const f = { rate_429: 0, rate_500: 0, rate_slow: 0 };
  for (const part of s.split(',')) {
    const [k, v] = part.split('=');
    const n = Number(v);
    const key = ({ '429': 'rate_429', '500': 'rate_500', slow: 'rate_slow' } as const)[k?.trim() as '429' | '500' | 'slow'];
    if (!key || !(n >= 0 && n <= 1)) return new Error(`--faults: "${part}" is not 429=R, 500=R or slow=R with R in [0, 1]`);
    f[key] = n;
  }
  return f;
}

export async function runClawCommand(argv: string[], io: CommandIO = STDIO): Promise<number> {
  const [sub, ...rest] = argv;
  const u = { usage, io, name: 'claw' };
  if (sub === 'tasks') {
    const parsed = parseCommandArgs({ args: rest, options: options(['source', 'template', 'yaml', 'ids', 'claw-eval', 'cache', 'index-url', 'python'], ['json']) }, u);
    if (typeof parsed === 'number') return parsed;
    if (typeof parsed.values['claw-eval'] === 'string') return clawEvalTasks(parsed.values, io, u);
    const { tasks, failed, unknown } = await selectTasks(parsed.values, io);
    if (unknown.length) return valueError(u, `--ids: unknown task id${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (grove claw tasks lists them)`);
    for (const t of tasks) io.out(`${JSON.stringify({ id: t.id, source: t.source, template: t.template ?? null, category: t.category, apps: t.apps, prompt: t.prompt })}\n`);
    io.err(`${tasks.length} task(s)${failed ? `, ${failed} task.yaml not loaded` : ''}\n`);
    return failed && tasks.length === 0 ? 1 : 0;
  }
  if (sub !== 'run') {
    if (sub === '--help' || sub === '-h') return (io.out(`${usage}\n`), 0);
    return usageError(u, sub ? `unknown subcommand "${sub}"` : 'a subcommand is required (tasks, run)');
  }
  const parsed = parseCommandArgs(
    {
      args: rest,
      options: options(['policy', 'model', 'policy-key', 'ids', 'source', 'template', 'limit', 'yaml', 'trials', 'concurrency', 'out', 'faults', 'judge-url', 'judge-model', 'judge-key', 'api', 'api-key', 'format', 'max-steps', 'claw-eval', 'cache', 'index-url', 'python', 'error-rate', 'user-url', 'user-model', 'user-key', 'sandbox-cache', 'server', 'server-key'], ['scripted', 'browser']),
    },
    u,
  );
  if (typeof parsed === 'number') return parsed;
  const v = parsed.values;
  if (typeof v['claw-eval'] === 'string') return clawEvalRun(v, io, u);
  if (!v.scripted && (!v.policy || !v.model)) return usageError(u, '--policy URL and --model M are required (or --scripted)');
  const trials = intOption(v.trials, 'trials', 1) ?? 3;
  const concurrency = intOption(v.concurrency, 'concurrency', 1) ?? 4;
  const limit = intOption(v.limit, 'limit', 1);
  if (trials instanceof Error) return valueError(u, trials.message);
  if (concurrency instanceof Error) return valueError(u, concurrency.message);
  if (limit instanceof Error) return valueError(u, limit.message);
  const faults = v.faults ? parseFaults(v.faults) : undefined;
  if (faults instanceof Error) return valueError(u, faults.message);
  if (v['judge-url'] && !v['judge-model']) return usageError(u, '--judge-model is required with --judge-url');

  const { tasks: selected, failed, unknown } = await selectTasks(v, io);
  if (unknown.length) return valueError(u, `--ids: unknown task id${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (grove claw tasks lists them)`);
  let tasks = selected;
  if (typeof limit === 'number') tasks = tasks.slice(0, limit);
  if (faults) tasks = tasks.map((t) => ({ ...t, faults: { slow_ms: 1500, seed: 1, ...t.faults, ...faults } }));
  if (tasks.length === 0) return valueError(u, failed ? 'no task could be loaded' : 'no task matches the selection');

  const judged = v.browser ? [] : tasks.filter((t) => t.completion.some((c) => c.type === 'llm_judge'));
  if (judged.length && !v['judge-url']) {
    // a judged component is never silently dropped and the rest renormalised: no judge, no run
    return usageError(u, `${judged.length} selected task(s) have llm_judge components (${judged.slice(0, 3).map((t) => t.id).join(', ')}${judged.length > 3 ? ', …' : ''}): give --judge-url and --judge-model, or select others with --ids/--source`);
  }
  if (v.browser) {
    const maxSteps = intOption(v['max-steps'], 'max-steps', 1) ?? 20;
    if (maxSteps instanceof Error) return valueError(u, maxSteps.message);
    return runBrowser(tasks, { ...v, trials, concurrency, maxSteps }, io);
  }
  const [{ runClaw, reportText }, { ChatToolPolicy, ScriptedToolPolicy }, { embeddedEnv, remoteEnv }] = await Promise.all([
    import('../../runner/claw/run.ts'),
    import('../../runner/claw/policy.ts'),
    import('../../runner/claw/env.ts'),
  ]);
  const policy = v.scripted ? new ScriptedToolPolicy() : new ChatToolPolicy({ baseURL: v.policy!, model: v.model!, apiKey: v['policy-key'] });
  let judge;
  if (v['judge-url']) {
    const [{ JudgeModel }, { clawJudge }] = await Promise.all([import('../../judges/model.ts'), import('../../judges/claw.ts')]);
    judge = clawJudge(new JudgeModel({ baseURL: v['judge-url'], model: v['judge-model']!, apiKey: v['judge-key'] }));
  }
  const env = v.api ? remoteEnv(v.api.replace(/\/+$/, ''), v['api-key'], { faults: faults ? { slow_ms: 1500, seed: 1, ...faults } : undefined }) : embeddedEnv;
  const { report } = await runClaw({
    tasks,
    policy,
    env,
    trials,
    concurrency,
    out: v.out,
    judge,
    onTrial: (t, done, total) => io.err(`[${done}/${total}] ${t.task_id} #${t.trial}: ${t.grade ? `score ${t.grade.score}${t.grade.passed ? ' pass' : ''}` : 'not graded'} (${t.termination.reason}, ${t.tool_calls} calls)\n`),
  });
  io.out(`${reportText(report)}\n`);
  if (v.out) io.err(`recordings: ${path.join(v.out, 'episodes')} (grove view ${v.out})\n`);
  return 0;
}

/** --browser: k rounds of the browser runner over the tasks' web UI; pass@k / pass^k from the claw judge's verdicts. */
async function runBrowser(
  tasks: import('../../claw-env/tasks/format.ts').ClawTask[],
  v: { scripted?: boolean; policy?: string; model?: string; format?: string; 'policy-key'?: string; api?: string; 'api-key'?: string; out?: string; trials: number; concurrency: number; maxSteps: number },
  io: CommandIO,
): Promise<number> {
  const [{ runBenchmark }, { clawBrowserTask, ClawWebEnv }, { makePolicyFactory }, { GroveClient }, { startEmbeddedGrove }, { summarize, reportText }, { mkdtemp, rm }, { tmpdir }] = await Promise.all([
    import('../../runner/benchmark.ts'),
    import('../../runner/claw/web.ts'),
    import('./run-policy.ts'),
    import('../../client/index.ts'),
    import('./run-embedded.ts'),
    import('../../runner/claw/run.ts'),
    import('node:fs/promises'),
    import('node:os'),
  ]);
  // Without --out the trials' recordings are kept nowhere (as for the tool runs): the runner writes them to a
  // temporary folder that goes when the command ends.
  const scratch = v.out ? undefined : await mkdtemp(path.join(tmpdir(), 'grove-claw-browser-'));
  const out = v.out ?? scratch!;
  let embedded: Awaited<ReturnType<typeof startEmbeddedGrove>> | null = null;
  const started = Date.now();
  const trials: import('../../runner/claw/episode.ts').ClawTrial[] = [];
  try {
    embedded = v.api ? null : await startEmbeddedGrove({ browserProcesses: Math.min(2, v.concurrency), recordingsDir: path.join(out, 'server-recordings') });
    const grove = embedded ? { url: embedded.url, apiKey: embedded.apiKey } : { url: v.api!.replace(/\/+$/, ''), apiKey: v['api-key'] };
    for (let k = 1; k <= v.trials; k++) {
      const env = new ClawWebEnv(new GroveClient({ baseUrl: grove.url, apiKey: grove.apiKey }), grove, tasks);
      const r = await runBenchmark({
        suite: 'claw',
        tasks: tasks.map(clawBrowserTask),
        env,
        policy: makePolicyFactory({ policy: v.scripted ? 'scripted' : v.policy!, model: v.model, format: v.format, policyApiKey: v['policy-key'] }),
        judges: [env.judge],
        judgeState: env.judgeState,
        outDir: path.join(out, `trial-${k}`),
        concurrency: v.concurrency,
        maxSteps: v.maxSteps,
        sandbox: () => ({ som: true }),
      });
      for (const e of r.summary.episodes) {
        const g = e.verdicts[0]?.details as import('../../claw-env/graders/grade.ts').Grade | undefined;
        trials.push({ task_id: e.task_id, trial: k, termination: e.termination, answer: e.answer ?? '', turns: e.steps, tool_calls: 0, grade: g ?? null, steps: [], started_at: '', duration_ms: 0 });
      }
      io.err(`trial ${k}: ${r.summary.succeeded}/${r.summary.total} passed${scratch ? '' : ` (${path.join(out, `trial-${k}`)})`}\n`);
    }
  } finally {
    await embedded?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
  io.out(`${reportText(summarize(trials, v.trials, { run_id: path.basename(out), policy: v.scripted ? 'scripted (web plans)' : `${v.model} · ${v.format ?? 'qwen3vl'}`, duration_ms: Date.now() - started }))}\n`);
  return 0;
}

export const clawCommand: Command = {
  name: 'claw',
  summary: 'Claw tasks (mail, calendar, contacts, docs, todo): list them, or run them with a tool-calling policy',
  usage,
  run: (argv: string[]) => runClawCommand(argv),
};
