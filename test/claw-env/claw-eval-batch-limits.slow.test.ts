// `grove claw run --claw-eval` (the batch path, no server) holds the checkout's mock services to the limits a
// server's episodes get (cli/commands/claw-eval-limits.ts: a shell environment from the same settings, confined by
// server/claw-eval.ts clawEvalConfine): the real CLI runs the fixture checkout's attackers' services with a policy
// on a simulated model server (OpenAI wire format), which looks at the services' cgroups while they run.
// Attacks: a service eating memory is OOM-killed inside its memory cgroup; a fork bomb meets pids.max; a service
// writing without end meets ENOSPC on its own disk (its socket folder and its /tmp), which lies under the data
// folder, not in the host's /tmp; after the run, and after a SIGKILL of the process running the services, no
// process, cgroup, mount or folder is left.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { runClawCommand } from '../../cli/commands/claw.ts';
import { startOpenAIServer, type ChatRequestRecord, type ScriptedReply } from '../support/openai-server.ts';

const ROOT = path.resolve(__dirname, 'fixtures/claw-eval-checkout');
const INDEX = existsSync('/opt/pypi/simple') ? 'file:///opt/pypi/simple' : undefined;
const ROOTED = existsSync('/usr/bin/bwrap') && process.getuid?.() === 0;
const CGROUPS = existsSync('/sys/fs/cgroup/freezer/cgroup.procs');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-claw-eval-limits-test-'));
const CACHE = path.join(tmp, 'cache');
const DATA = path.join(tmp, 'd');
const MEMORY_MB = 512;
const MAX_PROCS = 64;
const DISK_MB = 64;
const SETTINGS: Record<string, string> = { GROVE_DATA_DIR: DATA, GROVE_SHELL_MEMORY_MB: String(MEMORY_MB), GROVE_SHELL_MAX_PROCESSES: String(MAX_PROCS), GROVE_SHELL_DISK_MB: String(DISK_MB) };
const saved: Record<string, string | undefined> = {};

/** Shell instances seen under the data folder (they go when the run ends; their cgroups must go with them). */
const instances = new Set<string>();
/** The services' folders under the data folder (<dataDir>/shell/<instance>/p-claw-eval-*). */
const serviceDirs = () => {
  const shell = path.join(DATA, 'shell');
  if (!existsSync(shell)) return [];
  const now = readdirSync(shell).filter((i) => /^i[0-9a-f]{12}$/.test(i));
  for (const i of now) instances.add(i);
  return now.flatMap((i) => readdirSync(path.join(shell, i)).filter((d) => d.startsWith('p-claw-eval-')).map((d) => path.join(shell, i, d)));
};
/** The services' cgroups of one controller (shell-env's grove/<instance>/p-claw-eval-*) of this test's instances
 * only (other Grove processes on the host have theirs). */
const serviceGroups = (controller: string) => {
  serviceDirs();
  const base = `/sys/fs/cgroup/${controller}/grove`;
  return [...instances].flatMap((i) => (existsSync(path.join(base, i)) ? readdirSync(path.join(base, i)).filter((d) => d.startsWith('p-claw-eval-')).map((d) => path.join(base, i, d)) : []));
};
const mountsUnderData = () => readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => l.split(' ')[4]?.startsWith(DATA));
const runFolders = (pid: number) => readdirSync(os.tmpdir()).filter((d) => d.startsWith(`grove-claw-eval-${pid}-run-`));
const procsWith = (s: string) => readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((d) => {
  try {
    return readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(s);
  } catch {
    return false;
  }
});
const toolResults = (req: ChatRequestRecord) => (req.body.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content));
const call = (name: string, args: Record<string, unknown> = {}): ScriptedReply => ({ tool_calls: [{ name, arguments: JSON.stringify(args) }] });
const num = (file: string) => Number(readFileSync(file, 'utf8').trim());

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s) }, out, err };
}

