// The viewer's in-memory index of a directory of runs: one EpisodeSummary per episode, kept fresh by cheap
// re-scans (directory listing + stat of each episode's key files; only changed episodes are re-read), and an
// LRU of full episode views for the pages being looked at.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { silentLogger, type Logger } from '../sandbox/log.ts';
import { findEpisodes, judgeRecordDir, readEpisode, summarise, type EpisodeSummary, type EpisodeView, type FoundEpisode } from '../recording/reader.ts';

// A Grove episode's judge/ folder holds the records `grove judge` writes beside it (a record is renamed into place,
// so the folder's mtime moves with every verdict).
const KEY_FILES: Record<FoundEpisode['layout'], string[]> = {
  grove: ['episode.json', 'steps.jsonl', '.writer.json', 'judge'],
  webvoyager: ['interact_messages.json'],
  'online-mind2web': ['result.json'],
};

export interface ListQuery {
  offset?: number;
  limit?: number;
  suite?: string;
  site?: string;
  level?: string;
  /** 'true' | 'false' | 'unknown' */
  success?: string;
  termination?: string;
  verdict?: string;
  status?: string;
  run?: string;
  layout?: string;
  task?: string;
  /** Case-insensitive search in the task text, task id and episode id. */
  q?: string;
  sort?: 'id' | 'started' | 'steps' | 'reward' | 'noops' | 'errors';
  desc?: boolean;
}

export interface ListStats {
  success: number;
  failure: number;
  unknown: number;
  /** Sums over the matching episodes. */
  noops: number;
  errors: number;
}

export type Facets = Record<'suite' | 'site' | 'level' | 'termination' | 'verdict' | 'status' | 'run' | 'success' | 'layout', Record<string, number>>;

interface Entry {
  found: FoundEpisode;
  sig: string;
  summary: EpisodeSummary;
}

export class RunIndex {
  private entries = new Map<string, Entry>();
  private order: EpisodeSummary[] = [];
  private lastScan = 0;
  private scans = 0;
  private scanning: Promise<void> | undefined;
  private readonly views = new Map<string, { sig: string; view: EpisodeView }>();
  readonly errors = new Map<string, string>();

  constructor(
    readonly root: string,
    private readonly opts: {
      logger?: Logger;
      rescanMs?: number;
      maxDepth?: number;
      cacheViews?: number;
      /** `grove judge --out` folders whose records hold verdicts of these episodes (see ReadOptions.judgeDirs). */
      judgeDirs?: string[];
    } = {},
  ) {}

  private get log() {
    return this.opts.logger ?? silentLogger;
  }

  /**
   * Brings the index up to date. The first scan is awaited; later ones run in the background when the last one
   * is older than `rescanMs` (default 3 s), so a list request never waits for a directory walk (stale data is
   * at most one scan old). `force` awaits a fresh scan.
   */
  async refresh(force = false): Promise<void> {
    const stale = Date.now() - this.lastScan >= (this.opts.rescanMs ?? 3000);
    if (!force && !stale) return;
    this.scanning ??= this.scan()
      .catch((err: unknown) => this.log.error({ err, root: this.root }, 'viewer index scan failed'))
      .finally(() => {
        this.scanning = undefined;
      });
    if (force || this.lastScan === 0) await this.scanning;
  }

  /** Resolves when no scan is running (tests, benchmarks). */
  async settled(): Promise<void> {
    await this.scanning;
  }

  private async signature(f: FoundEpisode): Promise<string> {
    const paths = [...KEY_FILES[f.layout].map((n) => join(f.dir, n)), ...(this.opts.judgeDirs ?? []).map((d) => judgeRecordDir(d, f.id))];
    const parts = await Promise.all(paths.map((p) => stat(p).then((s) => `${s.size}:${s.mtimeMs}`, () => '-')));
    return parts.join('|');
  }

