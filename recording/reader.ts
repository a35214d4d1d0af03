// Reads episode directories into one normalised view: Grove recordings (protocol/recording.ts), WebVoyager
// result folders (task<id>/interact_messages.json + screenshotN.png) and Online-Mind2Web result folders
// (<task_id>/result.json + trajectory/*, schema v1 or v2). Used by the viewer, the exporters and the judges.
//
// Frame convention everywhere: `initial.frame` is what the agent saw first; `steps[i].frame` is the screen after
// step i's actions; `steps[i].before_frame` is the screen the step was decided on. Frame paths are relative to
// the episode directory.
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { EpisodeMeta, StepRecord } from '../protocol/recording.ts';
import { Verdict as VerdictSchema, type Task, type Verdict } from '../protocol/task.ts';
import { EPISODE_FILE, effectiveStatus, INITIAL_FILE, STEPS_FILE, type InitialObservation } from './recorder.ts';
import { splitThoughtAction } from './action-text.ts';
import type { ResolvedAction } from '../protocol/observation.ts';
import { imageMimeOf } from '../protocol/image.ts';

export type Layout = 'grove' | 'webvoyager' | 'online-mind2web';

export interface StepView extends StepRecord {
  /** The frame the step was decided on (previous step's frame, or the initial frame). */
  before_frame?: string;
  /** The action as a foreign harness wrote it (WebVoyager "Click [5]", Online-Mind2Web "button -> CLICK"). */
  action_text?: string;
}

export interface TaskView {
  id: string;
  question: string;
  site: string;
  suite?: string;
  level?: string;
  start_url?: string;
}

export interface EpisodeView {
  /** Stable key: the directory relative to the root it was found under ("." for the root itself). */
  id: string;
  dir: string;
  layout: Layout;
  /** For foreign layouts a synthesised EpisodeMeta; `status` is the effective status (see recorder.ts). */
  meta: EpisodeMeta;
  task: TaskView;
  initial: InitialObservation & { frame?: string };
  steps: StepView[];
  /** Lines of steps.jsonl that could not be parsed (a torn last line after a crash). */
  damaged_lines: number;
  /** Online-Mind2Web schema of the source folder. */
  schema?: 'v1' | 'v2';
}

export type VerdictSummary = 'success' | 'failure' | 'judge_error' | 'mixed' | 'none';

/** One row of a runs list: everything the filters and the list need, without steps. */
export interface EpisodeSummary {
  id: string;
  layout: Layout;
  episode_id: string;
  run_id?: string;
  task_id: string;
  suite?: string;
  site: string;
  level?: string;
  question: string;
  status: EpisodeMeta['status'];
  steps: number;
  termination?: string;
  reward?: number;
  /** reward > 0 when there is a reward, else the verdicts' agreement, else null (unknown). */
  success: boolean | null;
  verdict: VerdictSummary;
  started_at?: string;
  duration_ms?: number;
  noops: number;
  errors: number;
  answer?: string;
  /** First frame worth showing as a thumbnail (last frame). */
  thumb?: string;
}

/** What a directory holds, judged from its files. */
export async function detectLayout(dir: string): Promise<Layout | undefined> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return undefined;
  }
  if (names.includes(EPISODE_FILE)) return 'grove';
  if (names.includes('interact_messages.json')) return 'webvoyager';
  if (names.includes('result.json') && names.includes('trajectory')) return 'online-mind2web';
  return undefined;
}

export interface FoundEpisode {
  id: string;
  dir: string;
  layout: Layout;
}

