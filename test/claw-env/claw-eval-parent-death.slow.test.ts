// A process running Claw-Eval services dies by SIGKILL (no handler runs): its services' sandbox dies with it
// (bwrap --die-with-parent, own PID namespace) and its temp folders (the driver's, the trial's socket folder) are
// removed by its watchdog (claw-env/claw-eval/tmp.ts). Also: the services run without root and capabilities.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it, onTestFinished } from 'vitest';

const ROOT = path.resolve(__dirname, 'fixtures/claw-eval-checkout');
const CACHE = path.resolve(__dirname, '../../node_modules/.cache/grove-claw-eval-death');
const INDEX = existsSync('/opt/pypi/simple') ? 'file:///opt/pypi/simple' : '';
const BWRAP = existsSync('/usr/bin/bwrap') && process.getuid?.() === 0;

const procsWith = (s: string) => readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((d) => {
  try {
    return readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(s);
  } catch {
    return false;
  }
});
const until = async (ok: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  return ok();
};

describe.runIf(BWRAP)('Claw-Eval services when their parent dies', () => {
  it('SIGKILL of the parent: no service process, no temp folder left; the services ran as nobody without capabilities', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'support/claw-eval-child.ts'), ROOT, CACHE, INDEX], { stdio: ['ignore', 'pipe', 'pipe'] });
    // whatever fails below, the child does not outlive the test
    const stop = () => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
    onTestFinished(stop);
    let stderr = '';
    child.stderr!.on('data', (c) => (stderr += c));
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`child exited ${code}: ${stderr.slice(-2000)}`)));
    });
    const { driver, driverDir } = JSON.parse(line) as { driver: string; driverDir: string };
    const mine = () => readdirSync(os.tmpdir()).filter((d) => d.startsWith(`grove-claw-eval-${child.pid}-`));
    expect(mine().length).toBe(2); // the driver's folder and the trial's socket folder
    const services = procsWith(driver);
    expect(services.length).toBeGreaterThan(0);
    // the supervisor inside the sandbox: its own user namespace (uid 65534 there), no capabilities
    const own = readlinkSync('/proc/self/ns/user');
    const inner = services.filter((p) => readlinkSync(`/proc/${p}/ns/user`) !== own);
    expect(inner.length).toBeGreaterThan(0);
    for (const p of inner) expect(readFileSync(`/proc/${p}/status`, 'utf8')).toMatch(/^CapEff:\s+0+$/m);
    child.kill('SIGKILL');
    expect(await until(() => procsWith(driver).length === 0, 10_000)).toBe(true);
    expect(await until(() => mine().length === 0 && !existsSync(driverDir), 10_000)).toBe(true);
    // the watchdog itself is gone too
    expect(procsWith('grove-claw-eval-watchdog').filter((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(String(child.pid)))).toEqual([]);
  }, 600_000);
});
