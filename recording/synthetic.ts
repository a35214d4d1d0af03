// Synthetic recorded episodes: deterministic fake pages rendered with sharp, recorded through EpisodeRecorder.
// For tests, the viewer benchmark and demos; no browser needed. Actions sit at known coordinates so overlay
// and diff behaviour can be asserted.
import sharp from 'sharp';
import { join } from 'node:path';
import type { Action } from '../protocol/action.ts';
import { escapeHtml as esc } from '../protocol/html.ts';
import type { Suite, Termination, Verdict } from '../protocol/task.ts';
import { EpisodeRecorder } from './recorder.ts';

const SYNTH_VIEWPORT = { width: 1280, height: 800 };
/** Frames are half the viewport: image_px = css_px * 0.5, so overlays must scale. */
export const SYNTH_SCALE = 0.5;


/** A fake page: header, a title, a search box with `typed` text, and a result panel after `page` changes. */
async function renderFrame(o: { title: string; page: number; typed?: string; scrolled?: number }): Promise<Buffer> {
  const w = SYNTH_VIEWPORT.width * SYNTH_SCALE;
  const h = SYNTH_VIEWPORT.height * SYNTH_SCALE;
  const hue = (o.page * 67) % 360;
  const y0 = 120 - (o.scrolled ?? 0);
  const rows = Array.from({ length: 6 }, (_, i) =>
    `<rect x="40" y="${y0 + 70 + i * 34}" width="${400 - i * 30}" height="14" rx="3" fill="hsl(${hue},25%,80%)"/>`,
  ).join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">
<rect width="100%" height="100%" fill="#fafafa"/>
<rect width="100%" height="44" fill="hsl(${hue},45%,35%)"/>
<text x="16" y="29" font-family="sans-serif" font-size="18" fill="#fff">${esc(o.title)} — page ${o.page}</text>
<rect x="40" y="70" width="300" height="30" rx="4" fill="#fff" stroke="#888"/>
<text x="50" y="91" font-family="sans-serif" font-size="15" fill="#222">${esc(o.typed ?? '')}</text>
<rect x="350" y="70" width="80" height="30" rx="4" fill="hsl(${hue},60%,45%)"/>
${rows}
</svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 70 }).toBuffer();
}

export interface SyntheticEpisodeOptions {
  episodeId: string;
  runId?: string;
  taskId?: string;
  suite?: Suite;
  site?: string;
  level?: string;
  question?: string;
  /** Steps before the final answer (>= 1). */
  steps?: number;
  termination?: Termination;
  reward?: number;
  verdicts?: Verdict[];
  /** Leave the episode unfinished (as a killed run would). */
  unfinished?: boolean;
  durable?: boolean;
  diff?: boolean;
  /** Reuse rendered frames across episodes (bench: thousands of episodes). */
  frameCache?: Map<string, Buffer>;
}

/** The click every synthetic episode starts with, in CSS px; its image_px point is (CLICK.x*0.5, CLICK.y*0.5). */
export const SYNTH_CLICK = { x: 770, y: 170 };

/**
 * Writes one episode: step 1 clicks the search button (page changes), step 2 types, step 3 clicks the same spot
 * again with nothing changing (a no-op), then scrolls / clicks alternate, and the last step answers.
 */
