// Keeps Chromium from outliving the server. Chromium's root process leads its own session (Playwright
// spawns it detached), so neither a dead parent nor a signal to our process group reaches it. Three layers:
//   1. graceful: the pool closes every browser;
//   2. a detached watchdog sidecar per pool notices the parent's death (its stdin pipe closes, plus a
//      500 ms `kill(ppid, 0)` poll) and kills the process trees listed in the pool's pidfile, and any
//      process carrying the pool's marker flag (covers a browser that was launching when the parent died);
//   3. at start, pidfiles left by dead owners are read and their trees killed.
// A PID is killed only after checking its start time in /proc/<pid>/stat, so a recycled PID is never hit.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Logger } from '../sandbox/log.ts';

export interface ProcStat {
  pid: number;
  ppid: number;
  pgrp: number;
  sid: number;
  /** Start time in clock ticks since boot (field 22 of /proc/<pid>/stat): with the pid, a unique identity. */
  start: number;
  state: string;
}

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
const PROFILE_PREFIX = 'playwright_chromiumdev_profile-';
const SINGLETON_PREFIX = 'org.chromium.Chromium.';

export function readProcStat(pid: number): ProcStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm may contain spaces and parentheses: fields start after the last ')'.
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { pid, state: f[0], ppid: Number(f[1]), pgrp: Number(f[2]), sid: Number(f[3]), start: Number(f[19]) };
  } catch {
    return null;
  }
}

export function listProcesses(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = readProcStat(Number(name));
    if (s) out.push(s);
  }
  return out;
}

export function readCmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
  } catch {
    return [];
  }
}

/** Whether a process with this pid and start time is alive (zombies count as dead). */
export function isAlive(pid: number, start: number): boolean {
  const s = readProcStat(pid);
  return !!s && s.start === start && s.state !== 'Z';
}

/** Finds the live process whose command line carries exactly this argument (our children first: cheap). */
export function findProcessByArg(arg: string): ProcStat | null {
  const all = listProcesses().filter((p) => p.state !== 'Z');
  const children = all.filter((p) => p.ppid === process.pid);
  for (const p of [...children, ...all]) {
    if (readCmdline(p.pid).includes(arg)) return p;
  }
  return null;
}

/**
 * Every live process that belongs to the tree of `root`: its session, its process group and its
 * descendants. When the root is gone its session id cannot have been reused (the kernel keeps a pid
 * reserved while it names a live session or group), so the session members are still its own.
 */
export function processTree(root: { pid: number; start: number }, all: ProcStat[] = listProcesses()): ProcStat[] {
  const leader = all.find((p) => p.pid === root.pid);
  if (leader && leader.start !== root.start) return []; // recycled pid: someone else's process
  const members = new Map<number, ProcStat>();
  for (const p of all) if (p.sid === root.pid || p.pgrp === root.pid) members.set(p.pid, p);
  if (leader) {
    members.set(leader.pid, leader);
    const queue = [leader.pid];
    while (queue.length > 0) {
      const parent = queue.pop()!;
      for (const p of all) {
        if (p.ppid === parent && !members.has(p.pid)) {
          members.set(p.pid, p);
          queue.push(p.pid);
        }
      }
    }
  }
  return [...members.values()].filter((p) => p.state !== 'Z');
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // ESRCH: already gone; EPERM: not ours. Either way nothing to do.
  }
}

/** SIGKILLs the whole tree of a recorded Chromium root (after the identity check). Returns the pids hit. */
export function killTree(root: { pid: number; start: number }): number[] {
  const tree = processTree(root);
  if (tree.length === 0) return [];
  signal(-root.pid, 'SIGKILL');
  for (const p of tree) signal(p.pid, 'SIGKILL');
  return tree.map((p) => p.pid);
}

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

