// An animated WebP or GIF of an episode for sharing: each frame is the screen a step was decided on, with the
// step's action drawn on it (click ring, drag path, scroll arrow, typed text) and a caption; the end state last.
import sharp from 'sharp';
import type { EpisodeView, StepView } from '../reader.ts';
import { describeAction } from '../action-text.ts';
import { ExportError, loadFrame } from './common.ts';
import { escapeHtml } from '../../protocol/html.ts';

export interface AnimationOptions {
  format?: 'webp' | 'gif';
  /** Output width in px (frames are scaled to it; default 640). */
  width?: number;
  /** Time per frame in ms (default 900). */
  delayMs?: number;
  /** Draw the actions and captions (default true). */
  overlay?: boolean;
}


/** SVG overlay (in image px of a frame `w`×`h` whose CSS→image factor is `scale`) for one step's actions. */
function actionOverlaySvg(s: StepView, w: number, h: number, scale: number, caption: string): string {
  const parts: string[] = [];
  for (const ra of s.actions) {
    const a = ra.action;
    const c = ra.css ? { x: ra.css.x * scale, y: ra.css.y * scale } : undefined;
    if (c && a.action === 'drag' && ra.to_css) {
      parts.push(`<line x1="${c.x}" y1="${c.y}" x2="${ra.to_css.x * scale}" y2="${ra.to_css.y * scale}" stroke="#ff2d55" stroke-width="4"/>`);
    }
    if (c && a.action === 'scroll') {
      const up = a.direction === 'up' || (a.dy ?? 0) < 0;
      const d = up ? -40 : 40;
      parts.push(`<line x1="${c.x}" y1="${c.y}" x2="${c.x}" y2="${c.y + d}" stroke="#ff2d55" stroke-width="5"/>`);
      parts.push(`<polygon points="${c.x - 10},${c.y + d - Math.sign(d) * 2} ${c.x + 10},${c.y + d - Math.sign(d) * 2} ${c.x},${c.y + d + Math.sign(d) * 14}" fill="#ff2d55"/>`);
    } else if (c) {
      parts.push(`<circle cx="${c.x}" cy="${c.y}" r="14" fill="none" stroke="#ff2d55" stroke-width="4"/><circle cx="${c.x}" cy="${c.y}" r="3" fill="#ff2d55"/>`);
    }
    if ((a.action === 'type' || a.action === 'type_label') && c) {
      parts.push(`<text x="${c.x + 18}" y="${c.y - 16}" font-family="sans-serif" font-size="18" fill="#ff2d55" stroke="#fff" stroke-width="0.6">${escapeHtml(a.text.slice(0, 60))}</text>`);
    }
  }
  const bar = Math.max(28, Math.round(h * 0.06));
  parts.push(`<rect x="0" y="${h - bar}" width="${w}" height="${bar}" fill="rgba(0,0,0,0.7)"/>`);
  parts.push(`<text x="10" y="${h - bar / 2 + 6}" font-family="sans-serif" font-size="${Math.round(bar * 0.55)}" fill="#fff">${escapeHtml(caption.slice(0, 120))}</text>`);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${parts.join('')}</svg>`;
}

export async function exportAnimation(view: EpisodeView, opts: AnimationOptions = {}): Promise<Buffer> {
  const width = opts.width ?? 640;
  const frames: Buffer[] = [];
  const render = async (frame: string, s: StepView | undefined, caption: string, scale: number) => {
    const img = sharp(await loadFrame(view, frame));
    const meta = await img.metadata();
    const w = meta.width ?? width;
    const h = meta.height ?? Math.round(width * 0.6);
    let out = img;
    if (opts.overlay !== false) {
      const svg = s ? actionOverlaySvg(s, w, h, scale, caption) : actionOverlaySvg({ actions: [] } as unknown as StepView, w, h, scale, caption);
      out = sharp(await img.composite([{ input: Buffer.from(svg), top: 0, left: 0 }]).png().toBuffer());
    }
    // Every frame must have the same size for the animated join.
    frames.push(await out.resize(width, Math.round((h * width) / w), { fit: 'fill' }).png().toBuffer());
  };
  let scale = view.initial.screenshot?.scale ?? view.steps[0]?.screenshot?.scale ?? 1;
  for (const s of view.steps) {
    const frame = s.before_frame;
    if (frame) await render(frame, s, `${s.step}. ${s.actions.map((a) => describeAction(a.action)).join(' ; ') || s.action_text || ''}`, scale);
    if (s.screenshot?.scale) scale = s.screenshot.scale;
  }
  const end = view.steps.at(-1)?.frame;
  if (end) await render(end, undefined, `end: ${view.meta.termination?.reason ?? view.meta.status}${view.meta.answer ? ` — ${view.meta.answer}` : ''}`, scale);
  if (!frames.length) throw new ExportError(`episode ${view.id} has no frames to animate`);
  const delay = frames.map(() => opts.delayMs ?? 900);
  const anim = sharp(frames, { join: { animated: true } });
  return (opts.format ?? 'webp') === 'gif' ? anim.gif({ delay, loop: 0 }).toBuffer() : anim.webp({ delay, loop: 0, quality: 75 }).toBuffer();
}
