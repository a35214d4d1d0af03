// The pool's pidfile (`<dataDir>/chromium-pids/<ownerPid>-<token>.json`: the Chromium roots a server launched) and
// the clean-up at start after dead servers: their recorded trees and marked processes killed, their profiles
// (also those of launches cut short) and download staging folders removed.
import { mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

/**
 * A launch in progress. Playwright makes the profile folder in the server's TMPDIR before Chromium exists, and
 * the browser is recorded only once it runs: a server killed in between leaves a folder no process names.
 */
export interface LaunchRecord {
  /** Wall-clock ms when the launch began. */
  since: number;
  /** The server's TMPDIR, where Playwright makes the profile. */
  tmpdir: string;
}

export interface PidFileContent {
  owner: { pid: number; start: number };
  /** Marker in every Chromium command line this pool launches: `--grove-pool=<token>.<n>`. */
  token: string;
  browsers: BrowserRecord[];
  launching?: LaunchRecord[];
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

  /** Notes a launch about to begin (see LaunchRecord); `endLaunch` once its browser is recorded or it failed. */
  beginLaunch(): LaunchRecord {
    const r = { since: Date.now(), tmpdir: tmpdir() };
    (this.content.launching ??= []).push(r);
    this.write();
    return r;
  }

  endLaunch(r: LaunchRecord): void {
    this.content.launching = (this.content.launching ?? []).filter((l) => l !== r);
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
    for (const dir of launchLeftovers(content.launching ?? []).orphans) removeProfileDir(dir);
    try {
      unlinkSync(path);
    } catch {
      // another starting server got there first
    }
  }
  if (files > 0) log?.warn({ files, killed }, 'reaped Chromium processes left by a dead server');
  return { files, killed };
}

/**
 * A leftover profile must be at least this old: a younger one may belong to another launch (any Playwright using
 * the same TMPDIR) between its mkdtemp and its Chromium's exec, when no process names it yet.
 */
export const ORPHAN_MIN_AGE_MS = 2000;

/**
 * The profile folders launches cut short left: Playwright's `playwright_chromiumdev_profile-*` in the TMPDIR of
 * the launch, made since it began, named by no live process's `--user-data-dir`. `young` are those not yet
 * ORPHAN_MIN_AGE_MS old (left alone). The watchdog sidecar mirrors this (watchdog.ts).
 */
export function launchLeftovers(launches: LaunchRecord[], now = Date.now()): { orphans: string[]; young: string[] } {
  const orphans: string[] = [];
  const young: string[] = [];
  if (!launches.length) return { orphans, young };
  const used = new Set<string>();
  for (const p of listProcesses()) {
    const dir = readCmdline(p.pid).find((a) => a.startsWith('--user-data-dir='));
    if (dir) used.add(dir.slice('--user-data-dir='.length));
  }
  for (const l of launches) {
    let names: string[] = [];
    try {
      names = readdirSync(l.tmpdir);
    } catch {
      continue;
    }
    for (const name of names) {
      const dir = join(l.tmpdir, name);
      if (!name.startsWith(PROFILE_PREFIX) || used.has(dir) || orphans.includes(dir) || young.includes(dir)) continue;
      const born = bornAt(dir);
      // A second's slack: the file system's clock granularity.
      if (born === null || born < l.since - 1000) continue;
      (now - born < ORPHAN_MIN_AGE_MS ? young : orphans).push(dir);
    }
  }
  return { orphans, young };
}

/** When a folder was made (its birth time where the file system keeps one, else its last status change). */
function bornAt(path: string): number | null {
  try {
    const st = statSync(path);
    return st.birthtimeMs > 0 ? st.birthtimeMs : st.ctimeMs;
  } catch {
    return null;
  }
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
