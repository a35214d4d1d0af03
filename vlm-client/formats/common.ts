// Helpers shared by the format parsers and printers: decoding model output, reading tool-call JSON with readable
// errors, argument checks, coordinate-range checks, key-name normalisation, and the steps several formats print
// alike (typing at a point, scrolling by notches, function tool definitions).
import { Action } from '../../protocol/action.ts';
import type { ToolDef } from '../client.ts';
import type { FormatOptions, ModelOutput, OutputToolCall, ParseResult } from './types.ts';

/** Thrown inside a parser to abort with a structured failure; `parseWith` turns it into `{ ok: false }`. */
export class ParseFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ParseFailure';
  }
}

export function fail(message: string): never {
  throw new ParseFailure(message);
}

/** Runs a parser body, converting ParseFailure into a structured result and validating the actions. */
export function parseWith(
  body: () => { actions: Action[]; thought?: string },
  thoughtOnFailure?: () => string | undefined,
): ParseResult {
  try {
    const { actions, thought } = body();
    if (actions.length === 0) return withThought({ ok: false, error: 'The output contains no action.' }, thought);
    if (actions.length > 16) return withThought({ ok: false, error: `Too many actions in one output (${actions.length}; at most 16).` }, thought);
    const checked: Action[] = [];
    for (const a of actions) {
      const r = Action.safeParse(a);
      if (!r.success) {
        const issues = r.error.issues.map((i) => `${i.path.join('.') || '(action)'}: ${i.message}`).join('; ');
        return withThought({ ok: false, error: `Invalid ${String((a as { action?: unknown }).action)} action: ${issues}` }, thought);
      }
      checked.push(r.data);
    }
    return withThought({ ok: true, actions: checked }, thought);
  } catch (e) {
    if (e instanceof ParseFailure) return withThought({ ok: false, error: e.message }, thoughtOnFailure?.());
    throw e;
  }
}

/**
 * Parse skeleton of the formats whose native output is JSON (Anthropic content blocks, OpenAI Responses items) and
 * that also run behind chat tool calls. Tool calls are read in order by `call` (the message content is the thought);
 * plain text is the model addressing the user, i.e. the final answer (text that looks like JSON but does not parse
 * is a truncated/malformed failure); any other JSON value goes to `json`.
 */
export function parseCallsOrJson(
  output: ModelOutput,
  read: {
    call: (call: DecodedToolCall, index: number, out: Action[]) => void;
    json: (json: unknown) => { actions: Action[]; thought?: string };
    /** The thought to report when `json` fails (e.g. a reasoning summary read before the failure). */
    thoughtOnFailure?: () => string | undefined;
  },
): ParseResult {
  return parseWith(() => {
    const d = decodeOutput(output);
    if (d.toolCalls?.length) {
      const actions: Action[] = [];
      d.toolCalls.forEach((tc, i) => read.call(readToolCall(tc, i), i, actions));
      return { actions, thought: d.content.trim() || undefined };
    }
    if (d.json === undefined) {
      const t = d.content.trim();
      if (!t) fail('Empty output.');
      if (t.startsWith('{') || t.startsWith('[')) parseJsonText(t, 'the output');
      return { actions: [{ action: 'answer', text: t }] };
    }
    return read.json(d.json);
  }, read.thoughtOnFailure);
}

function withThought<T extends ParseResult>(r: T, thought: string | undefined): T {
  if (thought !== undefined && thought !== '') r.thought = thought;
  return r;
}

export interface DecodedToolCall {
  name: string;
  /** Parsed arguments (objects only). */
  args: Record<string, unknown>;
  id?: string;
}

export interface DecodedOutput {
  content: string;
  /** Raw tool calls from an assistant message (not from text); undefined when the output was plain text. */
  toolCalls?: OutputToolCall[];
  /** The whole output parsed as JSON when it was not an assistant message (a list of items, one item...). */
  json?: unknown;
}