/** `grove claw run --claw-eval` on one task with a policy whose turns are `reply`; the trial's trace events. */
async function runBatch(id: string, reply: (req: ChatRequestRecord) => ScriptedReply | Promise<ScriptedReply>): Promise<{ code: number; err: string; trace: any[] }> {
  const policy = await startOpenAIServer(reply);
  const c = io();
  const out = path.join(tmp, `out-${id}`);
  try {
    const code = await runClawCommand(['run', '--claw-eval', ROOT, '--cache', CACHE, ...(INDEX ? ['--index-url', INDEX] : []), '--policy', policy.url, '--model', 'm', '--ids', id, '--trials', '1', '--out', out], c.io);
    const file = path.join(out, 'traces', `${id}.t0.jsonl`);
    const trace = existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l)) : [];
    return { code, err: c.err.join(''), trace };
  } finally {
    await policy.close();
  }
}
const dispatches = (trace: any[]) => trace.filter((e) => e.type === 'tool_dispatch');
const nothingLeft = () => {
  expect(serviceGroups('memory')).toEqual([]);
  expect(serviceGroups('pids')).toEqual([]);
  expect(serviceGroups('freezer')).toEqual([]);
  expect(serviceDirs()).toEqual([]);
  expect(mountsUnderData()).toEqual([]);
  expect(runFolders(process.pid)).toEqual([]);
};

