// One episode recorded by two servers on one directory (kubernetes replicas on a shared recordings volume,
// recording/shared-steps.ts): the creator (create, shared) and a joiner (join) append steps in turn or at once.
// Numbers are claimed on storage (each once, whatever number each server's hook gave) and diffs follow the step
// before; whichever server finishes first ends the episode (shared-end.ts), with steps.jsonl made whole.
import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Action } from '../../protocol/action.ts';
import type { StepRecord } from '../../protocol/recording.ts';
import { EpisodeRecorder, WRITER_FILE } from '../../recording/recorder.ts';
import { readEpisode } from '../../recording/reader.ts';
import { lastStepOnDisk } from '../../recording/shared-steps.ts';
import { RecordingHook } from '../../recording/step-hook.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'grove-shared-rec-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const frame = (x: number) =>
  sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"><rect width="200" height="100" fill="#fff"/><rect x="${x}" y="20" width="60" height="40" fill="#234"/></svg>`)).jpeg().toBuffer();

function step(n: number, action: Action): Omit<StepRecord, 'frame' | 'diff'> {
  return {
    step: n, ts: new Date().toISOString(), actions: [{ action, error: null, ms: 1 }], url: 'http://x.test/', title: 't',
    tabs: [{ index: 0, url: 'http://x.test/', title: 't', active: true }], events: [], last_action_error: null,
    timings: { action: 1, settle: 1, capture: 1, encode: 1, total: 4 },
  };
}

