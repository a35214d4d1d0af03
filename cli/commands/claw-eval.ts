// `grove claw tasks --claw-eval DIR` and `grove claw run --claw-eval DIR`: the user's Claw-Eval checkout run with its
// own code (mock services, graders, compute_task_score). tasks prints the coverage table (status × reason);
// run runs the ready tasks k times each and prints Claw-Eval's summary.
import { homedir } from 'node:os';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { failure, intOption, list, usageError, valueError, type CommandIO, type CommandUsage } from '../args.ts';

export const CLAW_EVAL_USAGE = `grove claw tasks --claw-eval DIR [--ids ID[,ID]] [--json] [--cache DIR] [--index-url URL] [--python PY]
grove claw run --claw-eval DIR --policy URL --model M [--policy-key K] [--ids ID[,ID]] [--limit N]
    [--trials K] [--concurrency N] [--out DIR] [--error-rate R]
    [--judge-url URL --judge-model M [--judge-key K]] [--user-url URL --user-model M [--user-key K]]
    [--cache DIR] [--index-url URL] [--python PY] [--sandbox-cache DIR] [--server URL [--server-key K]]

--claw-eval DIR: a checkout of Claw-Eval (tasks/<id>/task.yaml, grader.py, mock_services/, src/claw_eval). Grove runs
its code from DIR: each trial starts the task's mock services (their FastAPI apps) in a bubblewrap sandbox without
network, reached only through Grove's tool bridge; the task's own grader.py scores the trace (the checkout's LLMJudge,
its chat calls relayed to Grove's judge client on --judge-url) and compute_task_score combines it. The checkout's Python environment is built once from
the package index (pip's configuration, or --index-url) and cached under --cache (default ~/.cache/grove).
Tasks with no service, or that put files in the sandbox or read an env snapshot from it, run with the checkout's
sandbox tools (Bash, Read, Write, Edit, Glob, Grep, …) in a Grove shell sandbox per trial (embedded, or --server):
its sandbox_files in /workspace, its own sandbox server (src/claw_eval/sandbox/server.py) answering each call with the
Python built from its requirements-sandbox-server.txt under --sandbox-cache (default /var/cache/grove), and its env
snapshot read after the loop. Attachments and media the prompt names are loaded from DIR by its media loader.
Tasks Grove cannot run are listed by reason: needs_internet:<service>, missing_file:<path>,
missing_python_dep:<module>. Multi-turn tasks (user_agent) answer the agent with the checkout's simulated user, its
chat calls made by Grove's model client on --user-url/--user-model. A task's services must be ready within its own
time budget (timeout_seconds); one that is not errors the trial, naming it (not retried, as Claw-Eval). --error-rate
sets the mock services' ERROR_RATE where the task sets none (Claw-Eval's default is 0). The services are held to the
limits of Grove's shell sandboxes, as a server's episodes are (GROVE_SHELL_MEMORY_MB, GROVE_SHELL_MAX_PROCESSES,
GROVE_SHELL_CPU, and GROVE_SHELL_DISK_MB for their writable state, on a disk under GROVE_DATA_DIR, ./.grove by default);
without root and bubblewrap they run without them (a warning says so).`;

type Values = Record<string, string | boolean | undefined>;

/** The first three ids, then an ellipsis when there are more. */
function someIds(tasks: { id: string }[]): string {
  return `${tasks.slice(0, 3).map((t) => t.id).join(', ')}${tasks.length > 3 ? ', …' : ''}`;
}

type Prepared = import('../../claw-env/claw-eval/host.ts').PreparedCheckout;

async function prepare(v: Values, io: CommandIO): Promise<Prepared> {
  const { prepareClawEvalCheckout } = await import('../../claw-env/claw-eval/host.ts');
  const p = await prepareClawEvalCheckout({
    dir: v['claw-eval'] as string,
    cacheDir: typeof v.cache === 'string' ? path.resolve(v.cache) : path.join(homedir(), '.cache', 'grove'),
    indexUrl: v['index-url'] as string | undefined,
    python: v.python as string | undefined,
    log: (l) => io.err(l),
  });
  const ids = list(v.ids as string | undefined);
  return ids ? { ...p, tasks: p.tasks.filter((t) => ids.includes(t.id) || ids.includes(path.basename(t.dir))) } : p;
}

/** Prepares the checkout (its Python environment, the driver, the tasks), runs `use`, and removes the temp folder. */
async function withCheckout(v: Values, io: CommandIO, u: CommandUsage, use: (p: Prepared) => Promise<number>): Promise<number> {
  let p: Prepared;
  try {
    p = await prepare(v, io);
  } catch (err) {
    return failure(u, (err as Error).message);
  }
  try {
    return await use(p);
  } finally {
    rmSync(p.tmp, { recursive: true, force: true });
  }
}