  private async scan(): Promise<void> {
    const t0 = Date.now();
    const found = await findEpisodes(this.root, this.opts.maxDepth ?? 4);
    const next = new Map<string, Entry>();
    let i = 0;
    let reread = 0;
    // Finished episodes rarely change (verdicts added later by `grove judge`), so their files are stat'ed on every
    // tenth scan only; new and running episodes every scan. Keeps a rescan of 1,000 episodes cheap.
    const full = this.scans++ % 10 === 0;
    const worker = async () => {
      while (i < found.length) {
        const f = found[i++];
        const old = this.entries.get(f.id);
        if (old && !full && old.summary.status !== 'running') {
          next.set(f.id, old);
          continue;
        }
        const sig = await this.signature(f);
        // A `running` episode's status depends on its writer being alive, so it is re-read every scan.
        if (old && old.sig === sig && old.summary.status !== 'running') {
          next.set(f.id, old);
          continue;
        }
        try {
          const view = await readEpisode(f.dir, f.id, { validate: false, judgeDirs: this.opts.judgeDirs });
          next.set(f.id, { found: f, sig, summary: summarise(view) });
          this.errors.delete(f.id);
          reread++;
        } catch (e) {
          this.errors.set(f.id, e instanceof Error ? e.message : String(e));
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    this.entries = next;
    this.order = [...next.values()].map((e) => e.summary).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.lastScan = Date.now();
    this.log.debug({ episodes: next.size, reread, ms: Date.now() - t0 }, 'viewer index scanned');
  }

  get size(): number {
    return this.order.length;
  }

  all(): EpisodeSummary[] {
    return this.order;
  }

  filter(q: ListQuery): EpisodeSummary[] {
    const needle = q.q?.trim().toLowerCase();
    const eq = (want: string | undefined, have: string | undefined) => !want || want === (have ?? '');
    let rows = this.order.filter(
      (s) =>
        eq(q.suite, s.suite) &&
        eq(q.site, s.site) &&
        eq(q.level, s.level) &&
        eq(q.termination, s.termination) &&
        eq(q.verdict, s.verdict) &&
        eq(q.status, s.status) &&
        eq(q.run, s.run_id) &&
        eq(q.layout, s.layout) &&
        eq(q.task, s.task_id) &&
        eq(q.success, successKey(s)) &&
        (!needle || `${s.question}\n${s.task_id}\n${s.episode_id}`.toLowerCase().includes(needle)),
    );
    if (q.sort && q.sort !== 'id') {
      const key: Record<string, (s: EpisodeSummary) => number | string> = {
        started: (s) => s.started_at ?? '',
        steps: (s) => s.steps,
        reward: (s) => s.reward ?? -1,
        noops: (s) => s.noops,
        errors: (s) => s.errors,
      };
      const k = key[q.sort];
      rows = [...rows].sort((a, b) => (k(a) < k(b) ? -1 : k(a) > k(b) ? 1 : 0));
    }
    if (q.desc) rows = q.sort && q.sort !== 'id' ? rows.reverse() : [...rows].reverse();
    return rows;
  }

  list(q: ListQuery): { total: number; offset: number; limit: number; items: EpisodeSummary[]; stats: ListStats } {
    const rows = this.filter(q);
    const limit = Math.min(Math.max(q.limit ?? 50, 1), 500);
    const offset = Math.max(q.offset ?? 0, 0);
    const stats: ListStats = { success: 0, failure: 0, unknown: 0, noops: 0, errors: 0 };
    for (const r of rows) {
      stats[r.success === true ? 'success' : r.success === false ? 'failure' : 'unknown']++;
      stats.noops += r.noops;
      stats.errors += r.errors;
    }
    return { total: rows.length, offset, limit, items: rows.slice(offset, offset + limit), stats };
  }

  /** Position of an episode in a filtered list, with its neighbours (j/k navigation). */
  neighbours(id: string, q: ListQuery): { index: number; total: number; prev?: string; next?: string } {
    const rows = this.filter(q);
    const index = rows.findIndex((s) => s.id === id);
    return { index, total: rows.length, prev: index > 0 ? rows[index - 1].id : undefined, next: index >= 0 ? rows[index + 1]?.id : undefined };
  }

  facets(): Facets {
    const f: Facets = { suite: {}, site: {}, level: {}, termination: {}, verdict: {}, status: {}, run: {}, success: {}, layout: {} };
    const add = (k: keyof Facets, v: string | undefined) => {
      if (v === undefined || v === '') return;
      f[k][v] = (f[k][v] ?? 0) + 1;
    };
    for (const s of this.order) {
      add('suite', s.suite);
      add('site', s.site);
      add('level', s.level);
      add('termination', s.termination);
      add('verdict', s.verdict);
      add('status', s.status);
      add('run', s.run_id);
      add('success', successKey(s));
      add('layout', s.layout);
    }
    return f;
  }

  summary(id: string): EpisodeSummary | undefined {
    return this.entries.get(id)?.summary;
  }

  dirOf(id: string): string | undefined {
    return this.entries.get(id)?.found.dir;
  }

  /** The full view of one episode (re-read when its files changed). */
  async view(id: string): Promise<EpisodeView | undefined> {
    const e = this.entries.get(id);
    if (!e) return undefined;
    const sig = await this.signature(e.found);
    const hit = this.views.get(id);
    if (hit && hit.sig === sig && hit.view.meta.status !== 'running') {
      this.views.delete(id);
      this.views.set(id, hit);
      return hit.view;
    }
    const view = await readEpisode(e.found.dir, id, { judgeDirs: this.opts.judgeDirs });
    this.views.set(id, { sig, view });
    if (sig !== e.sig) {
      const summary = summarise(view);
      this.entries.set(id, { ...e, sig, summary });
      this.order = this.order.map((s) => (s.id === id ? summary : s));
    }
    while (this.views.size > (this.opts.cacheViews ?? 64)) this.views.delete(this.views.keys().next().value as string);
    return view;
  }
}

function successKey(s: EpisodeSummary): string {
  return s.success === null ? 'unknown' : String(s.success);
}
