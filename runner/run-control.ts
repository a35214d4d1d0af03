// When a benchmark run stops early: the caller's signal, the time cap and the cost cap. One abort signal that every
// running episode listens on, and the run's token total (its cost).
import { setMaxListeners } from 'node:events';

export interface TokenPrice {
  /** USD per million prompt tokens. */
  inputPerMTok: number;
  /** USD per million completion tokens. */
  outputPerMTok: number;
}

export function costUsd(tokens: { prompt: number; completion: number }, price?: TokenPrice): number | undefined {
  if (!price) return undefined;
  return (tokens.prompt * price.inputPerMTok + tokens.completion * price.outputPerMTok) / 1e6;
}

export interface RunControlOptions {
  concurrency: number;
  signal?: AbortSignal;
  maxMinutes?: number;
  maxCostUsd?: number;
  price?: TokenPrice;
}

export class RunControl {
  private readonly ctl = new AbortController();
  private readonly onAbort = () => this.ctl.abort(this.opts.signal?.reason ?? 'aborted');
  private readonly capTimer: NodeJS.Timeout | undefined;
  /** Why the run stopped before its last task, if it did. */
  stoppedEarly: string | undefined;
  readonly tokens = { prompt: 0, completion: 0 };

  constructor(private readonly opts: RunControlOptions) {
    // Every running episode listens on this signal.
    setMaxListeners(opts.concurrency + 10, this.ctl.signal);
    if (opts.signal?.aborted) this.onAbort();
    else opts.signal?.addEventListener('abort', this.onAbort, { once: true });
    this.capTimer =
      opts.maxMinutes !== undefined
        ? setTimeout(() => {
            this.stoppedEarly = `time cap of ${opts.maxMinutes} min reached`;
            this.ctl.abort(this.stoppedEarly);
          }, opts.maxMinutes * 60_000)
        : undefined;
    this.capTimer?.unref();
  }

  get signal(): AbortSignal {
    return this.ctl.signal;
  }

  addTokens(t: { prompt: number; completion: number }): void {
    this.tokens.prompt += t.prompt;
    this.tokens.completion += t.completion;
  }

  cost(): number | undefined {
    return costUsd(this.tokens, this.opts.price);
  }

  /** Before each next task: true (and the reason noted) once aborted or over the cost cap. */
  shouldStop(): boolean {
    if (this.ctl.signal.aborted) {
      this.stoppedEarly ??= `aborted: ${String(this.ctl.signal.reason)}`;
      return true;
    }
    const c = this.cost();
    if (this.opts.maxCostUsd !== undefined && c !== undefined && c >= this.opts.maxCostUsd) {
      this.stoppedEarly ??= `cost cap of $${this.opts.maxCostUsd} reached`;
      return true;
    }
    return false;
  }

  /** Clears the time cap and stops listening on the caller's signal. */
  dispose(): void {
    if (this.capTimer) clearTimeout(this.capTimer);
    this.opts.signal?.removeEventListener('abort', this.onAbort);
  }
}
