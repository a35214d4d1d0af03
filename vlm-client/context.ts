// Conversation/context management for VLM policies: which screenshots the model still sees, how the history of
// thoughts and actions is written, and keeping the prompt within a token budget. `buildContext` is pure; the
// `ContextManager` class only stores the episode's history between steps.
import type { ChatMessage, ContentPart, WireToolCall } from './client.ts';

export interface ImageRef {
  /** Data URL (or http URL) of the screenshot. */
  url: string;
  width?: number;
  height?: number;
}

/** One past step: what the model saw and what it answered. */
export interface HistoryStep {
  step: number;
  /** Text that accompanied the screenshot (URL, title, errors, SoM list). */
  observation?: string;
  image?: ImageRef;
  /** The model's raw output, replayed verbatim as the assistant turn. */
  output: string;
  /**
   * Native tool calls of that turn. When set, the assistant turn is replayed as `{content, tool_calls}` followed by
   * one `tool` message per call (servers' chat templates expect a tool result after each call); `output` is unused.
   */
  tool_calls?: { turn_text: string | null; calls: WireToolCall[] };
  thought?: string;
  /** Short text of the action(s) taken, for the summary history ("click (500, 300)"). */
  action?: string;
  /** Feedback about this step (parse error, action error), shown to the model afterwards. */
  feedback?: string;
}

export interface CurrentObservation {
  step: number;
  text?: string;
  image?: ImageRef;
}

export interface ContextInput {
  system: string;
  task: string;
  history: HistoryStep[];
  current: CurrentObservation;
}

export interface ContextOptions {
  /** Screenshots kept in the prompt, the current one included (default 1). Older ones become a text placeholder. */
  keepScreenshots?: number;
  /** Token budget for the whole prompt (default 32 000). Oldest steps are dropped first. */
  maxTokens?: number;
  /** 'turns' (default): past steps as user/assistant turns; 'summary': one text list of past thoughts and actions. */
  history?: 'turns' | 'summary';
  /** Keep at most this many past steps (before budgeting). */
  maxHistorySteps?: number;
  /** Token cost of one image: a number, or a function of its size. Default: one token per 28x28 patch, plus 2. */
  imageTokens?: number | ((width: number, height: number) => number);
  /** Patch side for the default image estimate (Qwen2.5/3-VL merge 14px patches 2x2: 28). */
  patchSize?: number;
  /** Used when an image's size is unknown. */
  defaultImageSize?: { width: number; height: number };
  /** Characters per token for text estimates (default 4). */
  charsPerToken?: number;
}

export interface BuiltContext {
  messages: ChatMessage[];
  estimatedTokens: number;
  /** Images actually sent. */
  images: number;
  /** Past steps left out to fit the budget or maxHistorySteps. */
  droppedSteps: number;
  /** The prompt is still above the budget after dropping everything that may be dropped. */
  overBudget: boolean;
}

const DEFAULTS = {
  keepScreenshots: 1,
  maxTokens: 32_000,
  history: 'turns' as const,
  patchSize: 28,
  charsPerToken: 4,
  defaultImageSize: { width: 1280, height: 1000 },
};

export function estimateTextTokens(text: string, charsPerToken = DEFAULTS.charsPerToken): number {
  return Math.ceil(text.length / charsPerToken);
}

/** Patch-grid estimate of an image's tokens (Qwen-VL style; close enough for budgeting other VLMs). */
export function estimateImageTokens(width: number, height: number, patchSize = DEFAULTS.patchSize): number {
  return Math.ceil(width / patchSize) * Math.ceil(height / patchSize) + 2;
}

function imageCost(img: ImageRef, opts: ContextOptions): number {
  const w = img.width ?? opts.defaultImageSize?.width ?? DEFAULTS.defaultImageSize.width;
  const h = img.height ?? opts.defaultImageSize?.height ?? DEFAULTS.defaultImageSize.height;
  if (typeof opts.imageTokens === 'number') return opts.imageTokens;
  if (typeof opts.imageTokens === 'function') return opts.imageTokens(w, h);
  return estimateImageTokens(w, h, opts.patchSize ?? DEFAULTS.patchSize);
}

/** Message overhead per message (role, separators), as chat templates add a few tokens each. */
const PER_MESSAGE = 4;

function messageTokens(m: ChatMessage, opts: ContextOptions, images: WeakMap<object, ImageRef>): number {
  const cpt = opts.charsPerToken ?? DEFAULTS.charsPerToken;
  let n = PER_MESSAGE;
  if (typeof m.content === 'string') n += estimateTextTokens(m.content, cpt);
  else if (Array.isArray(m.content)) {
    for (const p of m.content as ContentPart[]) {
      if (p.type === 'text') n += estimateTextTokens(p.text, cpt);
      else n += imageCost(images.get(p) ?? { url: p.image_url.url }, opts);
    }
  }
  if (m.role === 'assistant' && m.tool_calls) {
    for (const c of m.tool_calls) n += estimateTextTokens(c.function.name + c.function.arguments, cpt);
  }
  return n;
}

function placeholderText(step: number): string {
  return `[screenshot of step ${step} omitted]`;
}

function userTurn(label: string, text: string | undefined, image: ImageRef | undefined, showImage: boolean, step: number, images: WeakMap<object, ImageRef>): ChatMessage {
  const parts: ContentPart[] = [];
  const head = [label, text?.trim()].filter(Boolean).join('\n');
  if (image && showImage) {
    parts.push({ type: 'text', text: head });
    const part: ContentPart = { type: 'image_url', image_url: { url: image.url } };
    images.set(part, image);
    parts.push(part);
    return { role: 'user', content: parts };
  }
  const note = image ? `\n${placeholderText(step)}` : '';
  return { role: 'user', content: head + note };
}

