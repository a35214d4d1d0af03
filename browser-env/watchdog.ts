// The detached watchdog sidecar of one pool: it notices the server's death (its stdin pipe closes, plus a 500 ms
// poll of the owner's identity) and kills the trees listed in the pool's pidfile and every process carrying the
// pool's marker flag, then removes the pool's artifacts folders (and their root, once empty).
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from '../sandbox/log.ts';
import { MARKER_FLAG, ORPHAN_MIN_AGE_MS, PROFILE_PREFIX, SINGLETON_PREFIX, type PidFile } from './pidfile.ts';
import { readProcStat } from './procfs.ts';

// The sidecar is plain JavaScript run by `node -e`, so it starts fast and needs no loader. It mirrors
// procfs.ts' processTree/killTree and pidfile.ts' killMarked and launchLeftovers (it cannot import them).
const SIDECAR_SOURCE = String.raw`
const fs = require('fs'), path = require('path');
const [ownerPid, ownerStart, file, token, artifacts] = process.argv.slice(1);
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
  // Profiles of launches cut short (made, but no browser recorded): wait until each is old enough not to be
  // another launch's that has not exec'd yet, then remove those no live process names.
  const launching = (content && content.launching) || [];
  for (let round = 0; launching.length && round < 2; round++) {
    const used = new Set(all().map((p) => (cmd(p.pid).find((x) => x.startsWith('--user-data-dir=')) || '').slice(16)).filter(Boolean));
    let wait = 0;
    for (const l of launching) { let names = []; try { names = fs.readdirSync(l.tmpdir); } catch {}
      for (const n of names) { const d = path.join(l.tmpdir, n); if (!n.startsWith('${PROFILE_PREFIX}') || used.has(d)) continue;
        let st; try { st = fs.statSync(d); } catch { continue; } const born = st.birthtimeMs > 0 ? st.birthtimeMs : st.ctimeMs;
        if (born < l.since - 1000) continue; const age = Date.now() - born;
        if (age >= ${ORPHAN_MIN_AGE_MS}) rmProfile(d); else wait = Math.max(wait, ${ORPHAN_MIN_AGE_MS} - age); } }
    if (!wait) break;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, wait + 50);
  }
  // The pool's artifacts folders (download staging, Chromium's TMPDIR): <artifacts>/<token>.<n>.
  try { for (const n of fs.readdirSync(artifacts)) if (n.split('.')[0] === token) fs.rmSync(path.join(artifacts, n), { recursive: true, force: true }); } catch {}
  // The folder itself when no pool uses it any more (rmdir fails on a folder that is not empty): in TMPDIR
  // (grove-a-*, for a deep dataDir) nothing else would ever remove it.
  try { fs.rmdirSync(artifacts); } catch {}
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

  /** `artifactsRoot` holds the pool's `<token>.<n>` folders, which the sidecar removes with the browsers. */
  static start(pidFile: PidFile, token: string, artifactsRoot: string, log?: Logger): Watchdog {
    const self = readProcStat(process.pid);
    const child = spawn(process.execPath, ['-e', SIDECAR_SOURCE, String(process.pid), String(self?.start ?? 0), pidFile.path, token, artifactsRoot], {
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