export function userDataDirOf(pid: number): string | undefined {
  const arg = readCmdline(pid).find((a) => a.startsWith('--user-data-dir='));
  return arg?.slice('--user-data-dir='.length);
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

// The sidecar is plain JavaScript run by `node -e`, so it starts fast and needs no loader. It mirrors
// processTree/killTree/killMarked above (it cannot import them).
const SIDECAR_SOURCE = String.raw`
const fs = require('fs'), path = require('path');
const [ownerPid, ownerStart, file, token] = process.argv.slice(1);
const stat = (pid) => { try { const t = fs.readFileSync('/proc/' + pid + '/stat', 'utf8'); const f = t.slice(t.lastIndexOf(')') + 2).split(' ');
  return { pid, state: f[0], ppid: +f[1], pgrp: +f[2], sid: +f[3], start: +f[19] }; } catch { return null; } };
const all = () => fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map((n) => stat(+n)).filter(Boolean);
const cmd = (pid) => { try { return fs.readFileSync('/proc/' + pid + '/cmdline', 'utf8').split('\0'); } catch { return []; } };
const kill = (pid) => { try { process.kill(pid, 'SIGKILL'); } catch {} };
const rmProfile = (d) => { if (!d || !path.basename(d).startsWith('${PROFILE_PREFIX}')) return;
  try { const sd = path.dirname(fs.readlinkSync(path.join(d, 'SingletonSocket'))); if (path.basename(sd).startsWith('${SINGLETON_PREFIX}')) fs.rmSync(sd, { recursive: true, force: true }); } catch {}
  fs.rmSync(d, { recursive: true, force: true }); };
function killTree(root, procs) {
  const leader = procs.find((p) => p.pid === root.pid);
  if (leader && leader.start !== root.start) return;
  const hit = new Set(procs.filter((p) => p.sid === root.pid || p.pgrp === root.pid).map((p) => p.pid));
  if (leader) { const q = [leader.pid]; hit.add(leader.pid);
    while (q.length) { const pp = q.pop(); for (const p of procs) if (p.ppid === pp && !hit.has(p.pid)) { hit.add(p.pid); q.push(p.pid); } } }
  kill(-root.pid); for (const pid of hit) kill(pid);
}
let done = false;
function reap() {
  if (done) return; done = true;
  const procs = all();
  let content = null; try { content = JSON.parse(fs.readFileSync(file, 'utf8')); } catch {}
  for (const b of (content && content.browsers) || []) { killTree(b, procs); rmProfile(b.userDataDir); }
  const prefix = '${MARKER_FLAG}=' + token + '.';
  for (const p of procs) { if (p.pid === process.pid) continue; const a = cmd(p.pid);
    if (a.some((x) => x.startsWith(prefix))) { const d = (a.find((x) => x.startsWith('--user-data-dir=')) || '').slice(16); killTree(p, procs); rmProfile(d); } }
  try { fs.unlinkSync(file); } catch {}
  process.exit(0);
}
const parentGone = () => { const s = stat(+ownerPid); return !s || s.state === 'Z' || s.start !== +ownerStart; };
process.stdin.on('end', reap); process.stdin.on('error', reap); process.stdin.on('data', () => {}); process.stdin.resume();
setInterval(() => { if (parentGone()) reap(); }, 500);
`;

/** The watchdog sidecar of one pool. `stop()` is the graceful path: the sidecar reaps what is left and exits. */
export class Watchdog {
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  private constructor(child: ChildProcess) {
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  static start(pidFile: PidFile, token: string, log?: Logger): Watchdog {
    const self = readProcStat(process.pid);
    const child = spawn(process.execPath, ['-e', SIDECAR_SOURCE, String(process.pid), String(self?.start ?? 0), pidFile.path, token], {
      detached: true, // its own session: a signal to our process group must not take it down with us
      stdio: ['pipe', 'ignore', 'ignore'],
      env: {},
    });
    child.on('error', (err) => log?.error({ err }, 'chromium watchdog failed to start'));
    // Neither the child nor its pipe may keep the server's event loop alive.
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    return new Watchdog(child);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Closes the pipe (the sidecar reaps leftovers, removes the pidfile, exits) and waits up to `ms`. */
  async stop(ms = 3000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.stdin?.end();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), ms);
    });
    const r = await Promise.race([this.exited.then(() => 'exited' as const), timeout]);
    clearTimeout(timer);
    if (r === 'timeout') this.child.kill('SIGKILL');
  }
}