/**
 * Normalises `ModelOutput`. A string that is a JSON object with a `content` or `tool_calls` key is taken as an
 * assistant message encoded by the caller (`JSON.stringify({ content, tool_calls })`); any other JSON value is
 * returned in `json` for formats whose native output is JSON (OpenAI CUA items, Anthropic content blocks).
 */
export function decodeOutput(output: ModelOutput): DecodedOutput {
  if (output === null || output === undefined) return { content: '' };
  if (typeof output !== 'string') {
    return { content: output.content ?? '', toolCalls: output.tool_calls ?? undefined };
  }
  const trimmed = output.trim();
  if ((trimmed.startsWith('{') && trimmed.endsWith('}')) || (trimmed.startsWith('[') && trimmed.endsWith(']'))) {
    try {
      const v = JSON.parse(trimmed);
      const plainContent = v?.content === undefined || v?.content === null || typeof v?.content === 'string';
      if (v && typeof v === 'object' && !Array.isArray(v) && plainContent && ('tool_calls' in v || ('content' in v && !('type' in v)))) {
        const content = typeof v.content === 'string' ? v.content : '';
        return { content, toolCalls: Array.isArray(v.tool_calls) ? v.tool_calls : undefined };
      }
      return { content: output, json: v };
    } catch {
      // not JSON: plain text
    }
  }
  return { content: output };
}

type JsonObject = Record<string, unknown>;

/**
 * The items of a JSON-native output (Anthropic content blocks, OpenAI Responses items): the objects of an array, or
 * of the array under `list` in a wrapper object (`{ role, content: [...] }`, `{ output: [...] }`), or one object as
 * `one` reads it (the item itself, or a bare action wrapped into an item). undefined when nothing is recognised.
 */
export function jsonItems(json: unknown, list: string, one: (o: JsonObject) => JsonObject | undefined): JsonObject[] | undefined {
  const objects = (a: unknown[]) => a.filter((x): x is JsonObject => !!x && typeof x === 'object');
  if (Array.isArray(json)) return objects(json);
  if (!json || typeof json !== 'object') return undefined;
  const o = json as JsonObject;
  if (Array.isArray(o[list])) return objects(o[list]);
  const item = one(o);
  return item && [item];
}

/** Parses JSON text from a model, with an error that says what went wrong (truncated vs malformed). */
export function parseJsonText(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const msg = (e as Error).message;
    const truncated = /end of (JSON )?input|Unterminated|Unexpected end/i.test(msg) || unbalanced(text);
    fail(`${truncated ? 'Truncated' : 'Malformed'} JSON in ${what}: ${msg} (${JSON.stringify(clip(text, 120))})`);
  }
}

function unbalanced(text: string): boolean {
  let depth = 0;
  let inStr = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inStr) {
      if (c === '\\') i++;
      else if (c === '"') inStr = false;
    } else if (c === '"') inStr = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return depth > 0 || inStr;
}

export function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/** Reads one OpenAI-style tool call (flat or `{function: {...}}`) into a name and an argument object. */
export function readToolCall(tc: OutputToolCall, index: number): DecodedToolCall {
  const name = tc.function?.name ?? tc.name;
  const raw = tc.function?.arguments ?? tc.arguments;
  if (typeof name !== 'string' || !name) fail(`Tool call ${index + 1} has no function name.`);
  let args: unknown = raw ?? {};
  if (typeof raw === 'string') args = raw.trim() === '' ? {} : parseJsonText(raw, `the arguments of tool call ${index + 1} (${name})`);
  if (!args || typeof args !== 'object' || Array.isArray(args)) fail(`The arguments of tool call ${index + 1} (${name}) must be a JSON object.`);
  return { name, args: args as Record<string, unknown>, id: tc.id };
}

/**
 * Finds `<tag>…</tag>` blocks. An opening tag without its closing tag means the model was cut off
 * (max_tokens): reported as truncated.
 */
