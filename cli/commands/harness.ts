// `grove harness run`: an unmodified agent harness inside a sandbox, its model calls recorded by the proxy, graded
// by the task, written as one episode directory (open with grove view).
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { failure, intOption, parseCommandArgs, subcommands, usageError, valueError, options, type CommandIO } from '../args.ts';
import type { Command } from '../command.ts';

const BUILTIN = {
  'mini-bash': fileURLToPath(new URL('../../runner/harness/harnesses/mini_bash.py', import.meta.url)),
  'screenshot-loop': fileURLToPath(new URL('../../runner/harness/harnesses/screenshot_loop.py', import.meta.url)),
};

const usage = `grove harness run --cmd "COMMAND" --upstream URL --model M (task) [options]

Runs COMMAND (bash -c) in a shell sandbox whose only way out is the recording proxy (and, for Claw tasks, that
Claw sandbox's apps). The harness finds its model through OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL (per
rollout), its task in GROVE_TASK, Claw apps at CLAW_URL with CLAW_TOKEN. A Claw or browser task's sandbox is also an
MCP server at GROVE_MCP_URL (bearer GROVE_MCP_TOKEN), named "grove" in the Codex CLI's config ($HOME/.codex) and in
Claude Code's .mcp.json (docs/harness.md).

Task (one of):
  --prompt TEXT [--check CMD]     a prompt; CMD run in the sandbox afterwards decides success by its exit code
  --swe-fixture ID                an instance of the SWE fixture repository (graded as SWE-bench grades)
  --claw-task ID                  a Claw task (a Claw sandbox beside the shell sandbox; graded by its graders)
  --claw-eval-task ID             a task of a Claw-Eval checkout (--claw-eval DIR, or the --server's own): its
                                  services in a sandbox beside the shell one, reached only over MCP
                                  (GROVE_MCP_URL); graded by the task's own grader.py, as grove claw run --claw-eval;
                                  the prompt is its first message unless --prompt is given
  --browser-task SUITE:ID         a browser task the server knows (offline:Recipes--0, or a loaded task file's):
                                  a browser sandbox beside the shell one, reached only through a one-sandbox
                                  gateway (GROVE_BROWSER_URL, GROVE_BROWSER_TOKEN); --prompt overrides the question
Harness:
  --cmd COMMAND                   the harness command (e.g. "codex exec ...", "python3 /workspace/mini_bash.py");
                                  it runs in /workspace, for --swe-fixture in the checkout /workspace/repo, while
                                  --harness and --upload files land in /workspace: name them by absolute path
  --harness NAME                  put a built-in harness into the workspace: mini-bash (mini_bash.py, a bash-only
                                  loop) or screenshot-loop (screenshot_loop.py, for --browser-task)
  --upload PATH[:DEST]            copy a file into the workspace (repeatable)
  --env NAME=VALUE                an environment variable for the harness (repeatable)
Claw-Eval (for --claw-eval-task with the embedded server):
  --claw-eval DIR                 the checkout (tasks/<id>/task.yaml, grader.py, mock_services/, src/claw_eval)
  --claw-eval-cache DIR           where its Python environment is cached (~/.cache/grove)
  --index-url URL                 the package index its environment is built from (pip's configuration)
  --judge-url URL --judge-model M the judge of graders that call one (key: GROVE_JUDGE_API_KEY)
  --claw-eval-user-url URL --claw-eval-user-model M [--claw-eval-user-key K]
                                  the simulated user of user_agent tasks (its key: K, else GROVE_CLAW_EVAL_USER_KEY;
                                  it stays in this process, the harness never sees it)
Model and run:
  --upstream URL --model M        the real model server (OpenAI-compatible) the proxy forwards to
  --upstream-key KEY              sent upstream as Authorization: Bearer
  --timeout S (600)               the harness's time limit      --out DIR (runs/harness)   --episode ID
  --server URL --server-key K     a running Grove server (default: one embedded in this process)

Exit codes: 0 the harness finished (exit 0; whatever the reward), 1 the harness exited non-zero, timed out or the
sandbox failed, 2 bad options.`;

const OPTS = options(['cmd', 'harness', 'prompt', 'check', 'swe-fixture', 'claw-task', 'claw-eval-task', 'claw-eval', 'claw-eval-cache', 'index-url', 'judge-url', 'judge-model', 'claw-eval-user-url', 'claw-eval-user-model', 'claw-eval-user-key', 'browser-task', 'upstream', 'model', 'upstream-key', 'timeout', 'out', 'episode', 'server', 'server-key'], []);

