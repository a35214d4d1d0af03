// Supervised fine-tuning samples: multimodal chat in the OpenAI message format, the assistant turn printed in a
// policy output format (vlm-client/formats) so the samples teach exactly what the policy parser reads back.
//
// mode 'step' (default): one sample per step: [system, user(task + previous actions + screenshot), assistant].
// mode 'episode': one multi-turn conversation per episode, one screenshot per user turn.
// Images are copied next to the samples (`images/…`, referenced by relative path) or inlined as data URLs.
import { appendFile, copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Action, CoordinateSpace } from '../../protocol/action.ts';
import type { ResolvedAction } from '../../protocol/observation.ts';
import type { TerminationReason } from '../../protocol/task.ts';
import { getFormat, type FormatOptions, type PolicyFormat } from '../../vlm-client/formats/index.ts';
import type { EpisodeView, StepView } from '../reader.ts';
import { describeAction } from '../action-text.ts';
import { ensureDir, ExportError, loadFrame, safeName } from './common.ts';
import { imageMimeOf } from '../../protocol/image.ts';

type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };
interface ToolCallOut {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}
type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: ContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCallOut[] };

export interface SftSample {
  messages: ChatMessage[];
  meta: { episode: string; task_id: string; step?: number; format: string; reward?: number; termination?: string };
}

export interface SftFilter {
  /** Keep only episodes ending with one of these reasons. */
  termination?: TerminationReason[];
  /** Keep only episodes with reward >= this (episodes without a reward are dropped when set). */
  minReward?: number;
}

export interface SftOptions extends SftFilter {
  /** Policy output format name (vlm-client/formats), e.g. the one the policy was trained to emit. */
  format: string;
  mode?: 'step' | 'episode';
  images?: 'files' | 'data-url';
  /** Previous actions listed in a step sample's user turn (default 8). */
  history?: number;
  /** Include the format's system prompt (default true). */
  systemPrompt?: boolean;
}

export interface SftStats {
  episodes: number;
  skipped_episodes: number;
  samples: number;
  /** Steps left out: no action, a parse error, or an action the format cannot express. */
  skipped_steps: number;
}

export function keepEpisode(view: EpisodeView, f: SftFilter): boolean {
  if (f.termination?.length && !f.termination.includes(view.meta.termination?.reason as TerminationReason)) return false;
  if (f.minReward !== undefined && !(view.meta.reward !== undefined && view.meta.reward >= f.minReward)) return false;
  return view.meta.status === 'complete';
}

interface Geometry {
  viewport: { width: number; height: number };
  image: { width: number; height: number };
}

/** Viewport and image size of the frame a step was decided on (previous step's screenshot, or the initial one). */
function geometryFor(view: EpisodeView, index: number): Geometry | undefined {
  const shot = (index > 0 ? view.steps[index - 1].screenshot : view.initial.screenshot) ?? view.steps[index].screenshot;
  if (!shot || !shot.scale) return undefined;
  return {
    image: { width: shot.width, height: shot.height },
    // Smart resize scales the axes differently; recordings older than scale_y only had the horizontal scale.
    viewport: { width: Math.round(shot.width / shot.scale), height: Math.round(shot.height / (shot.scale_y ?? shot.scale)) },
  };
}

function cssTo(p: { x: number; y: number }, space: CoordinateSpace, g: Geometry, divisor: number) {
  const r = (v: number) => Math.round(v);
  switch (space) {
    case 'css_px':
      return { x: r(p.x), y: r(p.y) };
    case 'image_px':
      return { x: r((p.x * g.image.width) / g.viewport.width), y: r((p.y * g.image.height) / g.viewport.height) };
    case 'rel1000':
      return { x: r((p.x / g.viewport.width) * divisor), y: r((p.y / g.viewport.height) * divisor) };
  }
}

/** Re-expresses a recorded action in `space` using its resolved CSS coordinates. */
function actionInSpace(ra: ResolvedAction, space: CoordinateSpace | 'label', g: Geometry | undefined, divisor: 1000 | 999 = 1000): Action {
  const a = ra.action;
  if (space === 'label' || !('x' in a) || a.x === undefined || a.y === undefined) return a;
  if ((a.space ?? ra.space) === space) {
    const { space: _s, rel_divisor: _d, ...rest } = a as Action & { space?: unknown; rel_divisor?: unknown };
    return rest as Action;
  }
  if (!ra.css || !g) throw new ExportError(`step action ${a.action} has no resolved coordinates to convert to ${space}`);
  const p = cssTo(ra.css, space, g, divisor);
  const out = { ...a, x: p.x, y: p.y } as Action & { space?: unknown; rel_divisor?: unknown };
  delete out.space;
  delete out.rel_divisor;
  if (out.action === 'drag' && ra.to_css) {
    const t = cssTo(ra.to_css, space, g, divisor);
    out.to_x = t.x;
    out.to_y = t.y;
    delete out.path;
  }
  return out as Action;
}