export async function clawEvalTasks(v: Values, io: CommandIO, u: CommandUsage): Promise<number> {
  return withCheckout(v, io, u, async (p) => {
    const { coverageTable } = await import('../../claw-env/claw-eval/checkout.ts');
    if (v.json) for (const t of p.tasks) io.out(`${JSON.stringify({ id: t.id, status: t.status, reason: t.reason ?? null, services: t.services.map((s) => s.name), needs_judge: t.needs_judge, category: t.category })}\n`);
    else {
      io.out(`${'status'.padEnd(8)} ${'count'.padStart(5)}  ${'reason'.padEnd(60)} example\n`);
      for (const r of coverageTable(p.tasks)) io.out(`${r.status.padEnd(8)} ${String(r.count).padStart(5)}  ${(r.reason || '-').padEnd(60)} ${r.example}\n`);
    }
    const ready = p.tasks.filter((t) => t.status === 'ready');
    // the skipped by the kind of their reason (missing_file:<path> is one row per file above)
    const kinds = new Map<string, number>();
    for (const t of p.tasks) {
      if (t.status === 'ready') continue;
      const kind = t.reason!.split(':')[0]!;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    const byKind = [...kinds].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(', ');
    io.err(`${p.tasks.length} task(s): ${ready.length} ready (${ready.filter((t) => t.needs_judge).length} of them need a judge), ${p.tasks.length - ready.length} skipped${byKind ? ` (${byKind})` : ''}\n`);
    return 0;
  });
}

export async function clawEvalRun(v: Values, io: CommandIO, u: CommandUsage): Promise<number> {
  if (v.scripted || v.browser) return usageError(u, '--claw-eval runs a policy (--policy URL --model M): Claw-Eval tasks ship no scripted trajectories and no web UI');
  if (!v.policy || !v.model) return usageError(u, '--policy URL and --model M are required');
  if (v['judge-url'] && !v['judge-model']) return usageError(u, '--judge-model is required with --judge-url');
  const trials = intOption(v.trials as string | undefined, 'trials', 1) ?? 3;
  const concurrency = intOption(v.concurrency as string | undefined, 'concurrency', 1) ?? 4;
  const limit = intOption(v.limit as string | undefined, 'limit', 1);
  if (trials instanceof Error) return valueError(u, trials.message);
  if (concurrency instanceof Error) return valueError(u, concurrency.message);
  if (limit instanceof Error) return valueError(u, limit.message);
  let errorRate: number | undefined;
  if (typeof v['error-rate'] === 'string') {
    errorRate = Number(v['error-rate']);
    if (!(errorRate >= 0 && errorRate <= 1)) return valueError(u, `--error-rate: "${v['error-rate']}" is not a number in [0, 1]`);
  }
  return withCheckout(v, io, u, async (p) => {
    let tasks = p.tasks.filter((t) => t.status === 'ready');
    for (const t of p.tasks) if (t.status !== 'ready') io.err(`${t.id}: not run: ${t.reason}\n`);
    if (typeof limit === 'number') tasks = tasks.slice(0, limit);
    if (tasks.length === 0) return valueError(u, 'no ready task matches the selection');
    const judged = tasks.filter((t) => t.needs_judge);
    if (judged.length && !v['judge-url']) return usageError(u, `${judged.length} selected task(s) are graded with a judge (${someIds(judged)}): give --judge-url and --judge-model, or select others with --ids`);
    if (v['user-url'] && !v['user-model']) return usageError(u, '--user-model is required with --user-url');
    const multi = tasks.filter((t) => t.user_agent);
    if (multi.length && !v['user-url']) return usageError(u, `${multi.length} selected task(s) talk with a simulated user (${someIds(multi)}): give --user-url and --user-model, or select others with --ids`);
    const [{ runClawEval, clawEvalReportText }, { ChatClawEvalPolicy, chatUserModel }] = await Promise.all([import('../../runner/claw-eval/run.ts'), import('../../runner/claw-eval/trial.ts')]);
    // the services' limits, as a server's episodes get them: a shell environment from the same settings
    let limits: import('./claw-eval-limits.ts').ClawEvalServiceLimits;
    try {
      limits = await serviceLimits(io, tasks.some((t) => t.services.length > 0));
    } catch (err) {
      return failure(u, `cannot hold the mock services to the shell sandboxes' limits: ${(err as Error).message}`);
    }
    let sandbox: Awaited<ReturnType<typeof openSandboxes>> | undefined;
    if (tasks.some((t) => t.sandbox)) {
      try {
        sandbox = await openSandboxes(v, p, io, Math.max(16, 2 * concurrency));
      } catch (err) {
        await limits.close();
        return failure(u, `the sandbox tools need Grove shell sandboxes: ${(err as Error).message}`);
      }
    }
    try {
    const { report } = await runClawEval({
      sandbox: sandbox?.sandbox,
      confine: limits.confine,
      root: p.root,
      python: p.python,
      driver: p.driver,
      tasks,
      trials,
      concurrency,
      out: v.out as string | undefined,
      errorRate,
      policy: new ChatClawEvalPolicy({ baseURL: v.policy as string, model: v.model as string, apiKey: v['policy-key'] as string | undefined }),
      // the checkout's simulated user, its chat calls made by Grove's model client on --user-url
      userModel: v['user-url'] ? chatUserModel({ baseURL: v['user-url'] as string, model: v['user-model'] as string, apiKey: v['user-key'] as string | undefined }) : undefined,
      // The checkout's LLMJudge with every chat call relayed to Grove's judge client (judges/claw-eval.ts).
      judge: v['judge-url'] ? (await import('../../judges/claw-eval.ts')).clawEvalJudgeRelay(v['judge-url'] as string, v['judge-model'] as string, v['judge-key'] as string | undefined) : undefined,
      onTrial: (r, done, total) => io.err(`[${done}/${total}] ${r.task_id} #${r.trial}: ${r.grade ? `score ${r.grade.task_score}${r.grade.passed ? ' pass' : ''}` : `errored (${r.error})`} (${r.tool_calls} calls)\n`),
    });
    io.out(`${clawEvalReportText(report)}\n`);
    if (v.out) io.err(`traces: ${path.join(v.out as string, 'traces')} (Claw-Eval's JSONL trace format)\n`);
    return report.graded_tasks === 0 ? 1 : 0;
    } finally {
      try {
        await sandbox?.close();
      } finally {
        await limits.close();
      }
    }
  });
}

/** The shell environment's limits for the services (claw-eval-limits.ts), when any selected task has services. */
async function serviceLimits(io: CommandIO, needed: boolean): Promise<import('./claw-eval-limits.ts').ClawEvalServiceLimits> {
  if (!needed) return { close: async () => {} };
  const [{ loadConfig }, { openClawEvalServiceLimits }] = await Promise.all([import('../../sandbox/config.ts'), import('./claw-eval-limits.ts')]);
  const line = (level: string) => (obj: unknown, msg?: string) => io.err(`${level}: ${msg ?? ''} ${JSON.stringify(obj)}\n`);
  const limits = await openClawEvalServiceLimits(loadConfig(), { debug: () => {}, info: () => {}, warn: line('warning'), error: line('error') });
  if (limits.missing) io.err(`warning: the mock services run without memory, process, CPU and disk limits: ${limits.missing}\n`);
  return limits;
}

/** Shell sandboxes for the sandbox tools: a Grove server (embedded, or --server), the Python that runs the checkout's
 * sandbox server inside them (built once from DIR's requirements-sandbox-server.txt), the checkout's tool specs. */
async function openSandboxes(v: Values, p: Prepared, io: CommandIO, maxSandboxes: number) {
  const [{ ensureClawEvalSandboxPython }, { clawEvalSandboxTools }, { connectGrove }, { clientShellProvider }] = await Promise.all([
    import('../../claw-env/claw-eval/pyenv.ts'),
    import('../../claw-env/claw-eval/prompt.ts'),
    import('./run-embedded.ts'),
    import('../../runner/swe/shell-session.ts'),
  ]);
  const py = await ensureClawEvalSandboxPython(p.root, { cacheDir: typeof v['sandbox-cache'] === 'string' ? path.resolve(v['sandbox-cache']) : undefined, indexUrl: v['index-url'] as string | undefined, log: (l) => io.err(l) });
  const tools = await clawEvalSandboxTools(p);
  const grove = await connectGrove({ server: v.server as string | undefined, serverKey: v['server-key'] as string | undefined, maxSandboxes });
  const provider = clientShellProvider(grove.client, { block_network: true });
  return {
    sandbox: {
      python: py.python,
      tools,
      open: async (labels: Record<string, string>) => {
        const s = await provider.open(labels);
        return { shell: s.shell, close: s.close };
      },
    },
    close: () => grove.close(),
  };
}
