// OpenEnv sessions: one environment session (one Grove sandbox per episode) per WebSocket connection or per
// MCP session created over HTTP (openenv/session/create). Capacity is counted here, as OpenEnv counts sessions
// (CAPACITY_REACHED beyond it); a session idle longer than the timeout is closed with its sandbox. Work on one
// session runs one call at a time, in arrival order.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../sandbox/log.ts';
import type { OpenEnvHost, OpenEnvMeter, OpenEnvTransport } from './host.ts';
import { openEpisode } from './metered.ts';
import type { EnvSession, OpenEnvAdapter } from './envs/types.ts';

export interface Session {
  readonly id: string;
  readonly env: string;
  /** `ws` (the /ws session) and `ws_mcp` (the /mcp WebSocket): bound to their connection, never reachable by id;
   * `mcp`: made by openenv/session/create, named by its id on HTTP /mcp. */
  readonly kind: Exclude<OpenEnvTransport, 'http'>;
  readonly episode: EnvSession;
  lastActivity: number;
  busy: number;
  /** Told when the session closes from this side (idle timeout, server shutdown). */
  onClosed?: (reason: string) => void;
  closed: boolean;
  tail: Promise<unknown>;
}

export class CapacityError extends Error {
  constructor(
    readonly active: number,
    readonly max: number,
  ) {
    super(`Server at capacity: ${active}/${max} sessions active. Close an existing session (or wait for one to end) and connect again.`);
  }
}

export class Sessions {
  private readonly live = new Map<string, Session>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly o: { max: number; idleTimeoutS: number; log: Logger; now?: () => number; meter?: OpenEnvMeter },
  ) {}

  get max(): number {
    return this.o.max;
  }

  get active(): number {
    return this.live.size;
  }

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  /** A new session, or CapacityError when `max` are open. */
  open(adapter: OpenEnvAdapter, host: OpenEnvHost, kind: Session['kind']): Session {
    if (this.live.size >= this.o.max) {
      this.o.meter?.error(adapter.name, kind, 'CAPACITY_REACHED');
      throw new CapacityError(this.live.size, this.o.max);
    }
    const s: Session = {
      id: randomUUID(), env: adapter.name, kind, episode: openEpisode(adapter, host, this.o.idleTimeoutS, kind),
      lastActivity: this.now(), busy: 0, closed: false, tail: Promise.resolve(),
    };
    this.live.set(s.id, s);
    this.o.meter?.sessionOpened(s.env, s.kind);
    this.startSweeping();
    return s;
  }

  /** An MCP session by id, only for the environment it was created for. */
  find(id: string, env: string): Session | undefined {
    const s = this.live.get(id);
    return s && s.kind === 'mcp' && s.env === env ? s : undefined;
  }

  /** Runs `fn` after the session's earlier work; the session counts as active while it runs. */
  run<T>(s: Session, fn: () => Promise<T>): Promise<T> {
    const p = s.tail.then(async () => {
      if (s.closed) throw new Error('The session is closed.');
      s.busy++;
      s.lastActivity = this.now();
      try {
        return await fn();
      } finally {
        s.busy--;
        s.lastActivity = this.now();
      }
    });
    s.tail = p.catch(() => undefined);
    return p;
  }

  /** Closes the session and its sandbox (after the call running on it, if any). */
  async close(s: Session, reason?: string): Promise<void> {
    if (s.closed) return;
    s.closed = true;
    this.live.delete(s.id);
    this.o.meter?.sessionClosed(s.env, s.kind);
    if (reason) s.onClosed?.(reason);
    await s.tail;
    await s.episode.close().catch((err: unknown) => this.o.log.warn({ err, session: s.id }, 'openenv session close failed'));
    if (!this.live.size) this.stopSweeping();
  }

  /** Closes sessions idle longer than the timeout; answers how many. */
  async sweep(): Promise<number> {
    const limit = this.o.idleTimeoutS * 1000;
    const now = this.now();
    const idle = [...this.live.values()].filter((s) => s.busy === 0 && now - s.lastActivity > limit);
    await Promise.all(idle.map((s) => this.close(s, `idle for more than ${this.o.idleTimeoutS} s`)));
    return idle.length;
  }

  private startSweeping(): void {
    if (this.timer) return;
    const every = Math.max(250, Math.min(30_000, (this.o.idleTimeoutS * 1000) / 4));
    this.timer = setInterval(() => {
      this.sweep().catch((err: unknown) => this.o.log.warn({ err }, 'openenv idle sweep failed'));
    }, every);
    this.timer.unref();
  }

  private stopSweeping(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  async closeAll(reason: string): Promise<void> {
    this.stopSweeping();
    await Promise.all([...this.live.values()].map((s) => this.close(s, reason)));
  }
}