describe.runIf(ROOTED)('grove claw run --claw-eval: the services under the shell sandboxes\' limits', () => {
  beforeAll(() => {
    for (const [k, v] of Object.entries(SETTINGS)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
  });
  afterAll(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(tmp, { recursive: true, force: true });
  });

  it.runIf(CGROUPS)('attacker: a service eating memory is OOM-killed inside its memory cgroup; the run and the host go on', async () => {
    const seen: { limit?: number; hits?: number; maxUsage?: number } = {};
    const r = await runBatch('N12_memory_hog', (req) => {
      const results = toolResults(req);
      if (results.length === 0) return call('hog_eat', { mb: 16 });
      const [g] = serviceGroups('memory');
      if (results.length === 1) {
        seen.limit = num(path.join(g!, 'memory.limit_in_bytes'));
        return call('hog_eat', { mb: 2 * MEMORY_MB });
      }
      if (g) {
        const oom = readFileSync(path.join(g, 'memory.oom_control'), 'utf8');
        seen.hits = Number(/oom_kill (\d+)/.exec(oom)?.[1] ?? 0) + num(path.join(g, 'memory.failcnt')) + num(path.join(g, 'memory.memsw.failcnt'));
        seen.maxUsage = num(path.join(g, 'memory.max_usage_in_bytes'));
      }
      return 'Done.';
    });
    expect(r.code, r.err).toBe(0);
    expect(r.err).not.toMatch(/without memory, process, CPU and disk limits/);
    expect(seen.limit).toBe(MEMORY_MB * 1024 * 1024);
    expect(seen.hits).toBeGreaterThan(0);
    expect(seen.maxUsage).toBeLessThanOrEqual(MEMORY_MB * 1024 * 1024);
    const [small, big] = dispatches(r.trace);
    expect(small).toMatchObject({ response_status: 200, response_body: { ate_mb: expect.any(Number) } });
    expect(big.response_status).toBe(500);
    expect(execFileSync('/bin/echo', ['host ok'], { encoding: 'utf8' })).toBe('host ok\n');
    nothingLeft();
  }, 600_000);

  it.runIf(CGROUPS)('attacker: a fork-bombing service meets pids.max; nothing of it outlives the trial', async () => {
    const seen: { max?: string; current?: number } = {};
    const bombs = () => procsWith('mock_services/bomb');
    const r = await runBatch('N13_fork_bomb', async (req) => {
      const last = toolResults(req).pop() as { done?: boolean } | undefined;
      if (last?.done) {
        const [g] = serviceGroups('pids');
        seen.max = readFileSync(path.join(g!, 'pids.max'), 'utf8').trim();
        seen.current = num(path.join(g!, 'pids.current'));
        return 'Done.';
      }
      if (last) await new Promise((res) => setTimeout(res, 1000));
      return call('bomb_status');
    });
    expect(r.code, r.err).toBe(0);
    expect(seen.max).toBe(String(MAX_PROCS));
    expect(seen.current).toBeLessThanOrEqual(MAX_PROCS);
    const st = dispatches(r.trace).pop().response_body;
    expect(st.done).toBe(true);
    expect(st.refused).toBeGreaterThan(0);
    expect(st.forked).toBeLessThan(MAX_PROCS);
    for (let i = 0; i < 50 && bombs().length; i++) await new Promise((res) => setTimeout(res, 100));
    expect(bombs()).toEqual([]);
    nothingLeft();
  }, 600_000);

  it('attacker: a service writing without end meets ENOSPC on its own disk (socket folder and /tmp), under the data folder', async () => {
    const seen: { dirs?: string[]; hostRun?: string[] } = {};
    const r = await runBatch('N14_disk_fill', (req) => {
      const n = toolResults(req).length;
      if (n === 0) {
        seen.dirs = serviceDirs();
        seen.hostRun = runFolders(process.pid);
        return call('fill_write', { mb: 4 * DISK_MB, where: 'run' });
      }
      if (n === 1) return call('fill_write', { mb: 4 * DISK_MB, where: 'tmp' });
      return 'Done.';
    });
    expect(r.code, r.err).toBe(0);
    // the trial's writable state is on a disk of its own under the data folder, not a host folder in /tmp
    expect(seen.dirs).toHaveLength(1);
    expect(seen.hostRun).toEqual([]);
    const [run, tmpWrite] = dispatches(r.trace);
    for (const d of [run, tmpWrite]) {
      expect(d.response_status).toBe(200);
      expect(d.response_body.error).toMatch(/No space left on device/);
    }
    expect(run.response_body.folder.startsWith(DATA)).toBe(true);
    expect(tmpWrite.response_body.folder).toBe('/tmp');
    expect(run.response_body.written_mb + tmpWrite.response_body.written_mb).toBeLessThanOrEqual(DISK_MB);
    nothingLeft();
  }, 600_000);

  it('SIGKILL of the process running confined services: no service, cgroup, mount or folder is left', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'support/claw-eval-confined-child.ts'), ROOT, CACHE, INDEX ?? '', DATA], { stdio: ['ignore', 'pipe', 'pipe'] });
    onTestFinished(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
    let stderr = '';
    child.stderr!.on('data', (c) => (stderr += c));
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`child exited ${code}: ${stderr.slice(-2000)}`)));
    });
    const { driver } = JSON.parse(line) as { driver: string };
    expect(procsWith(driver).length).toBeGreaterThan(0);
    expect(serviceDirs()).toHaveLength(1);
    expect(mountsUnderData().length).toBeGreaterThan(0);
    if (CGROUPS) expect(serviceGroups('pids')).toHaveLength(1);
    expect(runFolders(child.pid!)).toEqual([]);
    child.kill('SIGKILL');
    const until = async (ok: () => boolean, ms: number) => {
      const end = Date.now() + ms;
      while (!ok() && Date.now() < end) await new Promise((res) => setTimeout(res, 200));
      return ok();
    };
    // the shell environment's watchdog reaps the dead instance: processes, cgroups, the disk's mount, its folder
    expect(await until(() => procsWith(driver).length === 0, 15_000)).toBe(true);
    expect(await until(() => serviceDirs().length === 0 && mountsUnderData().length === 0 && serviceGroups('pids').length === 0 && serviceGroups('freezer').length === 0, 30_000)).toBe(true);
    expect(readdirSync(os.tmpdir()).filter((d) => d.startsWith(`grove-claw-eval-${child.pid}-`))).toEqual([]);
  }, 600_000);
});