async function filesToUpload(v: { harness?: string; upload?: string[] }): Promise<{ path: string; content: Buffer; mode?: string }[] | string> {
  const out: { path: string; content: Buffer; mode?: string }[] = [];
  if (v.harness) {
    const f = BUILTIN[v.harness as keyof typeof BUILTIN];
    if (!f) return `--harness: unknown built-in "${v.harness}" (known: ${Object.keys(BUILTIN).join(', ')})`;
    out.push({ path: path.basename(f), content: await readFile(f), mode: '755' });
  }
  for (const spec of v.upload ?? []) {
    const [src, dest] = spec.split(':');
    const st = await stat(src).catch(() => null);
    if (!st) return `--upload: no such file "${src}"`;
    if (st.isDirectory()) {
      for (const name of await readdir(src)) {
        const p = path.join(src, name);
        if ((await stat(p)).isFile()) out.push({ path: path.join(dest ?? path.basename(src), name), content: await readFile(p) });
      }
    } else out.push({ path: dest ?? path.basename(src), content: await readFile(src), mode: (st.mode & 0o111) ? '755' : undefined });
  }
  return out;
}

/** The embedded server's Claw-Eval settings for --claw-eval-task, checked before anything starts: DIR must be a
 * checkout and the task one of its ids (exit 1 / 2 with the reason); with --server the server's own checkout answers. */
async function clawEvalFlags(v: Record<string, string | undefined>, u: { usage: string; io: CommandIO; name: string }): Promise<Record<string, string> | undefined | number> {
  const id = v['claw-eval-task'];
  const claw = ['claw-eval', 'claw-eval-cache', 'index-url', 'judge-url', 'judge-model', 'claw-eval-user-url', 'claw-eval-user-model', 'claw-eval-user-key'].filter((k) => v[k] !== undefined);
  if (id === undefined) return claw.length ? usageError(u, `--${claw[0]} goes with --claw-eval-task`) : undefined;
  if (v.server) return claw.length ? usageError(u, `--${claw[0]}: with --server the server's own checkout runs the task (start it with --claw-eval DIR)`) : undefined;
  if (!v['claw-eval']) return usageError(u, '--claw-eval-task needs --claw-eval DIR (or a --server started with it)');
  if ((v['judge-url'] === undefined) !== (v['judge-model'] === undefined)) return usageError(u, '--judge-url and --judge-model go together');
  if ((v['claw-eval-user-url'] === undefined) !== (v['claw-eval-user-model'] === undefined)) return usageError(u, '--claw-eval-user-url and --claw-eval-user-model go together');
  if (v['claw-eval-user-key'] !== undefined && v['claw-eval-user-url'] === undefined) return usageError(u, '--claw-eval-user-key goes with --claw-eval-user-url and --claw-eval-user-model');
  if (v['claw-eval-user-key'] === '') return valueError(u, '--claw-eval-user-key is empty');
  const { loadClawEvalCheckout } = await import('../../claw-env/claw-eval/checkout.ts');
  let ids: string[];
  try {
    ids = loadClawEvalCheckout(v['claw-eval']).tasks.map((t) => t.id);
  } catch (err) {
    return failure(u, (err as Error).message);
  }
  if (!ids.includes(id)) return valueError(u, `--claw-eval-task: no task "${id.slice(0, 200)}" in ${path.resolve(v['claw-eval'])} (grove claw tasks --claw-eval DIR lists them)`);
  return {
    clawEval: path.resolve(v['claw-eval']),
    ...(v['claw-eval-cache'] ? { clawEvalCache: path.resolve(v['claw-eval-cache']) } : {}),
    ...(v['index-url'] ? { clawEvalIndexUrl: v['index-url'] } : {}),
    ...(v['judge-url'] ? { judgeUrl: v['judge-url'], judgeModel: v['judge-model']! } : {}),
    ...(v['claw-eval-user-url'] ? { clawEvalUserUrl: v['claw-eval-user-url'], clawEvalUserModel: v['claw-eval-user-model']! } : {}),
    // the embedded server's setting (this process): the key reaches no child's argv or environment
    ...(v['claw-eval-user-key'] ? { clawEvalUserKey: v['claw-eval-user-key'] } : {}),
  };
}