/** Finds episode directories under `root` (the root itself may be one), breadth-first, up to `maxDepth`. */
export async function findEpisodes(root: string, maxDepth = 4): Promise<FoundEpisode[]> {
  const out: FoundEpisode[] = [];
  let level = [root];
  for (let depth = 0; depth <= maxDepth && level.length; depth++) {
    const next: string[] = [];
    await Promise.all(
      level.map(async (dir) => {
        let entries;
        try {
          entries = await readdir(dir, { withFileTypes: true });
        } catch {
          return;
        }
        const names = new Set(entries.map((e) => e.name));
        const layout: Layout | undefined = names.has(EPISODE_FILE)
          ? 'grove'
          : names.has('interact_messages.json')
            ? 'webvoyager'
            : names.has('result.json') && names.has('trajectory')
              ? 'online-mind2web'
              : undefined;
        if (layout) {
          out.push({ id: relative(root, dir).split(sep).join('/') || '.', dir, layout });
          return;
        }
        for (const e of entries) {
          if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules') next.push(join(dir, e.name));
        }
      }),
    );
    level = next;
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export interface ReadOptions {
  /**
   * Validate every steps.jsonl line against StepRecord (default true). Indexes that only summarise thousands of
   * episodes turn it off: lines are then only JSON-parsed and checked for a numeric `step`.
   */
  validate?: boolean;
}

export async function readEpisode(dir: string, id = basename(dir), opts: ReadOptions = {}): Promise<EpisodeView> {
  const layout = await detectLayout(dir);
  switch (layout) {
    case 'grove':
      return readGrove(dir, id, opts.validate ?? true);
    case 'webvoyager':
      return readWebVoyager(dir, id);
    case 'online-mind2web':
      return readOnlineMind2Web(dir, id);
    default:
      throw new Error(
        `${dir} is not an episode directory: expected episode.json (Grove), interact_messages.json (WebVoyager) or result.json + trajectory/ (Online-Mind2Web)`,
      );
  }
}

/** Parses steps.jsonl text, skipping (and counting) lines that do not parse, e.g. a line torn by a crash. */
export function parseStepsJsonl(text: string, validate = true): { steps: StepRecord[]; damaged: number } {
  const steps: StepRecord[] = [];
  let damaged = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const raw = JSON.parse(line) as StepRecord;
      if (!validate) {
        if (typeof raw?.step === 'number' && Array.isArray(raw.actions)) steps.push(raw);
        else damaged++;
        continue;
      }
      const r = StepRecord.safeParse(raw);
      if (r.success) steps.push(r.data);
      else damaged++;
    } catch {
      damaged++;
    }
  }
  return { steps, damaged };
}

async function readJson(path: string): Promise<unknown> {
  return JSON.parse(await readFile(path, 'utf8'));
}

async function readGrove(dir: string, id: string, validate: boolean): Promise<EpisodeView> {
  const meta = EpisodeMeta.parse(await readJson(join(dir, EPISODE_FILE)));
  const text = await readFile(join(dir, STEPS_FILE), 'utf8').catch(() => '');
  const { steps, damaged } = parseStepsJsonl(text, validate);
  const initial = ((await readJson(join(dir, INITIAL_FILE)).catch(() => ({}))) ?? {}) as InitialObservation;
  const status = await effectiveStatus(dir, meta);
  const views = withBeforeFrames(steps, meta.initial_frame);
  const verdicts = [...meta.verdicts, ...(await judgeRecordVerdicts(dir, meta.verdicts))];
  return {
    id,
    dir,
    layout: 'grove',
    meta: { ...meta, status, verdicts, steps: Math.max(meta.steps, steps.at(-1)?.step ?? 0) },
    task: taskView(meta.task, meta.episode_id),
    initial: { ...initial, frame: meta.initial_frame },
    steps: views,
    damaged_lines: damaged,
  };
}

/**
 * Verdicts that `grove judge` wrote beside a Grove episode (`<episode>/judge/<judge>.json`, judges/base.ts) and that
 * episode.json does not hold yet (a run writes its own verdicts there): with their details — key points, per-image
 * scores, kept screenshots, reasoning — so the viewer shows them.
 */
async function judgeRecordVerdicts(dir: string, have: Verdict[]): Promise<Verdict[]> {
  const names = await readdir(join(dir, 'judge')).catch(() => [] as string[]);
  const out: Verdict[] = [];
  for (const n of names.filter((x) => x.endsWith('.json')).sort()) {
    const rec = (await readJson(join(dir, 'judge', n)).catch(() => undefined)) as { verdict?: unknown } | undefined;
    const v = VerdictSchema.safeParse(rec?.verdict);
    if (v.success && !have.some((h) => h.judge === v.data.judge) && !out.some((o) => o.judge === v.data.judge)) out.push(v.data);
  }
  return out;
}

function withBeforeFrames(steps: StepRecord[], initialFrame?: string): StepView[] {
  let prev = initialFrame;
  return steps.map((s) => {
    const v: StepView = { ...s, before_frame: prev };
    if (s.frame) prev = s.frame;
    return v;
  });
}

function taskView(task: Task | undefined, fallbackId: string): TaskView {
  if (!task) return { id: fallbackId, question: '', site: '' };
  return {
    id: task.id,
    question: task.question,
    site: task.site,
    suite: task.suite,
    level: task.level,
    start_url: task.start_url,
  };
}