export function taggedBlocks(text: string, tag: string): string[] {
  const out: string[] = [];
  const open = `<${tag}>`;
  const close = `</${tag}>`;
  let i = 0;
  for (;;) {
    const s = text.indexOf(open, i);
    if (s < 0) break;
    const e = text.indexOf(close, s + open.length);
    if (e < 0) fail(`Truncated output: ${open} without ${close}.`);
    out.push(text.slice(s + open.length, e).trim());
    i = e + close.length;
  }
  return out;
}

/** Text before the first occurrence of `marker` (for thoughts written before a tool call). */
export function textBefore(text: string, marker: string): string | undefined {
  const i = text.indexOf(marker);
  const t = (i < 0 ? text : text.slice(0, i)).trim();
  return t || undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Argument readers (wrong types are structured failures, never coerced silently)

export function num(args: Record<string, unknown>, key: string, ctx: string): number {
  const v = args[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(`${ctx}: "${key}" must be a number, got ${describe(v)}.`);
  return v;
}

export function optNum(args: Record<string, unknown>, key: string, ctx: string): number | undefined {
  return args[key] === undefined || args[key] === null ? undefined : num(args, key, ctx);
}

export function str(args: Record<string, unknown>, key: string, ctx: string): string {
  const v = args[key];
  if (typeof v !== 'string') fail(`${ctx}: "${key}" must be a string, got ${describe(v)}.`);
  return v;
}

export function optStr(args: Record<string, unknown>, key: string, ctx: string): string | undefined {
  return args[key] === undefined || args[key] === null ? undefined : str(args, key, ctx);
}

export function optBool(args: Record<string, unknown>, key: string, ctx: string): boolean | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') fail(`${ctx}: "${key}" must be true or false, got ${describe(v)}.`);
  return v;
}

export function point(args: Record<string, unknown>, key: string, ctx: string): [number, number] {
  const v = args[key];
  if (!Array.isArray(v) || v.length !== 2 || !v.every((n) => typeof n === 'number' && Number.isFinite(n))) {
    fail(`${ctx}: "${key}" must be an [x, y] pair of numbers, got ${describe(v)}.`);
  }
  return [v[0] as number, v[1] as number];
}

export function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return `an array ${clip(JSON.stringify(v), 40)}`;
  if (typeof v === 'string') return `the string ${JSON.stringify(clip(v, 40))}`;
  return `${typeof v} ${clip(JSON.stringify(v), 40)}`;
}

// ---------------------------------------------------------------------------------------------------------
// Coordinates

export function divisorOf(opts?: FormatOptions): 1000 | 999 {
  return opts?.rel_divisor ?? 1000;
}

/** " <lead> WxH pixels." when the screenshot size is known (prompts of image_px formats), else ''. */
export function sizeNote(opts: FormatOptions | undefined, lead: string): string {
  return opts?.width && opts?.height ? ` ${lead} ${opts.width}x${opts.height} pixels.` : '';
}

/** Point fields for a rel1000 format, with a range check (a value above the grid is a model error). */
export function relPoint(x: number, y: number, ctx: string, opts?: FormatOptions) {
  const d = divisorOf(opts);
  if (x < 0 || y < 0 || x > d || y > d) fail(`${ctx}: coordinate (${x}, ${y}) is outside the 0..${d} grid.`);
  return d === 1000 ? { x, y, space: 'rel1000' as const } : { x, y, space: 'rel1000' as const, rel_divisor: 999 as const };
}

/** Point fields for an image-pixel format; checked against the image size when it is known. */
export function pxPoint(x: number, y: number, ctx: string, opts?: FormatOptions) {
  if (x < 0 || y < 0) fail(`${ctx}: coordinate (${x}, ${y}) is negative.`);
  if (opts?.width !== undefined && opts?.height !== undefined && (x > opts.width || y > opts.height)) {
    fail(`${ctx}: coordinate (${x}, ${y}) is outside the ${opts.width}x${opts.height} screenshot.`);
  }
  return { x, y, space: 'image_px' as const };
}

