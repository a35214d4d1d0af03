// The embedded backend: one process runs every sandbox. It delegates by sandbox type to environment
// factories handed in by the composer (server, runner, CLI), so this core never imports an env package.
import { GroveError } from '../protocol/errors.ts';
import type { BrowserCreateOptions, CreateSandboxBody } from '../protocol/sandbox.ts';
import type { Backend, Sandbox, SharedSandboxes } from './types.ts';

/** What an environment (browser-env, swe-env, ...) offers the backend. BrowserEnvironment fits it. */
export interface EnvironmentFactory<Spec, S extends Sandbox = Sandbox> {
  create(id: string, spec: Spec): Promise<S>;
  /** Optional back-pressure check (see Backend.admit). */
  admit?(spec: Spec): void;
  /** The environment's sandboxes run where this process's loopback is out of reach (worker pods): the offline sites
   * are served beside each sandbox, and a sandbox reads its sites session's state back (`siteState`). */
  sitesBesideSandboxes?: boolean;
  shutdown(): Promise<void>;
  stats(): Record<string, number>;
}

export interface LocalEnvironments {
  browser?: EnvironmentFactory<BrowserCreateOptions>;
  shell?: EnvironmentFactory<Extract<CreateSandboxBody, { type: 'shell' }>>;
  claw?: EnvironmentFactory<Extract<CreateSandboxBody, { type: 'claw' }>>;
  /** State shared with other servers (the kubernetes backend's replicas); see Backend.shared. */
  shared?: SharedSandboxes;
}

export class LocalBackend implements Backend {
  readonly name = 'local';
  private closed = false;
  private readonly envs: Omit<LocalEnvironments, 'shared'>;
  readonly shared?: SharedSandboxes;

  constructor(envs: LocalEnvironments) {
    const { shared, ...rest } = envs;
    this.envs = rest;
    if (shared) this.shared = shared;
  }

  supports(type: CreateSandboxBody['type']): boolean {
    return this.envs[type] !== undefined;
  }

  admit(spec: CreateSandboxBody): void {
    if (spec.type === 'browser') this.envs.browser?.admit?.(spec);
    else if (spec.type === 'shell') this.envs.shell?.admit?.(spec);
    else if (spec.type === 'claw') this.envs.claw?.admit?.(spec);
  }

  async create(id: string, spec: CreateSandboxBody): Promise<Sandbox> {
    if (this.closed) throw new GroveError('shutting_down');
    switch (spec.type) {
      case 'browser':
        if (this.envs.browser) return this.envs.browser.create(id, spec);
        break;
      case 'shell':
        if (this.envs.shell) return this.envs.shell.create(id, spec);
        break;
      case 'claw':
        if (this.envs.claw) return this.envs.claw.create(id, spec);
        break;
    }
    throw new GroveError('unsupported_sandbox_type', `Sandbox type "${spec.type}" is not available on this server.`);
  }

  /** Shuts every environment down; one failing does not stop the others. */
  async shutdown(): Promise<void> {
    this.closed = true;
    const envs = Object.values(this.envs).filter((e): e is EnvironmentFactory<never> => e !== undefined);
    const results = await Promise.allSettled(envs.map((e) => e.shutdown()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Environment gauges, prefixed with the sandbox type unless they already are ("browser_processes"). */
  stats(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [type, env] of Object.entries(this.envs)) {
      if (!env) continue;
      for (const [k, v] of Object.entries((env as EnvironmentFactory<never>).stats())) {
        out[k.startsWith(`${type}_`) ? k : `${type}_${k}`] = v;
      }
    }
    return out;
  }
}
