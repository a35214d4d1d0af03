// One recording kept by several orchestrator processes (`grove serve --backend kubernetes`, real processes, one
// recordings directory as the shared volume; stub workers of the simulated API server in this process):
// - two clients stepping one recorded sandbox through two replicas at the same instant: every step number once
//   (claimed on storage, recording/shared-steps.ts), every frame, steps.jsonl whole and in order at the end;
// - the replica that created a recorded sandbox SIGKILLed: its episode reads `incomplete`; the replica that serves
//   the sandbox later carries it on (`running`, its writer marker) and ends it when it is deleted there (terminal
//   state, its files closed, no writer marker);
// - the creator SIGKILLed and nobody serving the sandbox again: the leader that expires it ends its episode.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { podRecords } from '../../k8s/records.ts';
import { KubeSim } from '../../k8s/sim/api-server.ts';
import { StubKubelet } from '../../k8s/sim/kubelets.ts';
import { readEpisode } from '../../recording/reader.ts';
import { until } from './harness.ts';
import { spawnOrchestrator, writeSimConfig, type OrchestratorProcess } from './orchestrator-process.ts';

const KEY = 'k8s-replicas-rec-key-0123456789';
const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-k8s-replicas-rec-'));
const recordings = path.join(dir, 'recordings');
const kubelet = new StubKubelet();
const sim = new KubeSim(kubelet);
kubelet.sim = sim;
const started: ChildProcess[] = [];
let b: OrchestratorProcess;

const replica = (name: string) =>
  spawnOrchestrator({ dir, k8sConfig: path.join(dir, 'k8s.json'), replica: name, apiKey: KEY, tokenSecret: 'replicas-rec-token-secret-0123456789', args: ['--recordings-dir', recordings] }, started);

beforeAll(async () => {
  await sim.start();
  writeSimConfig(sim, dir, {
    workerPort: 17000 + Math.floor(Math.random() * 1000),
    leaseDurationSeconds: 4,
    reconcileIntervalSeconds: 1,
    readyTimeoutSeconds: 60,
    templates: { browser: { type: 'browser', placement: 'pod', warmPool: 0 } },
  });
  // B first: it takes the leader Lease and keeps it while the creators come and go.
  b = await replica('orch-b');
}, 120_000);

afterAll(async () => {
  await Promise.all(
    started.map((p) => (p.exitCode === null && p.signalCode === null ? new Promise((r) => (p.once('exit', r), p.kill('SIGKILL'))) : null)),
  );
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Kills a replica with SIGKILL and waits for it to be gone. */
async function kill(o: OrchestratorProcess): Promise<void> {
  const gone = new Promise((r) => o.proc.once('exit', r));
  o.proc.kill('SIGKILL');
  await gone;
}

const ended = (id: string) =>
  until(async () => {
    const v = await readEpisode(path.join(recordings, id)).catch(() => null);
    return v?.meta.status === 'complete' ? v : null;
  }, `the episode of ${id} ended`, 60_000);

/** Files of the episode a process still holds open. */
function openIn(pid: number, episode: string): string[] {
  const fds = readdirSync(`/proc/${pid}/fd`);
  return fds.map((fd) => { try { return readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { return ''; } }).filter((f) => f.startsWith(episode));
}

const recorded = async (o: OrchestratorProcess, more: Record<string, unknown> = {}) =>
  (await o.client.createAndWait({ type: 'browser', record: true, ...more } as never, 60)).sandbox_id;
const wait = { action: { action: 'wait' as const, ms: 1 } };

describe('one recording, several orchestrator processes', { timeout: 240_000 }, () => {
  test('two clients stepping one sandbox through two replicas at the same instant: every step number once', async () => {
    const a = await replica('orch-a1');
    const id = await recorded(a);
    const N = 12;
    const answers = await Promise.all(Array.from({ length: 2 * N }, (_, i) => (i % 2 ? b : a).client.step(id, wait)));
    expect(answers).toHaveLength(2 * N);
    // Before the end, the lines may be out of order, never a number twice.
    const lines = readFileSync(path.join(recordings, id, 'steps.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).step as number);
    expect(new Set(lines).size).toBe(2 * N);
    await a.client.deleteSandbox(id);
    const v = await ended(id);
    const all = Array.from({ length: 2 * N }, (_, i) => i + 1);
    expect(v.steps.map((s) => s.step)).toEqual(all);
    for (const s of v.steps) expect(existsSync(path.join(recordings, id, s.frame!))).toBe(true);
    expect(v.meta).toMatchObject({ steps: 2 * N, termination: { reason: 'aborted' } });
    // Made whole at the end: steps.jsonl in order, the claims gone, no writer marker.
    const settled = readFileSync(path.join(recordings, id, 'steps.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).step as number);
    expect(settled).toEqual(all);
    expect(existsSync(path.join(recordings, id, '.steps'))).toBe(false);
    expect(existsSync(path.join(recordings, id, '.writer.json'))).toBe(false);
    await kill(a);
  });

  test('the creating replica killed: incomplete; the replica serving it later ends it when it is deleted there', async () => {
    const a = await replica('orch-a2');
    const id = await recorded(a);
    await a.client.step(id, wait);
    await kill(a);
    const episode = path.join(recordings, id);
    expect((await readEpisode(episode)).meta.status).toBe('incomplete');
    // B serves it on: its steps join the episode, and its writer marker names B now.
    await b.client.step(id, wait);
    expect((await readEpisode(episode)).meta.status).toBe('running');
    expect(JSON.parse(readFileSync(path.join(episode, '.writer.json'), 'utf8')).pid).toBe(b.proc.pid);
    const last = await b.client.step(id, { action: { action: 'answer', text: 'done on B' } });
    expect(last.done).toBe(true);
    expect(openIn(b.proc.pid!, episode).length).toBeGreaterThan(0);
    await b.client.deleteSandbox(id);
    const v = await ended(id);
    expect(v.steps.map((s) => s.step)).toEqual([1, 2, 3]);
    expect(v.meta).toMatchObject({ status: 'complete', steps: 3, answer: 'done on B', termination: { reason: 'task_completed' } });
    expect(existsSync(path.join(episode, '.writer.json'))).toBe(false);
    await until(() => openIn(b.proc.pid!, episode).length === 0, 'B to close the episode files');
  });

  test('the creating replica killed, nobody serving it again: the leader that expires it ends its episode', async () => {
    const a = await replica('orch-a3');
    const id = await recorded(a, { idle_timeout_seconds: 3 });
    await a.client.step(id, wait);
    await kill(a);
    const v = await ended(id);
    expect(v.steps.map((s) => s.step)).toEqual([1]);
    expect(v.meta).toMatchObject({ status: 'complete', steps: 1, termination: { reason: 'aborted' } });
    expect(existsSync(path.join(recordings, id, '.writer.json'))).toBe(false);
    expect(openIn(b.proc.pid!, path.join(recordings, id))).toEqual([]);
    // Expired by its record: its worker pod is deleted (nothing else ran there).
    await until(() => !sim.listPodObjects().some((p) => podRecords(p as never).has(id)), 'the expired sandbox\'s pod to be deleted');
  });
});
