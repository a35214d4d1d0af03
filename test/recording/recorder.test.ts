// EpisodeRecorder: layout on disk, per-step visual diff and no-op flags, torn lines, writer liveness.
import { appendFile, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { EpisodeRecorder, effectiveStatus, WRITER_FILE } from '../../recording/recorder.ts';
import { readEpisode, summarise } from '../../recording/reader.ts';
import type { StepRecord } from '../../protocol/recording.ts';
import type { Action } from '../../protocol/action.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'grove-rec-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A 400x250 page: white with a dark box at (x, 40); `text` changes a small area only. */
async function frame(x: number, text = ''): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="250"><rect width="400" height="250" fill="#fff"/>
<rect x="${x}" y="40" width="120" height="80" fill="#234"/><text x="10" y="230" font-size="14" font-family="sans-serif">${text}</text></svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 80 }).toBuffer();
}

function step(n: number, action: Action, extra: Partial<StepRecord> = {}): Omit<StepRecord, 'frame' | 'diff'> {
  return {
    step: n,
    ts: new Date().toISOString(),
    model_output: JSON.stringify(action),
    actions: [{ action, error: null, ms: 3 }],
    url: `http://x.test/${n}`,
    title: `t${n}`,
    tabs: [{ index: 0, url: `http://x.test/${n}`, title: `t${n}`, active: true }],
    events: [],
    last_action_error: null,
    timings: { action: 1, settle: 2, capture: 3, encode: 4, total: 10 },
    ...extra,
  };
}

describe('EpisodeRecorder', () => {
  it('writes episode.json, steps.jsonl and frames, and flags a click that changed nothing', async () => {
    const dir = join(root, 'ep1');
    const rec = await EpisodeRecorder.create(dir, { episode_id: 'ep1', run_id: 'r1', config: { max_steps: 5 } });
    expect(JSON.parse(await readFile(join(dir, 'episode.json'), 'utf8'))).toMatchObject({ status: 'running', steps: 0, episode_id: 'ep1' });
    expect(JSON.parse(await readFile(join(dir, WRITER_FILE), 'utf8')).pid).toBe(process.pid);

    await rec.recordInitial({ bytes: await frame(10), ext: 'jpeg' }, { url: 'http://x.test/0', title: 't0', tabs: [], screenshot: { mime: 'image/jpeg', width: 400, height: 250, scale: 1 } });
    const s1 = await rec.recordStep(step(1, { action: 'click', x: 5, y: 5 }), { bytes: await frame(200), ext: 'jpg' });
    const s2 = await rec.recordStep(step(2, { action: 'click', x: 6, y: 6 }), { bytes: await frame(200), ext: 'jpg' });
    const s3 = await rec.recordStep(step(3, { action: 'wait', ms: 10 }), { bytes: await frame(200), ext: 'jpg' });
    const s4 = await rec.recordStep(step(4, { action: 'type', text: 'a' }), { bytes: await frame(200, 'typed'), ext: 'png' });
    await rec.finish({ termination: { reason: 'task_completed' }, answer: '42', reward: 1, verdicts: [{ judge: 'rule', outcome: 'success' }] });

    expect(s1.frame).toBe('frames/0001.jpg');
    expect(s1.diff!.changed_share).toBeGreaterThan(0.05);
    expect(s1.diff!.noop).toBe(false);
    expect(s2.diff).toEqual({ changed_share: 0, noop: true }); // same frame after a click: a missed click
    expect(s3.diff!.noop).toBe(false); // a wait is allowed to change nothing
    expect(s4.frame).toBe('frames/0004.png');
    expect(s4.diff!.noop).toBe(false); // a few typed characters are a visible change
    expect(s4.diff!.changed_share).toBeGreaterThan(0);

    const v = await readEpisode(dir);
    expect(v.meta).toMatchObject({ status: 'complete', steps: 4, answer: '42', reward: 1, initial_frame: 'frames/0000.jpg', termination: { reason: 'task_completed' } });
    expect(v.steps.map((s) => [s.step, s.before_frame, s.frame])).toEqual([
      [1, 'frames/0000.jpg', 'frames/0001.jpg'],
      [2, 'frames/0001.jpg', 'frames/0002.jpg'],
      [3, 'frames/0002.jpg', 'frames/0003.jpg'],
      [4, 'frames/0003.jpg', 'frames/0004.png'],
    ]);
    expect(v.initial).toMatchObject({ frame: 'frames/0000.jpg', url: 'http://x.test/0' });
    for (const s of v.steps) expect((await stat(join(dir, s.frame!))).size).toBeGreaterThan(100);
    await expect(stat(join(dir, WRITER_FILE))).rejects.toThrow();
    expect(summarise(v)).toMatchObject({ noops: 1, errors: 0, success: true, verdict: 'success', steps: 4 });
    await expect(rec.recordStep(step(5, { action: 'wait' }))).rejects.toThrow(/finished/);
  });

  it('refuses to record into a directory that already holds an episode', async () => {
    const dir = join(root, 'dup');
    const rec = await EpisodeRecorder.create(dir, { episode_id: 'a' });
    await rec.finish({ termination: { reason: 'aborted' } });
    await expect(EpisodeRecorder.create(dir, { episode_id: 'b' })).rejects.toThrow(/already holds an episode/);
  });

  it('keeps every complete line when the last one is torn, and counts the damage', async () => {
    const dir = join(root, 'torn');
    const rec = await EpisodeRecorder.create(dir, { episode_id: 'torn' });
    await rec.recordStep(step(1, { action: 'back' }));
    await rec.recordStep(step(2, { action: 'forward' }));
    await appendFile(join(dir, 'steps.jsonl'), '{"step":3,"ts":"2026'); // a write cut by a crash
    const v = await readEpisode(dir);
    expect(v.steps.map((s) => s.step)).toEqual([1, 2]);
    expect(v.damaged_lines).toBe(1);
    expect(v.meta.status).toBe('running'); // this process is the live writer
    await rec.finish({ termination: { reason: 'aborted' } });
  });

  it('reports a running episode whose writer is gone as incomplete', async () => {
    const dir = join(root, 'dead');
    const rec = await EpisodeRecorder.create(dir, { episode_id: 'dead' });
    await rec.recordStep(step(1, { action: 'reload' }));
    const meta = { status: 'running' as const };
    expect(await effectiveStatus(dir, meta)).toBe('running');
    const w = JSON.parse(await readFile(join(dir, WRITER_FILE), 'utf8'));
    // A pid that cannot exist on Linux (above pid_max) on this host: the writer is dead.
    await writeFile(join(dir, WRITER_FILE), JSON.stringify({ ...w, pid: 2 ** 22 + 12345 }));
    expect(await effectiveStatus(dir, meta)).toBe('incomplete');
    expect((await readEpisode(dir)).meta.status).toBe('incomplete');
    // Another host: judged by how recently the episode was written.
    await writeFile(join(dir, WRITER_FILE), JSON.stringify({ ...w, hostname: 'elsewhere' }));
    expect(await effectiveStatus(dir, meta)).toBe('running');
    const old = new Date(Date.now() - 3600_000);
    for (const f of ['steps.jsonl', 'episode.json']) await utimes(join(dir, f), old, old);
    expect(await effectiveStatus(dir, meta)).toBe('incomplete');
    // And no writer marker at all (e.g. copied without it) means nobody is writing.
    await rm(join(dir, WRITER_FILE));
    expect(await effectiveStatus(dir, meta)).toBe('incomplete');
  });
});