// ---------------------------------------------------------------------------------------------------------
// Keys. Canonical key names are Playwright's ("Control+a", "Enter", "ArrowDown"); formats spell them their way.

const KEY_ALIASES: Record<string, string> = {
  ctrl: 'Control', control: 'Control', ctl: 'Control', control_l: 'Control', control_r: 'Control',
  alt: 'Alt', option: 'Alt', opt: 'Alt', alt_l: 'Alt', alt_r: 'Alt',
  shift: 'Shift', shift_l: 'Shift', shift_r: 'Shift',
  meta: 'Meta', cmd: 'Meta', command: 'Meta', super: 'Meta', win: 'Meta', windows: 'Meta', super_l: 'Meta', meta_l: 'Meta',
  enter: 'Enter', return: 'Enter', kp_enter: 'Enter',
  esc: 'Escape', escape: 'Escape',
  tab: 'Tab',
  backspace: 'Backspace', back_space: 'Backspace',
  delete: 'Delete', del: 'Delete',
  insert: 'Insert', ins: 'Insert',
  space: 'Space', spacebar: 'Space',
  up: 'ArrowUp', arrowup: 'ArrowUp', arrow_up: 'ArrowUp',
  down: 'ArrowDown', arrowdown: 'ArrowDown', arrow_down: 'ArrowDown',
  left: 'ArrowLeft', arrowleft: 'ArrowLeft', arrow_left: 'ArrowLeft',
  right: 'ArrowRight', arrowright: 'ArrowRight', arrow_right: 'ArrowRight',
  home: 'Home', end: 'End',
  pageup: 'PageUp', page_up: 'PageUp', pgup: 'PageUp', prior: 'PageUp',
  pagedown: 'PageDown', page_down: 'PageDown', pgdn: 'PageDown', next: 'PageDown',
  capslock: 'CapsLock', caps_lock: 'CapsLock',
};

/** One key name in any common spelling → Playwright name. Single characters are kept as they are. */
export function canonicalKey(name: string): string {
  if (name.length === 1) return name;
  const lower = name.toLowerCase();
  if (KEY_ALIASES[lower]) return KEY_ALIASES[lower];
  if (/^f([1-9]|1[0-9]|2[0-4])$/.test(lower)) return lower.toUpperCase();
  return name;
}

export function canonicalCombo(parts: string[]): string {
  const keys = parts.map((p) => p.trim()).filter((p) => p !== '');
  if (!keys.length) fail('Empty key combination.');
  return keys.map(canonicalKey).join('+');
}

/** Splits a canonical combo ("Control+a", "Control++") into key names. */
export function splitCombo(combo: string): string[] {
  if (combo === '+') return ['+'];
  const parts = combo.split('+');
  const out: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] === '' && i === parts.length - 1 && out.length) out.push('+');
    else if (parts[i] !== '') out.push(parts[i]);
  }
  return out;
}

export type KeyStyle = 'lower' | 'xdotool' | 'openai';

