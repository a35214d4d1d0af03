// The SWE environment (shell plus grading): a shell sandbox per episode with the instance's repository checked out
// at its base commit (swe-env/repo.ts); steps run commands in the repository. The episode ends with a submission —
// {submit: true} (the repository's diff is the patch), {submit: true, patch}, or a command whose output starts with
// mini-swe-agent's submit line — and the reward is SWE-bench's verdict on that patch (1 resolved, else 0), graded
// in a fresh sandbox at the base commit as `grove swe run` grades (swe-env/evaluate.ts). Instances: the fixture
// repository's (swe-env/fixtures/textkit).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { ExecInput, ExecResult } from '../../protocol/shell.ts';
import { GroveError } from '../../protocol/errors.ts';
import type { ShellSandbox } from '../../shell-env/types.ts';
import { submission, SUBMIT_LINE } from '../../swe-env/bash-format.ts';
import { BundleCache } from '../../swe-env/bundle.ts';
import { evaluatePatch } from '../../swe-env/evaluate.ts';
import { buildFixtureRepo, fixtureInstances, type FixtureInstance } from '../../swe-env/fixture.ts';
import { instanceShell, prepareRepo } from '../../swe-env/repo.ts';
import { specFor } from '../../swe-env/specs.ts';
import { REPO_DIR, type RepoSources, type ShellTarget, type SweInstance } from '../../swe-env/types.ts';
import type { OpenEnvHost } from '../host.ts';
import { OpenEnvError, type ResetArgs, type StepOut } from '../wire.ts';
import { parseOr } from './base.ts';
import { ShellAction, ShellSession, shellTools } from './shell.ts';
import { toolResult, type EnvSession, type McpTool, type OpenEnvAdapter, type StepReport, type TaskEntry, type ToolResult } from './types.ts';

export const SweAction = z.union([
  ShellAction,
  z.strictObject({ submit: z.literal(true), patch: z.string().max(10_000_000).optional().describe("the patch (default: the repository's diff)") }),
]);

const READY_TIMEOUT_MS = 120_000;

/** Where the instances' repositories come from: the fixture repository, built once per server into a temp folder. */
class SweSources {
  private built?: Promise<{ dir: string; sources: RepoSources }>;
  readonly bundles = new BundleCache();

  sources(): Promise<RepoSources> {
    this.built ??= (async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'grove-openenv-swe-'));
      await buildFixtureRepo(path.join(dir, 'textkit'));
      const inst = (await fixtureInstances())[0];
      return { dir, sources: { [inst.repo]: path.join(dir, 'textkit') } };
    })();
    return this.built.then((b) => b.sources);
  }

  async close(): Promise<void> {
    const b = this.built;
    this.built = undefined;
    await this.bundles.close();
    if (b) await rm((await b.catch(() => ({ dir: '' }))).dir || '/nonexistent-grove', { recursive: true, force: true });
  }
}

function target(sb: ShellSandbox): ShellTarget {
  return {
    exec: (req: ExecInput) => sb.exec({ merge_stderr: false, login_shell: false, background: false, ...req } as Parameters<ShellSandbox['exec']>[0]),
    upload: (p, data, mode) => sb.writeFile(p, Buffer.from(data), mode),
  };
}

class SweSession extends ShellSession {
  private instance: FixtureInstance | undefined;
  private shell: ShellTarget | undefined;

  constructor(
    host: OpenEnvHost,
    idleTimeoutS: number,
    private readonly src: SweSources,
    report?: StepReport,
  ) {
    super(host, idleTimeoutS, report);
  }