const EMPTY_TIMINGS = { action: 0, settle: 0, capture: 0, encode: 0, total: 0 };

function foreignStep(step: number, fields: Partial<StepView>): StepView {
  return {
    step,
    ts: '',
    actions: [],
    url: '',
    title: '',
    tabs: [],
    events: [],
    last_action_error: null,
    timings: EMPTY_TIMINGS,
    ...fields,
  };
}

/** A foreign action as a resolved one; page-pixel coordinates (css_px) double as the overlay's position. */
function resolved(a: ResolvedAction['action'] | undefined): ResolvedAction[] {
  if (!a) return [];
  const at = 'x' in a && 'y' in a && typeof a.x === 'number' && typeof a.y === 'number' && (!('space' in a) || a.space === 'css_px') ? { css: { x: a.x, y: a.y } } : {};
  return [{ action: a, error: null, ms: 0, ...at }];
}

/**
 * Online-Mind2Web action text with page coordinates — "CLICK (640, 180)" (Grove's export), "CLICK coords(640, 180)"
 * and the like — as a canonical action in page pixels, for the overlay. Element-only forms ("<button> -> CLICK")
 * have no position and give none.
 */
export function parseOm2wAction(text: string): ResolvedAction['action'] | undefined {
  const m = /\b(CLICK|DOUBLE_CLICK|RIGHT_CLICK|HOVER)\b[^(]*?(?:coords?)?\((-?\d+(?:\.\d+)?),\s*(-?\d+(?:\.\d+)?)\)/i.exec(text);
  if (!m) return undefined;
  const x = Number(m[2]);
  const y = Number(m[3]);
  const kind = m[1].toUpperCase();
  if (kind === 'DOUBLE_CLICK') return { action: 'double_click', x, y, space: 'css_px' };
  if (kind === 'RIGHT_CLICK') return { action: 'right_click', x, y, space: 'css_px' };
  if (kind === 'HOVER') return { action: 'hover', x, y, space: 'css_px' };
  return { action: 'click', x, y, space: 'css_px' };
}

function foreignMeta(fields: Partial<EpisodeMeta> & Pick<EpisodeMeta, 'episode_id'>): EpisodeMeta {
  return EpisodeMeta.parse({ started_at: '', status: 'complete', ...fields });
}

type ChatContent = string | { type: string; text?: string; image_url?: { url: string } }[];
interface ChatMessage {
  role: string;
  content: ChatContent;
}

const textOf = (c: ChatContent) =>
  typeof c === 'string' ? c : c.filter((p) => p.type === 'text').map((p) => p.text ?? '').join('\n');

async function numberedFiles(dir: string, re: RegExp): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const m = re.exec(name);
    if (m) out.set(Number(m[1]), name);
  }
  return out;
}

/**
 * The agent's answer as WebVoyager's evaluation/auto_eval.py takes it: only from the last message, only when it
 * holds "Action: ANSWER" (case-sensitive), the text after "ANSWER", separators "; " and an optional "[" skipped, up
 * to the first "]" (so "ANSWER; [4.6 stars]" gives "4.6 stars" and a "]" inside an answer ends it), trimmed.
 * Undefined when the original finds none (it then scores 0 without asking the judge).
 */
export function webVoyagerAnswer(messages: { content: ChatContent }[]): string | undefined {
  if (messages.length <= 1) return undefined;
  const text = textOf(messages[messages.length - 1].content);
  if (!text.includes('Action: ANSWER')) return undefined;
  const m = /ANSWER[; ]+\[?(.[^\]]*)\]?/.exec(text);
  return m ? m[1].trim() : undefined;
}

/**
 * WebVoyager: assistant message k (1-based) was decided on screenshot k; the user message after it carries the
 * environment's feedback for step k (e.g. "The web element you're trying to type may not be a textbox").
 */
