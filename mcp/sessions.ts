// MCP sessions of the sandboxes: one SDK Streamable HTTP transport and Server per session, held under the sandbox
// that created it — a session id is looked up only among its own sandbox's sessions, so another sandbox's id is
// unknown there (404, as the transport answers an unknown session). Bounded: at most `perSandbox` sessions per
// sandbox (the least recently used is closed for a new one), idle ones closed after `idleMs`, all of a sandbox's
// closed with it, all closed at shutdown.
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  lastUsed: number;
}

export interface SessionOptions {
  perSandbox: number;
  idleMs: number;
  now?: () => number;
}

export class McpSessions {
  private readonly bySandbox = new Map<string, Map<string, Session>>();
  private timer: NodeJS.Timeout | null = null;
  private readonly now: () => number;

  constructor(private readonly o: SessionOptions) {
    this.now = o.now ?? Date.now;
  }

  start(sweepMs = Math.min(60_000, this.o.idleMs)): void {
    this.timer ??= setInterval(() => void this.sweep(), sweepMs);
    this.timer.unref();
  }

  /** The session `sessionId` of sandbox `sandboxId` (marks it used), or undefined. */
  get(sandboxId: string, sessionId: string): StreamableHTTPServerTransport | undefined {
    const s = this.bySandbox.get(sandboxId)?.get(sessionId);
    if (!s) return undefined;
    s.lastUsed = this.now();
    return s.transport;
  }

  /** A new transport for an initialize request, connected to `server`; it is held once the SDK has given it an id. */
  async open(sandboxId: string, server: Server): Promise<StreamableHTTPServerTransport> {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // A POST is answered with its JSON-RPC response, not a one-event SSE stream: these tools send no progress
      // notifications, and plain JSON passes any relay (the harness gateway) as is. GET still opens the server's stream.
      enableJsonResponse: true,
      onsessioninitialized: (sid) => this.hold(sandboxId, sid, { transport, server, lastUsed: this.now() }),
      onsessionclosed: (sid) => void this.drop(sandboxId, sid),
    });
    transport.onclose = () => {
      if (transport.sessionId) this.bySandbox.get(sandboxId)?.delete(transport.sessionId);
    };
    await server.connect(transport);
    return transport;
  }

  private hold(sandboxId: string, sid: string, s: Session): void {
    let m = this.bySandbox.get(sandboxId);
    if (!m) this.bySandbox.set(sandboxId, (m = new Map()));
    while (m.size >= this.o.perSandbox) {
      let oldest: [string, Session] | undefined;
      for (const e of m) if (!oldest || e[1].lastUsed < oldest[1].lastUsed) oldest = e;
      void this.drop(sandboxId, oldest![0]);
    }
    m.set(sid, s);
  }

  private async drop(sandboxId: string, sid: string): Promise<void> {
    const m = this.bySandbox.get(sandboxId);
    const s = m?.get(sid);
    if (!m || !s) return;
    m.delete(sid);
    if (m.size === 0) this.bySandbox.delete(sandboxId);
    await s.server.close().catch(() => undefined);
  }

  /** Closes every session of a sandbox (it was closed). */
  async closeSandbox(sandboxId: string): Promise<void> {
    const m = this.bySandbox.get(sandboxId);
    if (!m) return;
    await Promise.all([...m.keys()].map((sid) => this.drop(sandboxId, sid)));
  }

  /** Closes the sessions idle for longer than idleMs; returns how many. */
  async sweep(): Promise<number> {
    const cutoff = this.now() - this.o.idleMs;
    const idle: Array<[string, string]> = [];
    for (const [sb, m] of this.bySandbox) for (const [sid, s] of m) if (s.lastUsed < cutoff) idle.push([sb, sid]);
    await Promise.all(idle.map(([sb, sid]) => this.drop(sb, sid)));
    return idle.length;
  }

  count(sandboxId?: string): number {
    if (sandboxId !== undefined) return this.bySandbox.get(sandboxId)?.size ?? 0;
    let n = 0;
    for (const m of this.bySandbox.values()) n += m.size;
    return n;
  }

  async closeAll(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.all([...this.bySandbox.keys()].map((id) => this.closeSandbox(id)));
  }
}
