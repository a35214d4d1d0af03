// Step hooks: work that follows every step of a sandbox (recording, for one) without the step's caller knowing
// of it. The contract is owned here, below its users: the registry runs a sandbox's hooks at ready, after each
// step the server reports (server/routes/browser.ts) and at close; the runner's episode loop runs the same hooks
// for the steps it takes over HTTP (runner/attempt.ts). recording/step-hook.ts implements it.
// In the spirit of BrowserGym's pre_step → step → post_step: the step itself stays one pipeline, hooks hang off it.
import type { Observation, ResolvedAction } from '../protocol/observation.ts';
import type { Termination, Verdict } from '../protocol/task.ts';
import { silentLogger, type Logger } from './log.ts';
import type { AdoptedSandbox, ClosedUnheld, Sandbox } from './types.ts';

/** Where a step's actions came from when they were raw model text (recorded beside the actions). */
export interface StepSource {
  model_output: string;
  /** The format the text was parsed with (canonical name); absent when the policy gave actions directly. */
  format?: string;
  thought?: string;
  /** Set when the text did not parse: nothing was executed. */
  parse_error?: string;
}

/** One step as hooks see it. */
export interface StepContext {
  sandboxId: string;
  source?: StepSource;
  /** What the step executed, resolved (empty when nothing ran: unparseable output, no actions). */
  actions: ResolvedAction[];
  /** The observation after the step. */
  observation: Observation;
  /** True when `observation` is the one from before (the step got no new one: the runner's refused step); hooks
   * then use only its url, title and tabs. */
  stale?: boolean;
  /** A terminal action (answer / terminate) ran; `answer` is its text. */
  done?: boolean;
  answer?: string;
  /** What only the policy's side knows (the runner): latency and tokens. */
  policy?: { latency_ms?: number; prompt_tokens?: number; completion_tokens?: number };
}

/** How an episode ended, when the caller knows (the runner); a closed sandbox alone says nothing. */
export interface EpisodeEndInfo {
  termination: Termination;
  answer?: string;
  reward?: number;
  verdicts?: Verdict[];
}

export interface StepHook {
  /** The sandbox is ready, before its first step. A failure fails the sandbox's creation. */
  onReady?(sandbox: Sandbox): Promise<void>;
  /** After each step, in step order. A failure is reported, never turned into a failed step. */
  onStep(ctx: StepContext): Promise<void>;
  /** The episode is over (the sandbox closed, or the runner ended the attempt). Called once. */
  onEnd?(end?: EpisodeEndInfo): Promise<void>;
}

/** The hooks of each sandbox, by id. */
export class StepHooks {
  private readonly bySandbox = new Map<string, StepHook[]>();
  private readonly adoptions: Array<(sandboxId: string, a: AdoptedSandbox) => void> = [];
  private readonly unheld: Array<(sandboxId: string, c: ClosedUnheld) => void> = [];

  constructor(private readonly log: Logger = silentLogger) {}

  attach(sandboxId: string, hook: StepHook): void {
    const list = this.bySandbox.get(sandboxId);
    if (list) list.push(hook);
    else this.bySandbox.set(sandboxId, [hook]);
  }

  /** Attaches hooks to sandboxes the registry adopts from another server (e.g. a recording the servers share). */
  onAdopted(fn: (sandboxId: string, a: AdoptedSandbox) => void): void {
    this.adoptions.push(fn);
  }

  /** The registry adopted a sandbox another server created. */
  adopted(sandboxId: string, a: AdoptedSandbox): void {
    for (const fn of this.adoptions) fn(sandboxId, a);
  }

  /** Ends what a sandbox never held here leaves behind when this server (the shared state's leader) closed it. */
  onClosedUnheld(fn: (sandboxId: string, c: ClosedUnheld) => void): void {
    this.unheld.push(fn);
  }

  /** The shared state's leader closed a sandbox no hook here ran for. */
  closedUnheld(sandboxId: string, c: ClosedUnheld): void {
    for (const fn of this.unheld) fn(sandboxId, c);
  }

  has(sandboxId: string): boolean {
    return this.bySandbox.has(sandboxId);
  }

  /** Runs onReady of the sandbox's hooks in order; throws the first failure (the creation fails with it). */
  async ready(sandboxId: string, sandbox: Sandbox): Promise<void> {
    for (const h of this.bySandbox.get(sandboxId) ?? []) await h.onReady?.(sandbox);
  }

  /**
   * Runs onStep of the sandbox's hooks. Every hook is called before this returns, so calls made in step order
   * reach the hooks in step order even when the caller does not wait; resolves with the failures (logged).
   */
  afterStep(ctx: StepContext): Promise<unknown[]> {
    const hooks = this.bySandbox.get(ctx.sandboxId);
    if (!hooks) return Promise.resolve([]);
    const runs = hooks.map((h) => {
      try {
        return h.onStep(ctx);
      } catch (err) {
        return Promise.reject(err);
      }
    });
    return this.failures(runs, { sandbox_id: ctx.sandboxId }, 'a step hook failed');
  }

  /** Runs onEnd of the sandbox's hooks and forgets them; resolves with the failures (logged). */
  end(sandboxId: string, info?: EpisodeEndInfo): Promise<unknown[]> {
    const hooks = this.bySandbox.get(sandboxId) ?? [];
    this.bySandbox.delete(sandboxId);
    return this.failures(hooks.map((h) => (h.onEnd ? h.onEnd(info) : Promise.resolve())), { sandbox_id: sandboxId }, 'ending a step hook failed');
  }

  private async failures(runs: Promise<void>[], ctx: Record<string, unknown>, msg: string): Promise<unknown[]> {
    const out: unknown[] = [];
    for (const r of await Promise.allSettled(runs)) {
      if (r.status === 'rejected') {
        out.push(r.reason);
        this.log.warn({ ...ctx, err: r.reason }, msg);
      }
    }
    return out;
  }
}
