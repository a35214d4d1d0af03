// Reading model output: the parse skeleton every format runs in (ParseFailure → `{ ok: false }`, action validation),
// model output normalised to content + tool calls or JSON, tool calls read into name + arguments, tagged blocks,
// and reasoning (`<think>`) split from the rest.
import { Action } from '../../protocol/action.ts';
import { fail, ParseFailure } from './failure.ts';
import { parseJsonText } from './json-text.ts';
import type { ModelOutput, OutputToolCall, ParseResult } from './types.ts';

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

/** Thought text without reasoning tags (Qwen3 "thinking" models wrap it in <think>…</think>). */
export function cleanThought(t: string | undefined): string | undefined {
  if (t === undefined) return undefined;
  // Also drops the closing `**` of a markdown-bold label ("**Thought:** …").
  const s = t.replace(/<\/?think>/g, '').replace(/^[\s*]+/, '').trim();
  return s || undefined;
}
