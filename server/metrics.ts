// Prometheus text exposition, written by hand (a few counters, gauges and one histogram).
import type { Backend } from '../sandbox/types.ts';
import type { RegistryEvent, SandboxRegistry } from '../sandbox/registry.ts';
import type { OpenEnvMeter } from '../openenv/host.ts';
import type { StepCounter, StepOutcome, StepTransport, StepType } from '../sandbox/step-count.ts';
import { followLiveHeap, liveHeap } from './heap-live.ts';
import { BUSY_MS, followLoopStalls, loopStalls, STALL_MS } from './loop-stalls.ts';

const STEP_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

type Labels = Record<string, string>;

// Label names are ASCII identifiers: sorted in code-unit order, never with localeCompare (an ICU collation per
// comparison cost ~0.8 ms of server CPU per step, two counters being touched per request).
function key(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k].replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`)
    .join(',');
}

class Counter {
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  inc(labels: Labels, by = 1): void {
    const k = key(labels);
    const row = this.values.get(k) ?? { labels, value: 0 };
    row.value += by;
    this.values.set(k, row);
  }
  get(labels: Labels): number {
    return this.values.get(key(labels))?.value ?? 0;
  }
  rows(): Array<[Labels, number]> {
    return [...this.values.values()].map((r) => [r.labels, r.value]);
  }
}

export class Metrics {
  readonly created = new Counter();
  readonly closed = new Counter();
  readonly createFailed = new Counter();
  readonly steps = new Counter();
  readonly errors = new Counter();
  readonly requests = new Counter();
  private readonly openenvOpened = new Counter();
  private readonly openenvClosed = new Counter();
  private readonly openenvResets = new Counter();
  private readonly openenvSteps = new Counter();
  private readonly openenvErrors = new Counter();
  /** The OpenEnv room's counts (openenv/host.ts). */
  readonly openenv: OpenEnvMeter = {
    sessionOpened: (env, transport) => this.openenvOpened.inc({ env, transport }),
    sessionClosed: (env, transport) => this.openenvClosed.inc({ env, transport }),
    reset: (env, transport, ok) => this.openenvResets.inc({ env, transport, outcome: ok ? 'ok' : 'error' }),
    step: (env, transport, kind, ok) => this.openenvSteps.inc({ env, transport, kind, outcome: ok ? 'ok' : 'error' }),
    error: (env, transport, code) => this.openenvErrors.inc({ env, transport, code }),
    ran: (type, transport, seconds, outcome) => this.observeStep(type, seconds, outcome, `openenv_${transport}` as const),
  };
  /** Where every surface counts its steps (sandbox/step-count.ts). */
  readonly countStep: StepCounter = (type, seconds, outcome, transport) => this.observeStep(type, seconds, outcome, transport);
  private readonly stepBuckets = new Array<number>(STEP_BUCKETS.length).fill(0);
  private stepSum = 0;
  private stepCount = 0;

  constructor() {
    followLiveHeap();
    followLoopStalls();
  }

  /** Counts sandbox lifecycle events from the registry. */
  attach(registry: SandboxRegistry): void {
    registry.onEvent((e: RegistryEvent) => {
      if (e.type === 'created') this.created.inc({ type: e.sandboxType });
      else if (e.type === 'failed') this.createFailed.inc({ type: e.sandboxType, code: e.code });
      else if (e.type === 'closed') this.closed.inc({ type: e.sandboxType, reason: e.reason });
    });
  }

  /** One step: `transport` is `grove` for Grove's own API (its REST routes and step channel), `mcp` for a sandbox's
   * MCP server, `openenv_<transport>` for a step through OpenEnv's protocol (sandbox/step-count.ts). */
  observeStep(type: StepType, seconds: number, outcome: StepOutcome, transport: StepTransport): void {
    this.steps.inc({ type, outcome, transport });
    this.stepSum += seconds;
    this.stepCount++;
    for (let i = 0; i < STEP_BUCKETS.length; i++) if (seconds <= STEP_BUCKETS[i]) this.stepBuckets[i]++;
  }

  error(code: string): void {
    this.errors.inc({ code });
  }

  render(registry: SandboxRegistry, backend: Backend): string {
    const out: string[] = [];
    const family = (name: string, type: string, help: string, rows: Array<[Labels, number]>) => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, v] of rows) {
        const k = key(labels);
        out.push(k ? `${name}{${k}} ${v}` : `${name} ${v}`);
      }
    };
    const fromCounter = (c: Counter) => c.rows();

    family(
      'grove_sandboxes_live',
      'gauge',
      'Sandboxes not yet closed, by type and status.',
      registry.counts().map((c) => [{ type: c.type, status: c.status }, c.count]),
    );
    family('grove_sandboxes_created_total', 'counter', 'Sandboxes created.', fromCounter(this.created));
    family('grove_sandboxes_failed_total', 'counter', 'Sandboxes whose creation failed, by error code.', fromCounter(this.createFailed));
    family(
      'grove_sandboxes_deleted_total',
      'counter',
      'Sandboxes closed by a client delete.',
      fromCounter(this.closed).filter(([l]) => l.reason === 'deleted').map(([l, v]) => [{ type: l.type }, v]),
    );
    family(
      'grove_sandboxes_expired_total',
      'counter',
      'Sandboxes closed by the reaper (TTL or idle timeout).',
      fromCounter(this.closed).filter(([l]) => l.reason?.startsWith('expired')).map(([l, v]) => [{ type: l.type, reason: l.reason }, v]),
    );
    family('grove_steps_total', 'counter', 'Steps executed, by sandbox type, outcome and transport (grove: Grove\'s own API; mcp: a sandbox\'s MCP server; openenv_http, openenv_ws, openenv_mcp, openenv_ws_mcp: OpenEnv\'s).', fromCounter(this.steps));
    out.push('# HELP grove_step_duration_seconds Step latency (action, settle and observation).', '# TYPE grove_step_duration_seconds histogram');
    STEP_BUCKETS.forEach((b, i) => out.push(`grove_step_duration_seconds_bucket{le="${b}"} ${this.stepBuckets[i]}`));
    out.push(`grove_step_duration_seconds_bucket{le="+Inf"} ${this.stepCount}`);
    out.push(`grove_step_duration_seconds_sum ${this.stepSum}`, `grove_step_duration_seconds_count ${this.stepCount}`);
    family('grove_errors_total', 'counter', 'Error responses, by error code.', fromCounter(this.errors));
    family('grove_http_requests_total', 'counter', 'HTTP requests, by route and status.', fromCounter(this.requests));
    family(
      'grove_openenv_sessions_open',
      'gauge',
      'OpenEnv sessions open (/ws, /mcp WebSocket, HTTP /mcp session), by environment and transport.',
      fromCounter(this.openenvOpened).map(([l, v]) => [l, v - this.openenvClosed.get(l)]),
    );
    family('grove_openenv_sessions_total', 'counter', 'OpenEnv sessions opened, by environment and transport.', fromCounter(this.openenvOpened));
    family('grove_openenv_resets_total', 'counter', 'OpenEnv episodes started (reset), by environment, transport and outcome.', fromCounter(this.openenvResets));
    family('grove_openenv_steps_total', 'counter', 'OpenEnv steps and MCP tool calls on episodes, by environment, transport, kind and outcome.', fromCounter(this.openenvSteps));
    family('grove_openenv_errors_total', 'counter', 'OpenEnv error answers, by environment, transport and code (OpenEnv\'s, JSON-RPC\'s or Grove\'s).', fromCounter(this.openenvErrors));
    const stats = backend.stats();
    family(
      'grove_backend',
      'gauge',
      `Backend gauges of the ${backend.name} backend.`,
      Object.keys(stats).sort().map((k) => [{ backend: backend.name, stat: k }, stats[k]]),
    );
    // The server process's own memory, for watching a long run (RSS also holds allocator slack; the V8 heap and
    // external buffers are what the server's objects use).
    const mem = process.memoryUsage();
    family('grove_process_resident_memory_bytes', 'gauge', 'Resident set size of the server process.', [[{}, mem.rss]]);
    family('grove_process_heap_used_bytes', 'gauge', 'V8 heap in use by the server process.', [[{}, mem.heapUsed]]);
    const live = liveHeap();
    if (live) {
      family('grove_process_heap_live_bytes', 'gauge', 'V8 heap in use right after the last full garbage collection (the live objects).', [[{}, live.bytes]]);
      family('grove_process_heap_live_space_bytes', 'gauge', 'The same, by V8 heap space.', Object.entries(live.spaces).map(([space, v]) => [{ space }, v]));
    }
    const stalls = loopStalls();
    family('grove_process_event_loop_stalls_total', 'counter', `Times the server's event loop ran ${STALL_MS} ms or more late (blocked, or no CPU).`, [[{}, stalls.count]]);
    family(
      'grove_process_event_loop_busy_stalls_total',
      'counter',
      `Of those stalls, the ones during which the event loop's thread itself ran ${BUSY_MS} ms or more (its own synchronous work or GC, not a lack of CPU).`,
      [[{}, stalls.busyCount]],
    );
    family('grove_process_event_loop_max_delay_seconds', 'gauge', "The longest the server's event loop has run late since it started.", [[{}, stalls.maxMs / 1000]]);
    family('grove_process_external_memory_bytes', 'gauge', 'Memory of buffers and other objects outside the V8 heap.', [[{}, mem.external + mem.arrayBuffers]]);
    return out.join('\n') + '\n';
  }
}
