// The browser environment: creates sandboxes on pooled contexts behind the network gate, and keeps a few
// warm contexts (default look: 1280x1000, no UA/locale/timezone override) so a default create is instant: at least
// `warmPool`, and as many as the largest wave of creates seen, within a memory budget (warm-demand.ts).
import type { NetworkRules } from '../protocol/sandbox.ts';
import type { BrowserCreateOptions } from '../protocol/sandbox.ts';
import { GroveError } from '../protocol/errors.ts';
import type { Logger } from '../sandbox/log.ts';
import { contextOptions, DEFAULT_LOOK, isDefaultLook, prepareContext, type ContextSource, type Prepared, type ProxyGate, type ProxySettings } from './context.ts';
import type { SandboxLimits } from './limits.ts';
import { ChromiumSandbox, type GateSinks, type WarmClaim } from './sandbox.ts';
import type { BrowserEnvironment, BrowserSandbox, ContextExtras } from './types.ts';
import { errMessage, quietly } from './util.ts';
import { WarmDemand } from './warm-demand.ts';

/** A warm context may not reach anything until it is claimed and given the sandbox's rules. */
const WARM_RULES: NetworkRules = { block_network: true, allow: [], allow_domains: [], deny_domains: [] };

/** Warm contexts being opened at once. */
const MAX_FILLING = 2;

interface WarmEntry {
  prepared: Prepared;
  gateKey: string;
  proxy: ProxySettings;
  /** Set when a sandbox claims the context; until then gate reports go nowhere. */
  sinks: GateSinks | null;
}

export interface EnvironmentParts {
  source: ContextSource & { stats?(): Record<string, number>; shutdown?(): Promise<void> };
  gate?: ProxyGate & { close?(): Promise<void> };
  dataDir: string;
  /** Warm contexts kept at least. */
  warmPool: number;
  /** Memory budget of the warm contexts the pool learns from waves of creates, MiB (0: only `warmPool`). */
  warmPoolMaxMb?: number;
  limits?: SandboxLimits;
  /** The frame cache for sandboxes that do not say (`frame_cache`); on when not given (the server gives its
   * `frameCache` setting, off by default: sandbox/config.ts). */
  frameCache?: boolean;
  log: Logger;
}

export class LocalBrowserEnvironment implements BrowserEnvironment {
  private warm: WarmEntry[] = [];
  private filling = 0;
  private fillFailures = 0;
  private warmSeq = 0;
  private live = new Set<ChromiumSandbox>();
  private counters = { warm_hits_total: 0, warm_misses_total: 0, sandboxes_created_total: 0 };
  private stopping = false;
  private fills = new Set<Promise<void>>();
  private readonly demand: WarmDemand;

  constructor(private readonly parts: EnvironmentParts) {
    this.demand = new WarmDemand(parts.warmPool, parts.warmPoolMaxMb ?? 0);
  }

  /** Starts filling the warm pool (in the background). */
  startWarm(): void {
    this.refill();
  }

  async create(id: string, options: BrowserCreateOptions, extras?: ContextExtras): Promise<BrowserSandbox> {
    if (this.stopping) throw new GroveError('shutting_down');
    this.counters.sandboxes_created_total++;
    // The frame cache as the sandbox asks, else as the server's configuration says (its default: off), else on for an
    // environment built without one (kept across resets).
    options = { ...options, frame_cache: options.frame_cache ?? this.parts.frameCache ?? true };
    const warm = await this.claimWarm(options, extras);
    const sb = new ChromiumSandbox(id, options, {
      source: this.parts.source,
      gate: this.parts.gate,
      dataDir: this.parts.dataDir,
      limits: this.parts.limits,
      log: this.parts.log,
      extras,
      warm,
      // An episode reset takes a warm context too when the sandbox's options allow one.
      claimWarm: (o) => this.claimWarm(o, extras),
      onClose: () => this.live.delete(sb),
    });
    this.live.add(sb);
    return sb;
  }

