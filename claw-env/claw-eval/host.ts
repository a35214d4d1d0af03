// A Claw-Eval checkout held by a long-lived process (the server with `--claw-eval DIR`, so `grove harness run
// --claw-eval DIR` through its embedded server): the checkout's yaml read at once (a DIR that is not a checkout fails
// at start), its Python environment and Grove's driver prepared once on first use, and one episode sandbox
// (episode.ts) per `claw_eval_task` creation. A task is named by its id as the yaml gives it, looked up in the loaded
// table — never joined onto a path — so `../x`, absolute paths or encoded tricks are just unknown ids. Tasks with the
// sandbox tools get a shell sandbox of the server per trial (openShell); user_agent tasks the server's user model.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { GroveError } from '../../protocol/errors.ts';
import { importFiles, loadClawEvalCheckout, markMissingDeps, type ClawEvalTask } from './checkout.ts';
import type { ClawEvalJudgeConfig } from './grade.ts';
import { clawEvalSandboxTools } from './prompt.ts';
import { ensureClawEvalPython, ensureClawEvalSandboxPython, probeDeps, writeDriver, type ClawEvalPython } from './pyenv.ts';
import type { ClawEvalConfine, ClawEvalIsolation } from './services.ts';
import type { ClawEvalSandboxProvider } from './session.ts';
import type { ClawEvalUserModel } from './user-agent.ts';
import { clawEvalTempDir } from './tmp.ts';

export interface PreparedCheckout {
  root: string;
  python: ClawEvalPython;
  driver: string;
  /** The driver's temp folder (remove it when done). */
  tmp: string;
  tasks: ClawEvalTask[];
}

export interface PrepareOptions {
  dir: string;
  cacheDir: string;
  indexUrl?: string;
  python?: string;
  log?: (line: string) => void;
}

/** The checkout's Python environment (built once, cached), Grove's driver in a temp folder, and the tasks with the
 * imports their graders and services lack marked missing_python_dep. What `grove claw tasks|run --claw-eval` use. */