export async function harnessRun(argv: string[], io: CommandIO): Promise<number> {
  const u = { usage, io, name: 'harness' };
  const parsed = parseCommandArgs({ args: argv, options: { ...OPTS, upload: { type: 'string', multiple: true }, env: { type: 'string', multiple: true } }, strict: true }, u);
  if (typeof parsed === 'number') return parsed;
  const v = parsed.values as Record<string, string | undefined> & { upload?: string[]; env?: string[] };
  const env: Record<string, string> = {};
  for (const e of v.env ?? []) {
    const eq = e.indexOf('=');
    if (eq < 1) return valueError(u, `--env expects NAME=VALUE, got "${e}"`);
    env[e.slice(0, eq)] = e.slice(eq + 1);
  }
  if (!v.cmd) return usageError(u, '--cmd is required');
  if (!v.upstream || !v.model) return usageError(u, '--upstream and --model are required');
  const tasks = [v['browser-task'] || v['claw-eval-task'] ? undefined : v.prompt, v['swe-fixture'], v['claw-task'], v['claw-eval-task'], v['browser-task']].filter((x) => x !== undefined);
  if (tasks.length !== 1) return usageError(u, 'give exactly one task: --prompt, --swe-fixture, --claw-task, --claw-eval-task or --browser-task');
  const clawEval = await clawEvalFlags(v, u);
  if (typeof clawEval === 'number') return clawEval;
  const timeout = intOption(v.timeout, 'timeout', 1);
  if (timeout instanceof Error) return valueError(u, timeout.message);
  const files = await filesToUpload(v);
  if (typeof files === 'string') return valueError(u, files);

  let scratch: string | undefined;
  try {
    let task;
    if (v['browser-task']) {
      const [suite, ...rest] = v['browser-task'].split(':');
      const id = rest.join(':');
      if (!suite || !id) return valueError(u, `--browser-task expects SUITE:ID, got "${v['browser-task']}"`);
      let prompt = v.prompt;
      if (prompt === undefined && suite === 'offline') {
        const { loadOfflineTasks } = await import('../../sites/tasks.ts');
        prompt = loadOfflineTasks('http://sites.invalid').find((t) => t.id === id)?.question;
      }
      if (prompt === undefined) return valueError(u, `--browser-task ${v['browser-task']}: unknown task, or give its question with --prompt`);
      task = { kind: 'browser' as const, task: { suite, id }, prompt };
    } else if (v.prompt !== undefined) task = { kind: 'prompt' as const, id: 'prompt', prompt: v.prompt, check: v.check };
    else if (v['claw-task']) task = { kind: 'claw' as const, id: v['claw-task'], prompt: '' };
    else if (v['claw-eval-task'] !== undefined) task = { kind: 'claw-eval' as const, id: v['claw-eval-task'], prompt: v.prompt ?? '' };
    else {
      const { fixtureInstances, buildFixtureRepo, FIXTURE_REPO } = await import('../../swe-env/fixture.ts');
      const inst = (await fixtureInstances()).find((i) => i.instance_id === v['swe-fixture']);
      if (!inst) return valueError(u, `--swe-fixture: unknown instance "${v['swe-fixture']}"`);
      const os = await import('node:os');
      // The fixture repository is built into a temporary folder, removed when the command ends.
      scratch = await mkdtemp(path.join(os.tmpdir(), 'grove-textkit-'));
      const dir = path.join(scratch, 'textkit');
      await buildFixtureRepo(dir);
      task = { kind: 'swe' as const, instance: inst, sources: { [FIXTURE_REPO]: dir } };
    }
    if (task.kind === 'claw') {
      const { clawTaskPrompt } = await import('../../runner/harness/claw-task.ts');
      const prompt = clawTaskPrompt(task.id);
      if (prompt === undefined) return valueError(u, `--claw-task: unknown task "${task.id}" (grove claw tasks lists them)`);
      task.prompt = prompt;
    }
    const out = path.resolve(v.out ?? 'runs/harness');
    const { startProxy } = await import('../../proxy/index.ts');
    const { runHarness } = await import('../../runner/harness/run.ts');
    const { connectGrove } = await import('./run-embedded.ts');
    const grove = await connectGrove({ server: v.server, serverKey: v['server-key'], recordingsDir: path.join(out, 'server-recordings'), ...(clawEval ? { flags: clawEval } : {}) });
    const client = grove.client;
    const proxy = await startProxy({ upstream: v.upstream, upstreamKey: v['upstream-key'], dir: path.join(out, 'proxy'), callTimeoutMs: 600_000 }).catch(async (err: unknown) => {
      await grove.close();
      throw err;
    });
    try {
      const episodeId = v.episode ?? `${task.kind === 'swe' ? task.instance.instance_id : task.id}--${Date.now().toString(36)}`;
      const r = await runHarness({ client, proxy, cmd: v.cmd, files, task, model: v.model, env, timeoutS: (timeout as number | undefined) ?? 600, outDir: path.join(out, 'episodes'), episodeId, runId: path.basename(out), groveUrl: grove.url });
      io.out(`${episodeId}: ${r.termination.reason}${r.termination.detail ? ` (${r.termination.detail})` : ''}, reward ${r.reward ?? '—'}, ${r.calls} model calls recorded; episode in ${r.episodeDir}\n`);
      // The harness's own failure is the run's: a harness that exited non-zero (or was killed at --timeout) did not finish.
      if (r.termination.reason === 'env_error') return failure(u, `the run failed: ${r.termination.detail ?? 'environment error'}`);
      if (r.harness.exit_code !== 0) return failure(u, `the harness ${r.harness.timed_out ? `ran past --timeout ${(timeout as number | undefined) ?? 600} s` : `exited ${r.harness.exit_code}`} (its output: ${path.join(r.episodeDir, 'harness.log')})`);
      return 0;
    } finally {
      await proxy.close();
      await grove.close();
    }
  } finally {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}

export const harnessCommand: Command = {
  name: 'harness',
  summary: 'Run an agent harness in a sandbox with its model calls recorded by the proxy, graded by the task',
  usage,
  run: subcommands('harness', usage, { run: harnessRun }),
};
