// The pool's pidfile (`<dataDir>/chromium-pids/<ownerPid>-<token>.json`: the Chromium roots a server launched) and
// the clean-up at start after dead servers: their recorded trees and marked processes killed, their profiles and
// download staging folders removed.
import { mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Logger } from '../sandbox/log.ts';
import { isAlive, killTree, listProcesses, readCmdline, readProcStat } from './procfs.ts';

/** One Chromium root process as recorded in a pidfile. */
export interface BrowserRecord {
  pid: number;
  start: number;
  /** Playwright's temporary profile, removed after a kill (Playwright cannot clean it up after SIGKILL). */
  userDataDir?: string;
}

export interface PidFileContent {
  owner: { pid: number; start: number };
  /** Marker in every Chromium command line this pool launches: `--grove-pool=<token>.<n>`. */
  token: string;
  browsers: BrowserRecord[];
}

export const MARKER_FLAG = '--grove-pool';
export const PROFILE_PREFIX = 'playwright_chromiumdev_profile-';
export const SINGLETON_PREFIX = 'org.chromium.Chromium.';

/**
 * Removes a Playwright temporary profile directory (and nothing else), with the folder of Chromium's singleton
 * socket (`$TMPDIR/org.chromium.Chromium.*`, which the profile's SingletonSocket link points into): a killed
 * browser leaves both behind.
 */
export function removeProfileDir(dir: string | undefined): void {
  if (!dir || !basename(dir).startsWith(PROFILE_PREFIX)) return;
  try {
    const socketDir = dirname(readlinkSync(join(dir, 'SingletonSocket')));
    if (basename(socketDir).startsWith(SINGLETON_PREFIX)) rmSync(socketDir, { recursive: true, force: true });
  } catch {
    // no link (Chromium never got that far, or exited cleanly and removed it)
  }
  rmSync(dir, { recursive: true, force: true });
}

/** The pidfile of one pool: `<dataDir>/chromium-pids/<ownerPid>-<token>.json`, rewritten atomically. */
export class PidFile {
  readonly path: string;
  private readonly content: PidFileContent;

  constructor(dir: string, token: string) {
    mkdirSync(dir, { recursive: true });
    const self = readProcStat(process.pid);
    this.content = { owner: { pid: process.pid, start: self?.start ?? 0 }, token, browsers: [] };
    this.path = join(dir, `${process.pid}-${token}.json`);
    this.write();
  }

  add(b: BrowserRecord): void {
    this.content.browsers.push(b);
    this.write();
  }

  remove(pid: number): void {
    this.content.browsers = this.content.browsers.filter((b) => b.pid !== pid);
    this.write();
  }

  delete(): void {
    rmSync(this.path, { force: true });
  }

  private write(): void {
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.content));
    renameSync(tmp, this.path);
  }
}

/** Kills every process carrying `--grove-pool=<token>.*` (browsers launched but not yet recorded). */
function killMarked(token: string): number[] {
  const prefix = `${MARKER_FLAG}=${token}.`;
  const killed: number[] = [];
  for (const p of listProcesses()) {
    if (p.pid === process.pid || p.state === 'Z') continue;
    const args = readCmdline(p.pid);
    if (!args.some((a) => a.startsWith(prefix))) continue;
    const dir = args.find((a) => a.startsWith('--user-data-dir='))?.slice('--user-data-dir='.length);
    killed.push(...killTree(p));
    removeProfileDir(dir);
  }
  return killed;
}

/**
 * Cleans up after dead servers: for each pidfile in `dir` whose owner is gone (or whose pid was recycled),
 * kills the recorded trees and marked processes, removes their profiles and the pidfile.
 */
export function reapStale(dir: string, log?: Logger): { files: number; killed: number[] } {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { files: 0, killed: [] };
  }
  const killed: number[] = [];
  let files = 0;
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const path = join(dir, name);
    let content: PidFileContent;
    try {
      content = JSON.parse(readFileSync(path, 'utf8')) as PidFileContent;
    } catch {
      continue; // being written by a live owner, or garbage; a dead owner's file is retried next start
    }
    if (isAlive(content.owner.pid, content.owner.start)) continue;
    files++;
    for (const b of content.browsers ?? []) {
      killed.push(...killTree(b));
      removeProfileDir(b.userDataDir);
    }
    if (content.token) killed.push(...killMarked(content.token));
    try {
      unlinkSync(path);
    } catch {
      // another starting server got there first
    }
  }
  if (files > 0) log?.warn({ files, killed }, 'reaped Chromium processes left by a dead server');
  return { files, killed };
}

/** Tokens of the pools whose pidfile owner is alive (call after reapStale: the others are gone). */
export function liveTokens(dir: string): Set<string> {
  const tokens = new Set<string>();
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return tokens;
  }
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    try {
      const c = JSON.parse(readFileSync(join(dir, name), 'utf8')) as PidFileContent;
      if (isAlive(c.owner.pid, c.owner.start)) tokens.add(c.token);
    } catch {
      // being written: its owner is alive; its folder is named by a token we would skip anyway
    }
  }
  return tokens;
}

/**
 * Removes the per-browser artifact folders (`<root>/<token>.<n>`: Playwright's staging of downloads) of pools
 * that are not alive: a SIGKILLed server cannot remove its own. Returns the folders removed.
 */
export function removeStaleArtifacts(root: string, live: Set<string>): string[] {
  let names: string[] = [];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const token = name.split('.')[0];
    if (live.has(token)) continue;
    rmSync(join(root, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
