// Progress of a benchmark run: pure maths (rates, ETA) plus a renderer that writes to an injected
// stream — a redrawn bar on a TTY, one plain line per finished episode otherwise (CI logs).

export interface ProgressCounts {
  total: number;
  /** Episodes finished in this run (success or not). */
  done: number;
  /** Of `done`, those that did not succeed (judged failure, env error, …), aborted ones apart. */
  failed: number;
  /** Of `done`, those interrupted by the operator (Ctrl-C, a cap): not failures. */
  aborted?: number;
  running: number;
  /** Episodes skipped because a finished recording already existed (resume). */
  skipped: number;
  /** Environment steps taken in this run. */
  steps: number;
}

export interface ProgressStats extends ProgressCounts {
  elapsedMs: number;
  remaining: number;
  /** Finished episodes per minute in this run (skipped ones excluded). */
  episodesPerMin: number;
  stepsPerSec: number;
  /** null until one episode has finished (no rate to extrapolate from). */
  etaMs: number | null;
}

export function progressStats(c: ProgressCounts, elapsedMs: number): ProgressStats {
  const remaining = Math.max(0, c.total - c.done - c.skipped);
  const secs = elapsedMs / 1000;
  const episodesPerMin = secs > 0 ? (c.done / secs) * 60 : 0;
  const stepsPerSec = secs > 0 ? c.steps / secs : 0;
  // Observed throughput already includes the concurrency, so remaining/throughput is the estimate.
  const etaMs = remaining === 0 ? 0 : c.done > 0 ? (remaining * elapsedMs) / c.done : null;
  return { ...c, elapsedMs, remaining, episodesPerMin, stepsPerSec, etaMs };
}

export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '--:--';
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const mm = String(m).padStart(2, '0');
  const ss = String(sec).padStart(2, '0');
  return h > 0 ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

/** One status line; `barWidth` 0 omits the bar (plain mode). */
export function renderProgress(s: ProgressStats, barWidth = 24): string {
  const finished = s.done + s.skipped;
  const frac = s.total > 0 ? finished / s.total : 1;
  const filled = Math.round(frac * barWidth);
  const bar = barWidth > 0 ? `[${'#'.repeat(filled)}${'.'.repeat(barWidth - filled)}] ` : '';
  const skipped = s.skipped > 0 ? ` skipped ${s.skipped}` : '';
  const aborted = s.aborted ? ` aborted ${s.aborted}` : '';
  return (
    `${bar}${finished}/${s.total} done (failed ${s.failed}, running ${s.running}${aborted}${skipped}) ` +
    `${s.stepsPerSec.toFixed(2)} steps/s, ${s.episodesPerMin.toFixed(1)} ep/min, ` +
    `elapsed ${formatDuration(s.elapsedMs)}, ETA ${formatDuration(s.etaMs)}`
  );
}

export interface ProgressStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
}

/** Stateful reporter used by the benchmark runner. */
export class ProgressReporter {
  private counts: ProgressCounts;
  private readonly started: number;
  private timer: NodeJS.Timeout | undefined;
  private lastDrawn = 0;

  constructor(
    private readonly stream: ProgressStream | undefined,
    total: number,
    private readonly now: () => number = Date.now,
  ) {
    this.counts = { total, done: 0, failed: 0, running: 0, skipped: 0, steps: 0 };
    this.started = now();
    if (stream?.isTTY) {
      // Redraw periodically so elapsed/ETA move between events; unref so it never holds the process.
      this.timer = setInterval(() => this.draw(), 500);
      this.timer.unref();
    }
  }

  get snapshot(): ProgressStats {
    return progressStats(this.counts, this.now() - this.started);
  }

  skipped(n = 1): void {
    this.counts.skipped += n;
    this.draw();
  }
  episodeStarted(): void {
    this.counts.running++;
    this.draw();
  }
  step(): void {
    this.counts.steps++;
    // Throttle TTY redraws on steps.
    if (this.stream?.isTTY && this.now() - this.lastDrawn > 200) this.draw();
  }
  episodeFinished(ok: boolean | 'aborted', label?: string): void {
    this.counts.running = Math.max(0, this.counts.running - 1);
    this.counts.done++;
    if (ok === 'aborted') this.counts.aborted = (this.counts.aborted ?? 0) + 1;
    else if (!ok) this.counts.failed++;
    if (this.stream && !this.stream.isTTY) {
      this.stream.write(`${label ? `${label}: ` : ''}${renderProgress(this.snapshot, 0)}\n`);
    } else this.draw();
  }

  private draw(): void {
    if (!this.stream?.isTTY) return;
    this.lastDrawn = this.now();
    this.stream.write(`\r\x1b[2K${renderProgress(this.snapshot)}`);
  }

  /** Final line; stops the redraw timer. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.stream?.isTTY) this.stream.write(`\r\x1b[2K${renderProgress(this.snapshot)}\n`);
  }
}