export async function prepareClawEvalCheckout(o: PrepareOptions): Promise<PreparedCheckout> {
  const co = loadClawEvalCheckout(o.dir);
  const python = await ensureClawEvalPython(co.root, { cacheDir: o.cacheDir, indexUrl: o.indexUrl, python: o.python, log: o.log });
  const tmp = clawEvalTempDir('driver');
  try {
    const driver = writeDriver(tmp);
    const ready = co.tasks.filter((t) => t.status === 'ready');
    const missing = await probeDeps(python, driver, co.root, ready.map((t) => ({ id: t.id, files: importFiles(co.root, t) })));
    return { root: co.root, python, driver, tmp, tasks: markMissingDeps(co.tasks, missing) };
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** A fresh shell sandbox of the server for one trial's sandbox tools (no network), closed with the trial. */
export type ClawEvalShellOpener = ClawEvalSandboxProvider['open'];

export interface ClawEvalHostOptions extends PrepareOptions {
  /** The judge of tasks whose graders call one (the server's --judge-url/--judge-model through Grove's judge client). */
  judge?: ClawEvalJudgeConfig;
  /** The simulated user of user_agent tasks (the server's --claw-eval-user-url/--claw-eval-user-model). */
  userModel?: ClawEvalUserModel;
  /** The server's shell sandboxes, for tasks with the sandbox tools. */
  openShell?: ClawEvalShellOpener;
  /** The services under the server's shell-sandbox limits (services.ts ClawEvalConfine). */
  confine?: ClawEvalConfine;
  /** `pod`: the services without bubblewrap (a Claw-Eval worker pod only: server/server.ts refuses it elsewhere). */
  isolation?: ClawEvalIsolation;
  /** A worker's checkout (`grove worker --claw-eval`): its orchestrator grades the episodes and answers their simulated
   * users (its judge and user model; no key enters a pod), so tasks that need them are not refused here. */
  gradedElsewhere?: boolean;
  /** Where the sandbox server's Python is cached (default /var/cache/grove: readable inside shell sandboxes). */
  sandboxCacheDir?: string;
  errorRate?: number;
}

export class ClawEvalHost {
  readonly root: string;
  private readonly byId: Map<string, ClawEvalTask>;
  private prepared?: Promise<PreparedCheckout>;
  private sandbox?: Promise<ClawEvalSandboxProvider>;
  private closed = false;

  /** Reads the checkout's yaml now: throws ClawEvalCheckoutError for a DIR that is not a checkout. */
  constructor(readonly o: ClawEvalHostOptions) {
    const co = loadClawEvalCheckout(o.dir);
    this.root = co.root;
    this.byId = new Map(co.tasks.map((t) => [t.id, t]));
  }

  /** The task as the checkout's yaml gives it (before the dependency probe); undefined for an unknown id. */
  peek(id: string): ClawEvalTask | undefined {
    return this.byId.get(id);
  }

  /** Refuses (4xx) what can never run here, before any sandbox exists: an unknown id, a task skipped at load, a task
   * needing what an episode sandbox does not give (sandbox tools, a simulated user, a judge the server lacks). */
  check(id: string, o: { shellsElsewhere?: boolean } = {}): ClawEvalTask {
    const t = this.byId.get(id);
    if (!t) throw new GroveError('task_not_found', `No Claw-Eval task "${id.slice(0, 200)}" in the server's checkout (${this.byId.size} tasks; grove claw tasks --claw-eval DIR lists them).`);
    if (t.status !== 'ready') throw new GroveError('invalid_request', `Claw-Eval task ${t.id} cannot run here: ${t.reason}.`);
    // an orchestrator of pods runs the sandbox tools on a shell pod, and its worker's episode records them
    if (t.sandbox && !this.o.openShell && !o.shellsElsewhere && !this.o.gradedElsewhere) throw new GroveError('invalid_request', `Claw-Eval task ${t.id} runs with the sandbox tools (Bash, Read, …) and this server has no shell sandboxes (root and bubblewrap are needed): run it where they are.`);
    if (t.user_agent && !this.o.userModel && !this.o.gradedElsewhere) throw new GroveError('invalid_request', `Claw-Eval task ${t.id} talks with a simulated user (user_agent) and this server has no user model: start it with --claw-eval-user-url and --claw-eval-user-model.`);
    if (t.needs_judge && !this.o.judge && !this.o.gradedElsewhere) throw new GroveError('invalid_request', `Claw-Eval task ${t.id} is graded with a judge and this server has none: start it with --judge-url and --judge-model.`);
    return t;
  }

  /** What the server gives the episodes (server/claw-eval.ts): its shells, its limits, its user model. Before any
   * sandbox. */
  equip(o: { openShell?: ClawEvalShellOpener; userModel?: ClawEvalUserModel; confine?: ClawEvalConfine }): void {
    if (o.openShell) this.o.openShell = o.openShell;
    if (o.confine) this.o.confine = o.confine;
    if (o.userModel) this.o.userModel = o.userModel;
  }

  /** The prepared checkout (Python environment, driver, dependency probe), once; a failure is retried next time. */
  prepare(): Promise<PreparedCheckout> {
    if (this.closed) return Promise.reject(new GroveError('shutting_down'));
    if (!this.prepared) {
      this.prepared = prepareClawEvalCheckout(this.o);
      this.prepared.catch(() => (this.prepared = undefined));
    }
    return this.prepared;
  }

  /** The sandbox tools (once): the Python that runs the checkout's sandbox server inside a shell sandbox, built from
   * its requirements-sandbox-server.txt, and its tool specs; undefined on a server without shell sandboxes. */
  sandboxProvider(): Promise<ClawEvalSandboxProvider> | undefined {
    const open = this.o.openShell;
    if (!open) return undefined;
    if (!this.sandbox) {
      this.sandbox = (async () => {
        const p = await this.prepare();
        const py = await ensureClawEvalSandboxPython(p.root, { cacheDir: this.o.sandboxCacheDir, indexUrl: this.o.indexUrl, log: this.o.log });
        return { python: py.python, tools: await clawEvalSandboxTools(p), open };
      })();
      this.sandbox.catch(() => (this.sandbox = undefined));
    }
    return this.sandbox;
  }

  /** The task as the prepared checkout sees it (missing_python_dep known only after the probe). */
  async task(id: string): Promise<{ task: ClawEvalTask; prepared: PreparedCheckout }> {
    this.check(id, { shellsElsewhere: true });
    const prepared = await this.prepare();
    const task = prepared.tasks.find((t) => t.id === id)!;
    if (task.status !== 'ready') throw new GroveError('invalid_request', `Claw-Eval task ${task.id} cannot run here: ${task.reason}.`);
    return { task, prepared };
  }

  async close(): Promise<void> {
    this.closed = true;
    const p = await this.prepared?.catch(() => undefined);
    if (p) rmSync(p.tmp, { recursive: true, force: true });
  }
}