  /**
   * A warm context with `options.network` applied, when the options allow one (default look, no extras) and
   * one is ready; undefined otherwise. Starts refilling the pool either way.
   */
  private async claimWarm(options: BrowserCreateOptions, extras?: ContextExtras): Promise<WarmClaim | undefined> {
    // Extras change how the context is made (HAR recording is a creation-time option): always a fresh one.
    const plain = !extras?.contextOptions && !extras?.prepare;
    if (this.stopping || !plain || !isDefaultLook(options) || !this.parts.gate) return undefined;
    // Demand a warm context could serve: the pool learns the size of the waves it comes in.
    this.demand.note();
    let warm = this.warm.shift();
    // A warm context whose browser died while waiting is useless: drop it (its close handler may not have run yet).
    while (warm && warm.prepared.page.isClosed()) {
      void this.discard(warm);
      warm = this.warm.shift();
    }
    if (warm) {
      this.counters.warm_hits_total++;
      try {
        await this.parts.gate.update(warm.gateKey, options.network);
      } catch (e) {
        this.parts.log.warn({ err: errMessage(e) }, 'warm context claim failed; creating a fresh one');
        await this.discard(warm);
        warm = undefined;
      }
    } else this.counters.warm_misses_total++;
    // A default create is a sign the warm pool is wanted: retry filling even after earlier failures.
    this.fillFailures = 0;
    this.refill();
    const entry = warm;
    return (
      entry && {
        prepared: entry.prepared,
        gateKey: entry.gateKey,
        proxy: entry.proxy,
        setSinks: (sinks) => {
          entry.sinks = sinks;
        },
      }
    );
  }

  private refill(): void {
    const target = this.demand.target();
    // A learned size that decayed gives its memory back.
    while (this.warm.length > target) void this.discard(this.warm.pop()!);
    if (!this.parts.gate || target <= 0) return;
    // After repeated failures stop trying until a claim makes room again (no hot loop on a broken browser).
    // A few at a time: sixteen contexts opened at once on a small machine starve the sandboxes that are running.
    while (!this.stopping && this.warm.length + this.filling < target && this.filling < MAX_FILLING && this.fillFailures < 3) {
      this.filling++;
      const p = this.makeWarm()
        .then((w) => {
          this.fillFailures = 0;
          if (this.stopping) return this.discard(w);
          this.warm.push(w);
        })
        .catch((e) => {
          this.fillFailures++;
          this.parts.log.warn({ err: errMessage(e) }, 'warm context creation failed');
        })
        .finally(() => {
          this.filling--;
          this.fills.delete(p);
          if (this.fillFailures < 3) this.refill();
        });
      this.fills.add(p);
    }
  }

  private async makeWarm(): Promise<WarmEntry> {
    const gate = this.parts.gate!;
    const gateKey = `warm-${++this.warmSeq}-${Date.now().toString(36)}`;
    const entry: Partial<WarmEntry> & { sinks: WarmEntry['sinks'] } = { sinks: null };
    const proxy = await gate.register(
      gateKey,
      WARM_RULES,
      (e) => entry.sinks?.blocked(e),
      (e) => entry.sinks?.upstream(e),
    );
    try {
      const prepared = await prepareContext(this.parts.source, contextOptions(DEFAULT_LOOK, proxy), 30_000);
      const w = Object.assign(entry, { prepared, gateKey, proxy });
      prepared.pooled.context.on('close', () => {
        const i = this.warm.indexOf(w);
        if (i >= 0) {
          this.warm.splice(i, 1);
          void this.discard(w);
          this.refill();
        }
      });
      return w;
    } catch (e) {
      await quietly(Promise.resolve(gate.unregister(gateKey)));
      throw e;
    }
  }

  private async discard(w: WarmEntry): Promise<void> {
    await quietly(w.prepared.pooled.release());
    await quietly(Promise.resolve(this.parts.gate?.unregister(w.gateKey)));
  }

  /** Waits until the warm pool is full (tests and benchmarks; never needed for correctness). */
  async warmed(): Promise<void> {
    while (this.fills.size) await Promise.allSettled([...this.fills]);
  }

  stats(): Record<string, number> {
    return {
      ...(this.parts.source.stats?.() ?? {}),
      ...this.counters,
      warm_ready: this.warm.length,
      warm_target: this.demand.target(),
      sandboxes_live: this.live.size,
    };
  }

  async shutdown(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    await Promise.allSettled([...this.fills]);
    await Promise.allSettled([...this.live].map((s) => s.close()));
    await Promise.allSettled(this.warm.splice(0).map((w) => this.discard(w)));
    await quietly(this.parts.source.shutdown?.());
    await quietly(this.parts.gate?.close?.());
  }
}