async function readWebVoyager(dir: string, id: string): Promise<EpisodeView> {
  const messages = (await readJson(join(dir, 'interact_messages.json'))) as ChatMessage[];
  const shots = await numberedFiles(dir, /^screenshot(\d+)\.(png|jpe?g|webp)$/i);
  const firstUser = messages.find((m) => m.role === 'user');
  const firstText = firstUser ? textOf(firstUser.content) : '';
  const q = /Now given a task:\s*([\s\S]*?)\s*Please interact with\s+(\S+?)\s+and get the answer/i.exec(firstText);
  const taskId = basename(dir).replace(/^task/, '');
  const steps: StepView[] = [];
  const answer = webVoyagerAnswer(messages);
  messages.forEach((m, i) => {
    if (m.role !== 'assistant') return;
    const k = steps.length + 1;
    const text = textOf(m.content);
    const turn = splitThoughtAction(text);
    const next = messages[i + 1];
    const feedback = next && next.role === 'user' ? /Observation:\s*(?:note:|Note:)\s*([^\n]*)/.exec(textOf(next.content)) : null;
    const after = shots.get(k + 1);
    steps.push(
      foreignStep(k, {
        model_output: text,
        format: 'webvoyager',
        thought: turn.thought,
        action_text: turn.action_text,
        actions: resolved(turn.action),
        frame: after,
        before_frame: shots.get(k),
        parse_error: turn.action_text !== undefined && !turn.action ? `unrecognised action: ${turn.action_text}` : undefined,
        last_action_error: feedback ? { code: 'webvoyager_note', message: feedback[1].trim() } : null,
      }),
    );
  });
  const site = taskId.includes('--') ? taskId.split('--')[0] : '';
  const meta = foreignMeta({
    episode_id: taskId,
    steps: steps.length,
    answer,
    termination: answer !== undefined ? { reason: 'task_completed' } : undefined,
    initial_frame: shots.get(1),
  });
  return {
    id,
    dir,
    layout: 'webvoyager',
    meta,
    task: { id: taskId, question: q ? q[1].trim() : firstText.slice(0, 500), site, suite: 'webvoyager', start_url: q?.[2] },
    initial: { frame: shots.get(1), url: q?.[2] },
    steps,
    damaged_lines: 0,
  };
}

interface Om2wV2Step {
  step?: number;
  screenshot?: string;
  url?: string | null;
  action?: string;
  action_status?: string | null;
  thought?: string | null;
}

/** Online-Mind2Web: each action_history entry is one step; its screenshot is the screen after it. */
async function readOnlineMind2Web(dir: string, id: string): Promise<EpisodeView> {
  const r = (await readJson(join(dir, 'result.json'))) as Record<string, unknown>;
  const isV2 = r.schema_version === 'online-mind2web-v2';
  const taskId = String(r.task_id ?? basename(dir));
  const steps: StepView[] = [];
  let initialFrame: string | undefined;
  let answer: string | undefined;
  if (isV2) {
    // v2: each entry's screenshot is the screen its action was taken on (recording/export/online-mind2web.ts writes
    // it so): that is the step's before_frame, and the next entry's screenshot is the screen after it.
    const hist = (r.action_history as Om2wV2Step[] | undefined) ?? [];
    const shotOf = (h: Om2wV2Step | undefined) => (h?.screenshot ? `trajectory/${h.screenshot}` : undefined);
    initialFrame = shotOf(hist[0]);
    hist.forEach((h, i) => {
      steps.push(
        foreignStep(i + 1, {
          action_text: h.action,
          actions: resolved(parseOm2wAction(h.action ?? '')),
          thought: h.thought ?? undefined,
          url: h.url ?? '',
          before_frame: shotOf(h),
          frame: shotOf(hist[i + 1]) ?? shotOf(h),
          last_action_error: h.action_status && /fail/i.test(h.action_status) ? { code: 'action_failed', message: h.action_status } : null,
        }),
      );
    });
    answer = typeof r.agent_final_answer === 'string' ? r.agent_final_answer : undefined;
  } else {
    const actions = (r.action_history as string[] | undefined) ?? [];
    const thoughts = (r.thoughts as (string | null)[] | undefined) ?? [];
    const images = [...(await numberedFiles(join(dir, 'trajectory'), /^\D*(\d+).*\.(png|jpe?g|webp)$/i)).entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([, n]) => `trajectory/${n}`);
    // One more image than actions: the first one is the start page.
    const offset = images.length > actions.length ? 1 : 0;
    if (offset) initialFrame = images[0];
    const n = Math.max(actions.length, images.length - offset);
    for (let i = 0; i < n; i++) {
      steps.push(foreignStep(i + 1, { action_text: actions[i], actions: resolved(parseOm2wAction(actions[i] ?? '')), thought: thoughts[i] ?? undefined, frame: images[i + offset] }));
    }
    answer = typeof r.final_result_response === 'string' ? r.final_result_response : undefined;
  }
  const views = isV2 ? steps : withBeforeFrames(steps, initialFrame);
  const verdicts: Verdict[] = [];
  if (typeof r.predicted_label === 'number') {
    verdicts.push({
      judge: 'online-mind2web',
      outcome: r.predicted_label === 1 ? 'success' : 'failure',
      reasoning: typeof (r.evaluation_details as { response?: unknown } | undefined)?.response === 'string'
        ? String((r.evaluation_details as { response: string }).response)
        : undefined,
    });
  }
  const meta = foreignMeta({
    episode_id: taskId,
    steps: steps.length,
    answer,
    verdicts,
    termination: answer ? { reason: 'task_completed' } : undefined,
    initial_frame: initialFrame,
  });
  return {
    id,
    dir,
    layout: 'online-mind2web',
    meta,
    task: {
      id: taskId,
      question: String(r.task ?? r.confirmed_task ?? ''),
      site: String(r.website ?? ''),
      suite: 'online-mind2web',
      level: typeof r.level === 'string' ? r.level : undefined,
    },
    initial: { frame: initialFrame },
    steps: views,
    damaged_lines: 0,
    schema: isV2 ? 'v2' : 'v1',
  };
}

