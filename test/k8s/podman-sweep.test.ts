// A test run that died (SIGKILL, a timeout) leaves its pods' host folders (their emptyDirs) behind: the next podman
// kubelet removes those of kubelets whose process is gone, and never a live one's.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';
import { sweepStaleContainers } from '../../k8s/sim/podman-kubelet.ts';

test("a dead kubelet's pod folders are swept, a live one's kept", () => {
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  const deadPid = Number(dead.stdout);
  expect(deadPid).toBeGreaterThan(0);
  const left = mkdtempSync(path.join(os.tmpdir(), `grove-pod-${deadPid}-grove-shell-0123456789-`));
  const mine = mkdtempSync(path.join(os.tmpdir(), `grove-pod-${process.pid}-grove-shell-0123456789-`));
  try {
    sweepStaleContainers();
    expect(existsSync(left)).toBe(false);
    expect(existsSync(mine)).toBe(true);
  } finally {
    rmSync(left, { recursive: true, force: true });
    rmSync(mine, { recursive: true, force: true });
  }
});
