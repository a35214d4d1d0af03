// An in-memory Sandbox/Backend for registry and lifecycle-route tests (not a browser stand-in: it has no
// step/observe, so browser routes answer wrong_sandbox_type for it).
import type { CreateSandboxBody, SandboxStatus } from '../../protocol/sandbox.ts';
import type { Backend, Clock, Sandbox } from '../../sandbox/types.ts';

export class MemorySandbox implements Sandbox {
  readonly type = 'shell' as const;
  status: SandboxStatus = 'creating';
  closeCalls = 0;
  private resolveReady!: () => void;
  private rejectReady!: (e: unknown) => void;
  private readonly readyP = new Promise<void>((res, rej) => {
    this.resolveReady = res;
    this.rejectReady = rej;
  });
  constructor(readonly id: string) {
    this.readyP.catch(() => {});
  }
  ready(): Promise<void> {
    return this.readyP;
  }
  becomeReady(): void {
    this.status = 'ready';
    this.resolveReady();
  }
  fail(err: unknown): void {
    this.status = 'error';
    this.rejectReady(err);
  }
  async close(): Promise<void> {
    this.closeCalls++;
    this.status = 'closed';
  }
}

export class MemoryBackend implements Backend {
  readonly name = 'memory';
  readonly made: MemorySandbox[] = [];
  autoReady = true;
  shutdownCalls = 0;
  supports(type: CreateSandboxBody['type']): boolean {
    return type === 'shell';
  }
  async create(id: string): Promise<Sandbox> {
    const sb = new MemorySandbox(id);
    this.made.push(sb);
    if (this.autoReady) sb.becomeReady();
    return sb;
  }
  async shutdown(): Promise<void> {
    this.shutdownCalls++;
  }
  statsError: Error | null = null;
  stats(): Record<string, number> {
    if (this.statsError) throw this.statsError;
    return { made: this.made.length };
  }
}

export class FakeClock implements Clock {
  t = Date.parse('2026-01-01T00:00:00Z');
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