describe('one episode, two writers', () => {
  it('steps in turn are numbered in order, each diffed against the frame before it, whoever wrote that one', async () => {
    const dir = join(root, 'ep');
    const a = await EpisodeRecorder.create(dir, { episode_id: 'ep' }, { shared: true });
    await a.recordInitial({ bytes: await frame(0), ext: 'jpg' }, { url: 'http://x.test/', title: 't', tabs: [] });
    const b = await EpisodeRecorder.join(dir);
    // Each writer's own count says 1, 1, 2, 2: storage says 1, 2, 3, 4.
    const s1 = await a.recordStep(step(1, { action: 'click', x: 1, y: 1 }), { bytes: await frame(0), ext: 'jpg' });
    const s2 = await b.recordStep(step(1, { action: 'click', x: 1, y: 1 }), { bytes: await frame(100), ext: 'jpg' });
    const s3 = await a.recordStep(step(2, { action: 'click', x: 1, y: 1 }), { bytes: await frame(100), ext: 'jpg' });
    const s4 = await b.recordStep(step(2, { action: 'answer', text: 'ok' }), { bytes: await frame(100), ext: 'jpg' });
    expect([s1, s2, s3, s4].map((s) => [s.step, s.frame])).toEqual([[1, 'frames/0001.jpg'], [2, 'frames/0002.jpg'], [3, 'frames/0003.jpg'], [4, 'frames/0004.jpg']]);
    // Same frame as the one before (frame 0, written by A; step 2's, written by B): a click that changed nothing.
    expect(s1.diff).toMatchObject({ changed_share: 0, noop: true });
    expect(s2.diff!.changed_share).toBeGreaterThan(0);
    expect(s3.diff).toMatchObject({ changed_share: 0, noop: true });
    expect((await lastStepOnDisk(join(dir, 'steps.jsonl')))?.step).toBe(4);
    // Whoever finishes first ends it (here the joiner: its creator may be dead); a later finish only closes files.
    await stat(join(dir, WRITER_FILE));
    await b.finish({ termination: { reason: 'task_completed' }, answer: 'ok' });
    expect(JSON.parse(await readFile(join(dir, 'episode.json'), 'utf8'))).toMatchObject({ status: 'complete', steps: 4, answer: 'ok', initial_frame: 'frames/0000.jpg' });
    await expect(stat(join(dir, WRITER_FILE))).rejects.toThrow(/ENOENT/);
    await a.finish({ termination: { reason: 'aborted' } });
    const v = await readEpisode(dir);
    expect(v.meta).toMatchObject({ status: 'complete', steps: 4, termination: { reason: 'task_completed' } });
    expect(v.steps.map((s) => s.step)).toEqual([1, 2, 3, 4]);
  });

  it('steps taken at the same instant through two servers: every number once, steps.jsonl whole and in order at the end', async () => {
    const dir = join(root, 'race');
    const a = await EpisodeRecorder.create(dir, { episode_id: 'race' }, { shared: true });
    const b = await EpisodeRecorder.join(dir);
    const c = await EpisodeRecorder.join(dir);
    const shot = { bytes: await frame(0), ext: 'jpg' };
    // Every writer's own number is 1: all of them read the same last step on storage and race for the next.
    const written = await Promise.all(Array.from({ length: 30 }, (_, i) => [a, b, c][i % 3]!.recordStep(step(1, { action: 'wait', ms: 1 }), shot)));
    expect(written.map((s) => s.step).sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(new Set(written.map((s) => s.frame)).size).toBe(30);
    // Two NFS clients appending at once may clobber a line: the claim files put it back at the end.
    const lines = (await readFile(join(dir, 'steps.jsonl'), 'utf8')).split('\n');
    lines[4] = '{"step":5,"ts":"clobbered';
    await writeFile(join(dir, 'steps.jsonl'), lines.join('\n'));
    await Promise.all([b.finish({ termination: { reason: 'aborted' } }), c.finish({ termination: { reason: 'aborted' } }), a.finish({ termination: { reason: 'aborted' } })]);
    const v = await readEpisode(dir);
    expect(v.steps.map((s) => s.step)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect([v.damaged_lines, v.meta.steps, v.meta.status]).toEqual([0, 30, 'complete']);
    await expect(stat(join(dir, '.steps'))).rejects.toThrow(/ENOENT/);
    // Ended: a late step is refused, not numbered.
    const late = await EpisodeRecorder.join(dir);
    await expect(late.recordStep(step(1, { action: 'wait', ms: 1 }))).rejects.toThrow(/ended/);
    await late.finish({ termination: { reason: 'aborted' } });
    expect((await readEpisode(dir)).meta.termination?.reason).toBe('aborted');
  });

  it('the creator\'s hook ends the episode as the last step on storage says, though another server took it', async () => {
    const dir = join(root, 'hooked');
    const hookA = new RecordingHook(() => EpisodeRecorder.create(dir, { episode_id: 'hooked' }, { shared: true }));
    await hookA.begin({ url: 'http://x.test/', title: 't', tabs: [] });
    const b = await EpisodeRecorder.join(dir);
    const obs = { step: 1, url: 'http://x.test/', title: 't', tabs: [], viewport: { width: 200, height: 100 }, last_action_error: null, events: [], timings: { action: 0, settle: 0, capture: 0, encode: 0, total: 0 } };
    await hookA.onStep({ sandboxId: 'hooked', actions: [{ action: { action: 'wait', ms: 1 }, error: null, ms: 1 }], observation: obs });
    await b.recordStep(step(9, { action: 'answer', text: 'done there' }));
    await hookA.onEnd();
    expect((await readEpisode(dir)).meta).toMatchObject({ steps: 2, answer: 'done there', termination: { reason: 'task_completed' } });
  });

  it('a torn last line (a writer killed mid-line) is skipped: the next step follows the last whole one', async () => {
    const dir = join(root, 'torn');
    const a = await EpisodeRecorder.create(dir, { episode_id: 'torn' }, { shared: true });
    await a.recordStep(step(1, { action: 'wait', ms: 1 }));
    await appendFile(join(dir, 'steps.jsonl'), '{"step":2,"ts":"x","actio');
    expect((await lastStepOnDisk(join(dir, 'steps.jsonl')))?.step).toBe(1);
    expect(await lastStepOnDisk(join(root, 'none', 'steps.jsonl'))).toBeNull();
    await a.finish({ termination: { reason: 'aborted' } });
  });
});