const STYLE_NAMES: Record<KeyStyle, Record<string, string>> = {
  lower: {
    Control: 'ctrl', Alt: 'alt', Shift: 'shift', Meta: 'meta', Enter: 'enter', Escape: 'esc', Tab: 'tab',
    Backspace: 'backspace', Delete: 'delete', Insert: 'insert', Space: 'space', ArrowUp: 'up', ArrowDown: 'down',
    ArrowLeft: 'left', ArrowRight: 'right', Home: 'home', End: 'end', PageUp: 'pageup', PageDown: 'pagedown',
    CapsLock: 'capslock',
  },
  xdotool: {
    Control: 'ctrl', Alt: 'alt', Shift: 'shift', Meta: 'super', Enter: 'Return', Escape: 'Escape', Tab: 'Tab',
    Backspace: 'BackSpace', Delete: 'Delete', Insert: 'Insert', Space: 'space', ArrowUp: 'Up', ArrowDown: 'Down',
    ArrowLeft: 'Left', ArrowRight: 'Right', Home: 'Home', End: 'End', PageUp: 'Page_Up', PageDown: 'Page_Down',
    CapsLock: 'Caps_Lock',
  },
  openai: {
    Control: 'CTRL', Alt: 'ALT', Shift: 'SHIFT', Meta: 'CMD', Enter: 'ENTER', Escape: 'ESC', Tab: 'TAB',
    Backspace: 'BACKSPACE', Delete: 'DELETE', Insert: 'INSERT', Space: 'SPACE', ArrowUp: 'ARROWUP',
    ArrowDown: 'ARROWDOWN', ArrowLeft: 'ARROWLEFT', ArrowRight: 'ARROWRIGHT', Home: 'HOME', End: 'END',
    PageUp: 'PAGEUP', PageDown: 'PAGEDOWN', CapsLock: 'CAPSLOCK',
  },
};

/** Canonical key name → the spelling of a format. */
export function styledKey(key: string, style: KeyStyle): string {
  const k = canonicalKey(key);
  const mapped = STYLE_NAMES[style][k];
  if (mapped) return mapped;
  if (/^F\d+$/.test(k)) return style === 'lower' ? k.toLowerCase() : k;
  return k;
}

/** The key combos of a canonical key action. */
export function combosOf(keys: string | string[]): string[] {
  return Array.isArray(keys) ? keys : [keys];
}

// ---------------------------------------------------------------------------------------------------------
// JSON scanning for formats that embed JSON in text

/** Finds the first balanced JSON array or object starting at or after `from`; returns its text or undefined. */
export function findJson(text: string, opener: '[' | '{', from = 0): { text: string; start: number; end: number } | undefined {
  const closer = opener === '[' ? ']' : '}';
  const start = text.indexOf(opener, from);
  if (start < 0) return undefined;
  let depth = 0;
  let inStr = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inStr) {
      if (c === '\\') i++;
      else if (c === '"') inStr = false;
      continue;
    }
    if (c === '"') inStr = true;
    else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') {
      depth--;
      if (depth === 0) {
        if (c !== closer) return undefined;
        return { text: text.slice(start, i + 1), start, end: i + 1 };
      }
    }
  }
  // Opened but never closed: the caller reports a truncation.
  return { text: text.slice(start), start, end: text.length };
}

// ---------------------------------------------------------------------------------------------------------
// Printing

type TypeAction = Extract<Action, { action: 'type' }>;
type ScrollAction = Extract<Action, { action: 'scroll' }>;

/**
 * A canonical type action as the steps of a format without "type at a point": click the point (when given), select
 * all (`clear`), type the text, press Enter (`submit`). Formats whose typing step carries the submit itself
 * (UI-TARS' trailing newline) give no `enter`. Steps are built in order, only when needed.
 */
export function typeSteps<T>(
  a: TypeAction,
  space: 'rel1000' | 'image_px',
  format: string,
  step: { click: (x: number, y: number) => T; selectAll: () => T; type: (text: string) => T; enter?: () => T },
): T[] {
  const out: T[] = [];
  if (a.x !== undefined && a.y !== undefined) {
    assertSpace(a, space, format);
    out.push(step.click(a.x, a.y));
  }
  if (a.clear) out.push(step.selectAll());
  out.push(step.type(a.text));
  if (a.submit && step.enter) out.push(step.enter());
  return out;
}

/**
 * Direction and size of a canonical scroll for formats that scroll by direction + wheel notches. Without a
 * direction, dy (else dx) gives it, and its size; with neither it is down. `notches` is undefined when no size is
 * given; `fromPx` says it was converted from pixels (100 px a notch) and may be fractional.
 */