export async function writeSyntheticEpisode(dir: string, o: SyntheticEpisodeOptions): Promise<string> {
  const n = Math.max(1, o.steps ?? 5);
  const title = o.site ?? 'shop';
  const cache = o.frameCache ?? new Map<string, Buffer>();
  const frame = async (page: number, typed = '', scrolled = 0) => {
    const key = `${title}|${page}|${typed}|${scrolled}`;
    let b = cache.get(key);
    if (!b) cache.set(key, (b = await renderFrame({ title, page, typed, scrolled })));
    return b;
  };
  const rec = await EpisodeRecorder.create(
    dir,
    {
      episode_id: o.episodeId,
      run_id: o.runId,
      task: {
        id: o.taskId ?? o.episodeId,
        suite: o.suite ?? 'offline',
        site: title,
        question: o.question ?? `Find the cheapest item on ${title}`,
        start_url: `http://127.0.0.1/${title}/`,
        level: o.level,
        extra: { reference_length: n },
        flags: [],
      },
      config: { policy: 'synthetic', max_steps: n + 1 },
    },
    { durable: o.durable, diff: o.diff },
  );
  const shot = { mime: 'image/jpeg', width: 640, height: 400, scale: SYNTH_SCALE };
  const url = (p: number) => `http://127.0.0.1/${title}/p${p}`;
  const tabs = (p: number) => [{ index: 0, url: url(p), title: `${title} ${p}`, active: true }];
  await rec.recordInitial({ bytes: await frame(0), ext: 'jpg' }, { url: url(0), title: `${title} 0`, tabs: tabs(0), screenshot: shot });
  let page = 0;
  let typed = '';
  let scrolled = 0;
  for (let s = 1; s <= n + 1; s++) {
    let action: Action;
    let css: { x: number; y: number } | undefined;
    let error: { code: string; message: string } | null = null;
    if (s === n + 1) action = { action: 'answer', text: `answer for ${o.episodeId}` };
    else if (s === 1 || (s > 3 && s % 2 === 0)) {
      action = { action: 'click', x: SYNTH_CLICK.x, y: SYNTH_CLICK.y + (s > 1 ? 10 * (s % 5) : 0), space: 'css_px' };
      css = { x: action.x, y: action.y };
      page++;
    } else if (s === 2) {
      action = { action: 'type', text: 'hello', x: 380, y: 170, space: 'css_px' };
      css = { x: 380, y: 170 };
      typed = 'hello';
    } else if (s === 3) {
      // Same point, nothing changes on screen: the recorder must flag it as a no-op.
      action = { action: 'click', x: 1100, y: 700, space: 'css_px' };
      css = { x: 1100, y: 700 };
    } else {
      action = { action: 'scroll', direction: 'down', amount: 1, x: 640, y: 400, space: 'css_px' };
      css = { x: 640, y: 400 };
      scrolled += 20;
      if (s % 7 === 0) error = { code: 'scroll_failed', message: 'the page did not scroll' };
    }
    const t = 40 + ((s * 37) % 200);
    await rec.recordStep(
      {
        step: s,
        ts: new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString(),
        model_output: JSON.stringify({ action }),
        format: 'canonical',
        thought: `step ${s}: doing ${action.action}`,
        actions: [{ action, ...(css ? { space: 'css_px' as const, raw: css, css } : {}), error, ms: t / 2 }],
        url: url(page),
        title: `${title} ${page}`,
        tabs: tabs(page),
        events: s === 1 ? [{ type: 'navigation', url: url(page) }] : [],
        last_action_error: error,
        timings: { action: t / 2, settle: t / 4, capture: 20, encode: 5, total: t },
        screenshot: shot,
        policy: { latency_ms: 300 + s, prompt_tokens: 1000, completion_tokens: 20 },
      },
      { bytes: await frame(page, typed, scrolled), ext: 'jpg' },
    );
  }
  if (!o.unfinished) {
    await rec.finish({
      termination: o.termination ?? { reason: 'task_completed' },
      answer: `answer for ${o.episodeId}`,
      reward: o.reward,
      verdicts: o.verdicts,
    });
  }
  return dir;
}

const SITES = ['shop', 'mail', 'news', 'travel', 'docs'];
const LEVELS = ['easy', 'medium', 'hard'];
const REASONS: Termination['reason'][] = ['task_completed', 'max_steps_exhausted', 'consecutive_parse_failures', 'timeout'];

/** A run of `count` varied episodes under root/<run_id>/<episode_id>. */
export async function writeSyntheticRun(
  root: string,
  o: { count: number; steps?: number; runId?: string; durable?: boolean; diff?: boolean; concurrency?: number },
): Promise<string[]> {
  const runId = o.runId ?? 'run-synthetic';
  const cache = new Map<string, Buffer>();
  const dirs: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < o.count) {
      const i = next++;
      const ok = i % 3 !== 0;
      const dir = join(root, runId, `ep-${String(i).padStart(5, '0')}`);
      await writeSyntheticEpisode(dir, {
        episodeId: `ep-${i}`,
        runId,
        taskId: `${SITES[i % SITES.length]}--${i % 40}`,
        site: SITES[i % SITES.length],
        suite: i % 2 ? 'offline' : 'webvoyager',
        level: LEVELS[i % LEVELS.length],
        question: `Task ${i}: find the ${['cheapest', 'newest', 'largest', 'nearest'][i % 4]} ${['laptop', 'flight', 'article', 'hotel'][i % 4]} on ${SITES[i % SITES.length]}`,
        steps: o.steps ?? 5,
        termination: { reason: ok ? 'task_completed' : REASONS[i % REASONS.length] },
        reward: ok ? 1 : 0,
        verdicts: [{ judge: 'rule', outcome: ok ? 'success' : i % 9 === 0 ? 'judge_error' : 'failure', reasoning: ok ? 'state matches' : 'cart is empty' }],
        durable: o.durable,
        diff: o.diff,
        frameCache: cache,
      });
      dirs.push(dir);
    }
  };
  await Promise.all(Array.from({ length: o.concurrency ?? 8 }, worker));
  return dirs;
}