/** The assistant message for a step, or a reason it cannot be expressed. */
function assistantMessage(fmt: PolicyFormat, s: StepView, g: Geometry | undefined, fo: FormatOptions): { ok: true; message: ChatMessage } | { ok: false; reason: string } {
  if (!s.actions.length || s.parse_error) return { ok: false, reason: s.parse_error ?? 'no action' };
  let printed: string;
  try {
    const actions = s.actions.map((ra) => actionInSpace(ra, fmt.space, g, fo.rel_divisor));
    printed = fmt.print(actions, { ...fo, thought: s.thought });
  } catch (e) {
    return { ok: false, reason: e instanceof Error ? e.message : String(e) };
  }
  // Tool-calling formats print the assistant message as JSON ({ content, tool_calls }); give it the wire shape.
  try {
    const m = JSON.parse(printed) as { content?: string | null; tool_calls?: { id?: string; name?: string; arguments?: unknown; function?: { name?: string; arguments?: unknown } }[] };
    if (m && typeof m === 'object' && Array.isArray(m.tool_calls)) {
      return {
        ok: true,
        message: {
          role: 'assistant',
          content: m.content ?? null,
          tool_calls: m.tool_calls.map((t, i) => {
            const name = t.function?.name ?? t.name ?? '';
            const args = t.function?.arguments ?? t.arguments ?? {};
            return { id: t.id ?? `call_${s.step}_${i}`, type: 'function', function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) } };
          }),
        },
      };
    }
  } catch {
    // Plain text output.
  }
  return { ok: true, message: { role: 'assistant', content: printed } };
}

class ImageSink {
  constructor(
    private readonly outDir: string,
    private readonly mode: 'files' | 'data-url',
  ) {}
  async url(view: EpisodeView, frame: string): Promise<string> {
    const bytes = await loadFrame(view, frame);
    if (this.mode === 'data-url') {
      const mime = imageMimeOf(frame, 'image/png');
      return `data:${mime};base64,${bytes.toString('base64')}`;
    }
    const rel = `images/${safeName(view.meta.episode_id)}_${frame.replace(/[\\/]/g, '_')}`;
    await copyFile(join(view.dir, frame), join(this.outDir, rel));
    return rel;
  }
}

/** Builds the samples of one episode (images written/encoded through `sink`). */
async function episodeSamples(view: EpisodeView, fmt: PolicyFormat, opts: SftOptions, sink: ImageSink): Promise<{ samples: SftSample[]; skipped: number }> {
  const samples: SftSample[] = [];
  let skipped = 0;
  const meta = { episode: view.id, task_id: view.task.id, format: fmt.name, reward: view.meta.reward, termination: view.meta.termination?.reason };
  const firstShot = view.initial.screenshot ?? view.steps[0]?.screenshot;
  const fo: FormatOptions = firstShot ? { width: firstShot.width, height: firstShot.height } : {};
  const system: ChatMessage[] = opts.systemPrompt === false ? [] : [{ role: 'system', content: fmt.systemPrompt(fo) }];
  const taskText = `Task: ${view.task.question}${view.task.start_url ? `\nStart page: ${view.task.start_url}` : ''}`;
  const history: string[] = [];
  const convo: ChatMessage[] = [...system];
  for (const [i, s] of view.steps.entries()) {
    const frame = s.before_frame;
    const a = assistantMessage(fmt, s, geometryFor(view, i), fo);
    if (!a.ok || !frame) {
      skipped++;
      if ((opts.mode ?? 'step') === 'episode') break; // a conversation with a hole would teach the wrong thing
      history.push(s.actions.map((x) => describeAction(x.action, x.css)).join(' ; ') || 'no action');
      continue;
    }
    const image: ContentPart = { type: 'image_url', image_url: { url: await sink.url(view, frame) } };
    if ((opts.mode ?? 'step') === 'step') {
      const h = history.slice(-(opts.history ?? 8));
      const prev = h.length ? `\nPrevious actions:\n${h.map((t, j) => `${history.length - h.length + j + 1}. ${t}`).join('\n')}` : '';
      samples.push({
        messages: [...system, { role: 'user', content: [{ type: 'text', text: taskText + prev }, image] }, a.message],
        meta: { ...meta, step: s.step },
      });
    } else {
      convo.push({ role: 'user', content: i === 0 ? [{ type: 'text', text: taskText }, image] : [image] }, a.message);
    }
    history.push(s.actions.map((x) => describeAction(x.action, x.css)).join(' ; '));
  }
  if ((opts.mode ?? 'step') === 'episode' && convo.length > system.length) samples.push({ messages: convo, meta });
  return { samples, skipped };
}

/** Writes `samples.jsonl` (+ `images/`) under outDir for the episodes that pass the filter. */
export async function exportSft(views: EpisodeView[], outDir: string, opts: SftOptions): Promise<SftStats & { file: string }> {
  const fmt = getFormat(opts.format);
  if (!fmt) throw new ExportError(`unknown policy format "${opts.format}"; see vlm-client/formats for the names`);
  await ensureDir(join(outDir, 'images'));
  const file = join(outDir, 'samples.jsonl');
  await writeFile(file, '');
  const sink = new ImageSink(outDir, opts.images ?? 'files');
  const stats: SftStats = { episodes: 0, skipped_episodes: 0, samples: 0, skipped_steps: 0 };
  for (const v of views) {
    if (!keepEpisode(v, opts)) {
      stats.skipped_episodes++;
      continue;
    }
    const { samples, skipped } = await episodeSamples(v, fmt, opts, sink);
    stats.episodes++;
    stats.samples += samples.length;
    stats.skipped_steps += skipped;
    if (samples.length) await appendFile(file, samples.map((x) => JSON.stringify(x)).join('\n') + '\n');
  }
  return { ...stats, file };
}
