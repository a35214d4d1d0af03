// Resolves the task of a task-backed sandbox: offline sites (their server starts in-process on first use),
// task files loaded at startup on demand (`taskFiles: "suite=path,..."`), or a task given inline.
import { randomBytes } from 'node:crypto';
import type { InlineTask, TaskSpec } from '../protocol/episode.ts';
import { GroveError } from '../protocol/errors.ts';
import { Suite, type Task } from '../protocol/task.ts';
import type { Logger } from '../sandbox/log.ts';
import { startSites, type SitesServer } from '../sites/server.ts';
import { SESSION_ID_RE } from '../sites/state.ts';
import { loadOfflineTasks, PLACEHOLDER_BASE, startUrlFor } from '../sites/tasks.ts';
import { loadTasks } from '../tasks/index.ts';
import type { z } from 'zod';

/** A resolved task and where its episode starts. */
export interface ResolvedTask {
  task: Task;
  startUrl?: string;
  /** Offline sites: the session whose state the rule judge reads. */
  sessionId?: string;
  /** host:port the sandbox must be allowed to reach (the in-process offline sites). */
  allowHost?: string;
  /** Base URL of the offline sites (rule judge). */
  sitesUrl?: string;
  /** The sites run beside the sandbox (a worker pod's loopback): the start URL keeps the placeholder host, which the
   * backend replaces, and the rule judge reads the session's state through the sandbox. */
  sitesBesideSandbox?: boolean;
}

export function parseTaskFiles(spec: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of (spec ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const at = entry.indexOf('=');
    out.set(entry.slice(0, at).trim(), entry.slice(at + 1).trim());
  }
  return out;
}

export class TaskCatalog {
  private sites?: Promise<SitesServer>;
  private offline?: Map<string, Task>;
  private readonly files: Map<string, string>;
  private readonly loaded = new Map<string, Promise<Map<string, Task>>>();

  constructor(private readonly opts: { taskFiles?: string; log: Logger; sitesBesideSandboxes?: boolean }) {
    this.files = parseTaskFiles(opts.taskFiles);
  }

  /** The suites a `{suite, id}` reference may name on this server. */
  suites(): string[] {
    return ['offline', ...this.files.keys()];
  }

  /** The tasks of a suite, in file order (offline: the sites' tasks); 404 task_not_found for an unknown suite. */
  async list(suite: string): Promise<Task[]> {
    if (suite === 'offline') return [...(await this.offlineTasks()).values()];
    const file = this.files.get(suite);
    if (!file) throw new GroveError('task_not_found', `No task suite "${suite}" on this server; known: ${this.suites().join(', ')} (task files are given with --task-files suite=path).`);
    try {
      return [...(await this.load(suite, file)).values()];
    } catch (err) {
      if (err instanceof GroveError) throw err;
      throw new GroveError('task_not_found', `The task file of suite ${suite} cannot be loaded: ${(err as Error).message}`);
    }
  }

  async resolve(spec: TaskSpec): Promise<ResolvedTask> {
    if (!('question' in spec)) return this.resolveRef(spec.suite, spec.id);
    const task = this.inline(spec as z.output<typeof InlineTask>);
    if (task.suite === 'offline' && task.start_url?.startsWith(PLACEHOLDER_BASE)) {
      if (this.opts.sitesBesideSandboxes) return this.offlineEpisode(task, null);
      const sites = await this.startSites();
      return this.offlineEpisode({ ...task, start_url: sites.url + task.start_url.slice(PLACEHOLDER_BASE.length) }, sites);
    }
    return { task, startUrl: task.start_url };
  }

  private inline(t: z.output<typeof InlineTask>): Task {
    return { ...t, site: t.site || '' };
  }

  private async resolveRef(suite: string, id: string): Promise<ResolvedTask> {
    if (suite === 'offline') {
      const offline = await this.offlineTasks();
      const task = offline.get(id);
      if (!task) throw new GroveError('task_not_found', `No offline task "${id.slice(0, 200)}" (e.g. ${[...offline.keys()].slice(0, 3).join(', ')}).`);
      return this.offlineEpisode(task, this.opts.sitesBesideSandboxes ? null : await this.startSites());
    }
    const file = this.files.get(suite);
    if (!file) {
      throw new GroveError('task_not_found', `No task suite "${suite}" on this server; known: ${this.suites().join(', ')} (task files are given with --task-files suite=path).`);
    }
    let tasks: Map<string, Task>;
    try {
      tasks = await this.load(suite, file);
    } catch (err) {
      if (err instanceof GroveError) throw err;
      throw new GroveError('task_not_found', `The task file of suite ${suite} cannot be loaded: ${(err as Error).message}`);
    }
    const task = tasks.get(id);
    if (!task) throw new GroveError('task_not_found', `No task "${id}" in suite ${suite} (${tasks.size} tasks loaded from ${file}).`);
    return { task, startUrl: task.start_url };
  }

  /** The offline tasks, their start URLs on this process's sites server, or on the placeholder host when the sites
   * run beside the sandboxes (this process then starts no sites server). */
  private async offlineTasks(): Promise<Map<string, Task>> {
    if (!this.offline) {
      const base = this.opts.sitesBesideSandboxes ? PLACEHOLDER_BASE : (await this.startSites()).url;
      this.offline ??= new Map(loadOfflineTasks(base).map((t) => [t.id, t]));
    }
    return this.offline;
  }

  private offlineEpisode(task: Task, sites: SitesServer | null): ResolvedTask {
    const sessionId = `gym-${randomBytes(9).toString('base64url')}`;
    const startUrl = startUrlFor(task, sessionId);
    if (!sites) return { task, startUrl, sessionId, sitesBesideSandbox: true };
    return { task, startUrl, sessionId, allowHost: new URL(sites.url).host, sitesUrl: sites.url };
  }

  private load(suite: string, file: string): Promise<Map<string, Task>> {
    let p = this.loaded.get(suite);
    if (!p) {
      const parsed = Suite.safeParse(suite);
      if (!parsed.success) return Promise.reject(new GroveError('task_not_found', `"${suite}" is not a task suite Grove can load (${Suite.options.join(', ')}).`));
      p = loadTasks(parsed.data, file).then((r) => {
        if (r.issues.length) this.opts.log.warn({ suite, file, unusable: r.issues.length }, 'task file has unusable rows');
        return new Map(r.tasks.map((t) => [t.id, t]));
      });
      // A file that cannot be read fails this request (and the next one tries again).
      p.catch(() => this.loaded.delete(suite));
      this.loaded.set(suite, p);
    }
    return p;
  }

  /** This process's sites server (started on first use, on loopback): a worker pod serves its sandboxes' offline
   * tasks on it (server/worker-sites.ts). */
  async localSites(): Promise<{ url: string }> {
    return { url: (await this.startSites()).url };
  }

  /** A session's state on this process's sites server; undefined when it never saw the session (or none runs). */
  async siteSession(id: string): Promise<unknown> {
    if (!SESSION_ID_RE.test(id)) throw new GroveError('invalid_request', `"${id.slice(0, 100)}" is not a sites session id (letters, digits, _ and -, at most 64).`);
    return this.sites ? (await this.sites).store.get(id) : undefined;
  }

  private startSites(): Promise<SitesServer> {
    this.sites ??= startSites({ log: this.opts.log });
    return this.sites;
  }

  async close(): Promise<void> {
    const s = this.sites;
    this.sites = undefined;
    if (s) await (await s).close();
  }
}