function summaryLine(h: HistoryStep): string {
  const bits = [`Step ${h.step}:`];
  if (h.thought) bits.push(`thought: ${h.thought.replace(/\s+/g, ' ').trim()}`);
  bits.push(`action: ${(h.action ?? h.output).replace(/\s+/g, ' ').trim()}`);
  if (h.feedback) bits.push(`(${h.feedback.replace(/\s+/g, ' ').trim()})`);
  return bits.join(' ');
}

/**
 * Builds the chat messages for one policy call. Steps are dropped oldest first until the estimate fits
 * `maxTokens`; the system prompt, the task and the current observation are never dropped.
 */
export function buildContext(input: ContextInput, opts: ContextOptions = {}): BuiltContext {
  const keep = Math.max(0, opts.keepScreenshots ?? DEFAULTS.keepScreenshots);
  const budget = opts.maxTokens ?? DEFAULTS.maxTokens;
  const mode = opts.history ?? DEFAULTS.history;
  let history = input.history;
  let dropped = 0;
  if (opts.maxHistorySteps !== undefined && history.length > opts.maxHistorySteps) {
    dropped = history.length - opts.maxHistorySteps;
    history = history.slice(dropped);
  }

  const render = (hist: HistoryStep[], omitted: number): { messages: ChatMessage[]; images: WeakMap<object, ImageRef>; count: number } => {
    const images = new WeakMap<object, ImageRef>();
    const messages: ChatMessage[] = [{ role: 'system', content: input.system }];
    let count = 0;
    // The current screenshot takes one of the `keep` slots; the most recent past ones take the rest.
    const pastSlots = Math.max(0, keep - (input.current.image ? 1 : 0));
    const showPast = (i: number) => mode === 'turns' && i >= hist.length - pastSlots;
    const omittedNote = omitted > 0 ? `\n[${omitted} earlier step${omitted === 1 ? '' : 's'} omitted]` : '';
    if (mode === 'summary') {
      const lines = hist.map(summaryLine);
      const historyText = lines.length ? `\n\nPrevious steps:${omittedNote}\n${lines.join('\n')}` : omittedNote ? `\n\nPrevious steps:${omittedNote}` : '';
      messages.push({ role: 'user', content: `Task: ${input.task}${historyText}` });
    } else {
      messages.push({ role: 'user', content: `Task: ${input.task}${omittedNote}` });
      hist.forEach((h, i) => {
        const show = showPast(i) && !!h.image;
        if (show) count++;
        messages.push(userTurn(`Step ${h.step} observation:`, h.observation, h.image, show, h.step, images));
        if (h.tool_calls?.calls.length) {
          messages.push({ role: 'assistant', content: h.tool_calls.turn_text, tool_calls: h.tool_calls.calls });
          for (const c of h.tool_calls.calls) messages.push({ role: 'tool', tool_call_id: c.id, content: 'Executed; see the next observation.' });
        } else messages.push({ role: 'assistant', content: h.output });
        if (h.feedback) messages.push({ role: 'user', content: `Feedback on step ${h.step}: ${h.feedback}` });
      });
    }
    const showCurrent = keep > 0 && !!input.current.image;
    if (showCurrent) count++;
    messages.push(userTurn(`Step ${input.current.step} observation (current):`, input.current.text, input.current.image, showCurrent, input.current.step, images));
    // Merge consecutive user messages: some chat templates reject two user turns in a row.
    return { messages: mergeUsers(messages), images, count };
  };

  const total = (r: { messages: ChatMessage[]; images: WeakMap<object, ImageRef> }) =>
    r.messages.reduce((n, m) => n + messageTokens(m, opts, r.images), 0);

  let r = render(history, dropped);
  let tokens = total(r);
  while (tokens > budget && history.length > 0) {
    history = history.slice(1);
    dropped++;
    r = render(history, dropped);
    tokens = total(r);
  }
  return { messages: r.messages, estimatedTokens: tokens, images: r.count, droppedSteps: dropped, overBudget: tokens > budget };
}

function mergeUsers(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    const prev = out[out.length - 1];
    if (prev && prev.role === 'user' && m.role === 'user') {
      const a = typeof prev.content === 'string' ? [{ type: 'text' as const, text: prev.content }] : prev.content;
      const b = typeof m.content === 'string' ? [{ type: 'text' as const, text: m.content }] : m.content;
      const parts = [...a, ...b];
      out[out.length - 1] = { role: 'user', content: parts.every((p) => p.type === 'text') ? parts.map((p) => (p as { text: string }).text).join('\n\n') : parts };
    } else out.push(m);
  }
  return out;
}

/** Holds one episode's history between policy calls. */
export class ContextManager {
  private system = '';
  private task = '';
  private steps: HistoryStep[] = [];
  constructor(readonly options: ContextOptions = {}) {}

  start(system: string, task: string): void {
    this.system = system;
    this.task = task;
    this.steps = [];
  }

  record(step: HistoryStep): void {
    this.steps.push(step);
  }

  /** Adds feedback to the most recent step (e.g. its output could not be parsed). */
  annotateLast(feedback: string): void {
    const last = this.steps[this.steps.length - 1];
    if (last) last.feedback = last.feedback ? `${last.feedback}; ${feedback}` : feedback;
  }

  get history(): readonly HistoryStep[] {
    return this.steps;
  }

  build(current: CurrentObservation): BuiltContext {
    return buildContext({ system: this.system, task: this.task, history: this.steps, current }, this.options);
  }
}