  async reset(args: ResetArgs): Promise<StepOut> {
    const all = await fixtureInstances();
    const id = typeof args.task === 'string' ? args.task.replace(/^swe\//, '') : all[0].instance_id;
    const inst = all.find((i) => i.instance_id === id);
    if (!inst) throw new OpenEnvError('VALIDATION_ERROR', `No SWE instance "${id}"; known: ${all.map((i) => i.instance_id).join(', ')}.`);
    const spec = specFor(inst.repo, inst.version);
    if (!spec) throw new OpenEnvError('EXECUTION_ERROR', `No spec row for ${inst.repo} ${inst.version ?? ''}.`);
    await this.start(this.shellSpec({}), args);
    this.instance = inst;
    this.shell = instanceShell(target(this.sandbox<ShellSandbox>()));
    try {
      await prepareRepo(this.shell, inst, await this.src.sources(), spec, { bundles: this.src.bundles });
    } catch (err) {
      await this.close();
      throw new OpenEnvError('FACTORY_ERROR', `The repository could not be prepared: ${(err as Error).message}`, undefined, { factory_name: 'grove-swe' });
    } finally {
      this.touch();
    }
    return {
      observation: { exit_code: 0, timed_out: false, signal: null, stdout: '', stderr: '', step: 0, problem_statement: inst.problem_statement, repo_dir: `/workspace/${REPO_DIR}`, submit_line: SUBMIT_LINE },
      reward: null,
      done: false,
    };
  }

  protected async exec(req: z.output<typeof ShellAction>, timeoutS?: number): Promise<ExecResult> {
    const shell = this.shell;
    if (!shell || !this.id) throw new OpenEnvError('EXECUTION_ERROR', 'No episode is running in this session: send a reset first.');
    try {
      return await shell.exec({ ...req, cwd: req.cwd ?? REPO_DIR, timeout_s: req.timeout_s ?? timeoutS });
    } finally {
      this.touch();
    }
  }

  /** Grades the patch in a fresh sandbox at the base commit (SWE-bench: the agent's sandbox is not trusted). */
  private async grade(patch: string): Promise<Record<string, unknown>> {
    const inst = this.instance as SweInstance;
    if (!patch.trim()) return { resolved: false, resolution: 'NO', error: 'empty_patch' };
    const info = this.host.registry.create(this.shellSpec({}));
    try {
      const ready = await this.host.registry.wait(info.sandbox_id, READY_TIMEOUT_MS);
      if (ready.status !== 'ready') throw new GroveError('internal_error', `grading sandbox ${ready.status}`);
      const shell = instanceShell(target(this.host.registry.use(info.sandbox_id) as ShellSandbox));
      const spec = specFor(inst.repo, inst.version)!;
      await prepareRepo(shell, inst, await this.src.sources(), spec, { bundles: this.src.bundles, install: false });
      const e = await evaluatePatch(shell, inst, spec, patch);
      return { resolved: e.resolved, resolution: e.resolution, patch_successfully_applied: e.patch_successfully_applied, report: e.report, ...(e.error ? { error: e.error } : {}) };
    } finally {
      await this.host.registry.delete(info.sandbox_id).catch(() => undefined);
    }
  }

  /** Ends the episode with `patch` (default: the repository's diff); the step (from `started`) is counted before
   * the grading, which is not part of it. */
  private async submit(patch: string | undefined, base: Record<string, unknown>, started: number): Promise<StepOut> {
    let p = patch;
    if (p === undefined) {
      const r = await this.exec({ command: 'git add -A && git diff --cached', merge_stderr: false, login_shell: false });
      p = r.stdout;
    }
    this.ran('shell', started, 'ok');
    const evaluation = await this.grade(p);
    this.ended = true;
    return { observation: { ...base, patch: p, evaluation }, reward: evaluation.resolved ? 1 : 0, done: true };
  }

  async step(action: Record<string, unknown>, timeoutS?: number): Promise<StepOut> {
    const a = parseOr(SweAction, action, ['body', 'action'], 'action');
    if (this.ended) throw new OpenEnvError('EXECUTION_ERROR', 'The episode was submitted: send a reset for a new one.');
    this.steps++;
    const started = performance.now();
    if ('submit' in a) return this.submit(a.patch, { exit_code: 0, timed_out: false, signal: null, stdout: '', stderr: '', step: this.steps }, started);
    const r = await this.exec(a, timeoutS);
    const sub = submission(r.stdout, r.exit_code);
    if (sub !== null) return this.submit(sub, { ...r, step: this.steps }, started);
    this.ran('shell', started, r.timed_out ? 'error' : 'ok');
    return { observation: { ...r, step: this.steps }, reward: null, done: false };
  }

  protected stateExtra(): Record<string, unknown> {
    return { instance_id: this.instance?.instance_id ?? null };
  }

  listTools(): McpTool[] {
    return [...super.listTools(), SUBMIT_TOOL];
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    if (name === 'submit') {
      const out = await this.step({ submit: true, ...(typeof args.patch === 'string' ? { patch: args.patch } : {}) });
      return toolResult({ reward: out.reward, ...out.observation });
    }
    return super.callTool(name, args);
  }
}

const SUBMIT_TOOL: McpTool = { name: 'submit', description: "Submit the patch (default: the repository's diff) for grading; ends the episode.", inputSchema: { type: 'object', properties: { patch: { type: 'string' } } } };

function sweTools(): McpTool[] {
  return [...shellTools(), SUBMIT_TOOL];
}

export function sweAdapter(): OpenEnvAdapter & { close(): Promise<void> } {
  const src = new SweSources();
  return {
    name: 'swe',
    description: "Grove's SWE environment: a repository at an instance's base commit in a shell sandbox; submit a patch, graded as SWE-bench grades it.",
    action: SweAction,
    observation: z.looseObject({ exit_code: z.number().int(), stdout: z.string(), stderr: z.string(), step: z.number().int() }),
    tools: sweTools,
    async tasks(): Promise<TaskEntry[]> {
      return (await fixtureInstances()).map((i) => ({ task: i.instance_id, suite: 'swe', id: i.instance_id, question: i.problem_statement }));
    },
    open(host: OpenEnvHost, idleTimeoutS: number, report?: StepReport): EnvSession {
      return new SweSession(host, idleTimeoutS, src, report);
    },
    close: () => src.close(),
  };
}
