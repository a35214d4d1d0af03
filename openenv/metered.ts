// An environment session that reports its resets, steps and tool calls to the host's meter (/metrics): every
// transport opens its episodes through openEpisode, so each is counted once, where it runs. The steps that ran in a
// sandbox are also counted with Grove's own steps (grove_steps_total), reported by the adapter where they ran.
import type { OpenEnvHost, OpenEnvMeter, OpenEnvTransport } from './host.ts';
import type { EnvSession, McpTool, OpenEnvAdapter, ToolResult } from './envs/types.ts';
import type { ResetArgs, StepOut } from './wire.ts';

class MeteredSession implements EnvSession {
  constructor(
    private readonly inner: EnvSession,
    private readonly meter: OpenEnvMeter,
    private readonly env: string,
    private readonly transport: OpenEnvTransport,
  ) {}

  get sandboxId(): string | undefined {
    return this.inner.sandboxId;
  }

  private async count<T>(run: () => Promise<T>, done: (ok: boolean) => void): Promise<T> {
    try {
      const out = await run();
      done(true);
      return out;
    } catch (err) {
      done(false);
      throw err;
    }
  }

  reset(args: ResetArgs): Promise<StepOut> {
    return this.count(() => this.inner.reset(args), (ok) => this.meter.reset(this.env, this.transport, ok));
  }

  step(action: Record<string, unknown>, timeoutS?: number): Promise<StepOut> {
    return this.count(() => this.inner.step(action, timeoutS), (ok) => this.meter.step(this.env, this.transport, 'step', ok));
  }

  callTool(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    return this.count(() => this.inner.callTool(name, args), (ok) => this.meter.step(this.env, this.transport, 'tool', ok));
  }

  state(): Record<string, unknown> {
    return this.inner.state();
  }

  listTools(): McpTool[] {
    return this.inner.listTools();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A new episode session of `adapter`, counted on the host's meter (when it has one) under `transport`: its resets,
 * steps and tool calls here, and the steps that ran in its sandbox (the adapter reports them) with Grove's own. */
export function openEpisode(adapter: OpenEnvAdapter, host: OpenEnvHost, idleTimeoutS: number, transport: OpenEnvTransport): EnvSession {
  const meter = host.meter;
  if (!meter) return adapter.open(host, idleTimeoutS);
  const inner = adapter.open(host, idleTimeoutS, (type, seconds, outcome) => meter.ran(type, transport, seconds, outcome));
  return new MeteredSession(inner, meter, adapter.name, transport);
}