export function verdictSummary(verdicts: Verdict[]): VerdictSummary {
  if (!verdicts.length) return 'none';
  const real = verdicts.filter((v) => v.outcome !== 'judge_error');
  if (!real.length) return 'judge_error';
  if (real.every((v) => v.outcome === 'success')) return 'success';
  if (real.every((v) => v.outcome === 'failure')) return 'failure';
  return 'mixed';
}

export function summarise(v: EpisodeView): EpisodeSummary {
  const verdict = verdictSummary(v.meta.verdicts);
  const success =
    v.meta.reward !== undefined ? v.meta.reward > 0 : verdict === 'success' ? true : verdict === 'failure' ? false : null;
  const started = Date.parse(v.meta.started_at);
  const finished = v.meta.finished_at ? Date.parse(v.meta.finished_at) : NaN;
  const last = [...v.steps].reverse().find((s) => s.frame)?.frame ?? v.initial.frame;
  return {
    id: v.id,
    layout: v.layout,
    episode_id: v.meta.episode_id,
    run_id: v.meta.run_id,
    task_id: v.task.id,
    suite: v.task.suite,
    site: v.task.site,
    level: v.task.level,
    question: v.task.question,
    status: v.meta.status,
    steps: v.steps.length,
    termination: v.meta.termination?.reason,
    reward: v.meta.reward,
    success,
    verdict,
    started_at: v.meta.started_at || undefined,
    duration_ms: Number.isFinite(started) && Number.isFinite(finished) ? finished - started : undefined,
    noops: v.steps.filter((s) => s.diff?.noop).length,
    errors: v.steps.filter((s) => s.last_action_error || s.parse_error || s.actions.some((a) => a.error)).length,
    answer: v.meta.answer,
    thumb: last,
  };
}

/** Reads every episode under `root` (errors are returned, not thrown, so one broken folder does not hide the rest). */
export async function readAll(
  root: string,
  opts: { maxDepth?: number; concurrency?: number } & ReadOptions = {},
): Promise<{ episodes: EpisodeView[]; errors: { id: string; error: string }[] }> {
  const found = await findEpisodes(root, opts.maxDepth);
  const episodes: EpisodeView[] = [];
  const errors: { id: string; error: string }[] = [];
  let i = 0;
  const worker = async () => {
    while (i < found.length) {
      const f = found[i++];
      try {
        episodes.push(await readEpisode(f.dir, f.id, opts));
      } catch (e) {
        errors.push({ id: f.id, error: e instanceof Error ? e.message : String(e) });
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 16 }, worker));
  episodes.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { episodes, errors };
}

/** The bytes of a frame of an episode (`rel` as found in the view: `initial.frame`, `steps[i].frame`, ...). */
export async function readFrame(view: Pick<EpisodeView, 'dir'>, rel: string): Promise<{ bytes: Buffer; mime: string }> {
  const abs = join(view.dir, rel);
  if (relative(view.dir, abs).startsWith('..')) throw new Error(`frame path ${rel} leaves the episode directory`);
  const mime = imageMimeOf(rel, 'image/jpeg');
  return { bytes: await readFile(abs), mime };
}

/** Exists for callers that only need to know whether a path is a file (frame look-ups). */
export async function isFile(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isFile(), () => false);
}
