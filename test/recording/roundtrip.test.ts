// Export → read round trips: each result layout is written in its harness's convention and read back the same way,
// so the viewer shows step n on the screen its action was taken on, the next screen as "after", and the click
// marker where the click landed.
// - Online-Mind2Web v2: an entry's screenshot is the screen its action was taken on (reader and exporter agree).
// - Coordinates: both layouts write page pixels (the position the action resolved to), whatever space the policy
//   used (rel1000 here), and the reader takes them back as page pixels (the overlay's css position).
import { readFile, rm, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportOnlineMind2Web, exportWebVoyager } from '../../recording/export/index.ts';
import { loadFrame } from '../../recording/export/common.ts';
import { readEpisode, type EpisodeView } from '../../recording/reader.ts';
import { writeSyntheticEpisode } from '../../recording/synthetic.ts';

let root: string;
let original: EpisodeView;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'grove-roundtrip-'));
  const ep = join(root, 'eps', 'a');
  await writeSyntheticEpisode(ep, { episodeId: 'a', taskId: 'b7258ee05d75e6c50673a59914db412e', suite: 'online-mind2web', question: 'Find the store hours', steps: 4 });
  // The policy spoke rel1000 (as Qwen3-VL does): the recorded action keeps its own space, `css` where it landed.
  const lines = (await readFile(join(ep, 'steps.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
  for (const l of lines) {
    for (const ra of l.actions) {
      if (ra.action.action === 'click' && ra.css) Object.assign(ra.action, { x: Math.round((ra.css.x / 1280) * 1000), y: Math.round((ra.css.y / 720) * 1000), space: 'rel1000' });
    }
  }
  await writeFile(join(ep, 'steps.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  original = await readEpisode(ep);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const clicks = (v: EpisodeView) => v.steps.map((s) => s.actions.filter((a) => a.action.action === 'click').map((a) => a.css));

describe('Online-Mind2Web v2 round trip', () => {
  it('the frame shown for step n is the screen its action was taken on; "after" is the next one', async () => {
    const { dir } = await exportOnlineMind2Web(original, join(root, 'om2w'));
    const back = await readEpisode(dir);
    expect(back.layout).toBe('online-mind2web');
    // Every original step comes back (the final answer step as TASK_COMPLETE).
    expect(back.steps).toHaveLength(original.steps.length);
    for (const [n, s] of original.steps.entries()) {
      const b = back.steps[n];
      expect(await loadFrame(back, b.before_frame!, 'png'), `step ${n + 1} before`).toEqual(await loadFrame(original, s.before_frame!, 'png'));
      if (n < original.steps.length - 1) {
        expect(await loadFrame(back, b.frame!, 'png'), `step ${n + 1} after`).toEqual(await loadFrame(original, s.frame!, 'png'));
      }
    }
    expect(back.initial.frame).toBe(back.steps[0].before_frame);
    // Clicks come back in page pixels, where they landed: the overlay's position.
    expect(clicks(back)).toEqual(clicks(original));
    expect(clicks(original).flat().length).toBeGreaterThan(0);
  });
});

describe('WebVoyager round trip', () => {
  it('coordinate actions are written and read back in page pixels', async () => {
    const { dir, messages } = await exportWebVoyager(original, join(root, 'wv'));
    const css = original.steps.flatMap((s) => s.actions.filter((a) => a.action.action === 'click').map((a) => a.css!));
    for (const c of css) expect(messages.some((m) => m.content.includes(`CLICK (${c.x}, ${c.y})`))).toBe(true);
    const back = await readEpisode(dir);
    expect(clicks(back)).toEqual(clicks(original).map((c) => c.map((p) => ({ x: p!.x, y: p!.y }))));
    expect(back.steps.flatMap((s) => s.actions.filter((a) => a.action.action === 'click').map((a) => a.action))).toEqual(
      css.map((c) => ({ action: 'click', x: c.x, y: c.y, space: 'css_px' })),
    );
  });
});