export function scrollNotches(a: ScrollAction): { direction: 'up' | 'down' | 'left' | 'right'; notches: number | undefined; fromPx: boolean } {
  let direction = a.direction;
  // A viewport fraction is taken on a 1000 px viewport (Grove's default height) for formats that count notches.
  let notches = a.amount !== undefined ? (a.unit === 'px' ? a.amount / 100 : a.unit === 'viewport' ? a.amount * 10 : a.amount) : undefined;
  let fromPx = a.unit === 'px' || a.unit === 'viewport';
  if (!direction) {
    if (a.dy) [direction, notches, fromPx] = [a.dy > 0 ? 'down' : 'up', Math.abs(a.dy) / 100, true];
    else if (a.dx) [direction, notches, fromPx] = [a.dx > 0 ? 'right' : 'left', Math.abs(a.dx) / 100, true];
    else direction = 'down';
  }
  return { direction, notches, fromPx };
}

/** A function tool whose arguments are one JSON object with these properties. */
export function functionTool(name: string, description: string, properties: Record<string, unknown>, required?: string[]): ToolDef {
  return { type: 'function', function: { name, description, parameters: { type: 'object', ...(required ? { required } : {}), properties } } };
}

/** Checks that an action's coordinates are in the space the format writes (print does not convert). */
export function assertSpace(a: { space?: string; action: string }, space: 'rel1000' | 'image_px', format: string): void {
  if (a.space !== undefined && a.space !== space) {
    throw new RangeError(`The ${format} format writes ${space} coordinates; the ${a.action} action is in ${a.space}. Convert it first.`);
  }
}

/**
 * Splits a reasoning model's output into its reasoning and the rest. Qwen3 "thinking" models write
 * `<think>…</think>` before the answer (the chat template may already have opened `<think>`, so the output can start
 * inside it and show only `</think>`). Tool calls are looked for in `rest` only: reasoning that mentions
 * `<tool_call>` or a JSON list must not be read as the call. An unclosed `<think>` leaves the text as it is.
 */
export function splitReasoning(text: string): { reasoning?: string; rest: string } {
  const close = text.indexOf('</think>');
  if (close < 0) return { rest: text };
  const open = text.lastIndexOf('<think>', close);
  const before = open < 0 ? '' : text.slice(0, open);
  const reasoning = text.slice(open < 0 ? 0 : open + '<think>'.length, close).trim();
  return { reasoning: reasoning || undefined, rest: before + text.slice(close + '</think>'.length) };
}

/**
 * The first JSON tool call (`{"name": …}`) or list of them in free text. Every `[` and `{` is tried in order, so a
 * bracket in the thought ("the [Search] button", "[1] result") is skipped rather than read as the list. A candidate
 * that opens a call but is never closed is reported as truncated.
 */
export function findCallJson(text: string): { value: unknown; start: number } | undefined {
  const isCall = (v: unknown) => !!v && typeof v === 'object' && !Array.isArray(v) && typeof (v as { name?: unknown }).name === 'string';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== '[' && c !== '{') continue;
    const found = findJson(text, c, i);
    if (!found) continue;
    let v: unknown;
    try {
      v = JSON.parse(found.text);
    } catch {
      if (found.end === text.length && /^[[{]\s*(\{\s*)?"name"\s*:/.test(found.text)) parseJsonText(found.text, 'the tool call');
      continue;
    }
    if (isCall(v) || (Array.isArray(v) && v.length > 0 && v.every(isCall))) return { value: v, start: i };
  }
  return undefined;
}

/** Thought text without reasoning tags (Qwen3 "thinking" models wrap it in <think>…</think>). */
export function cleanThought(t: string | undefined): string | undefined {
  if (t === undefined) return undefined;
  // Also drops the closing `**` of a markdown-bold label ("**Thought:** …").
  const s = t.replace(/<\/?think>/g, '').replace(/^[\s*]+/, '').trim();
  return s || undefined;
}
