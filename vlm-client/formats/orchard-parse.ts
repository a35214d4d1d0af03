// Parsing Orchard-GUI output into canonical actions: `<think>` then `<tool_call>` blocks (or OpenAI tool calls, or a
// bare call object / list after the thought), each call mapped as web_env.py executes it (see orchard.ts).
import type { Action } from '../../protocol/action.ts';
import { describe, fail } from './failure.ts';
import { point, relPoint, str } from './args.ts';
import { findCallJson, parseJsonText } from './json-text.ts';
import { cleanThought, type DecodedToolCall, decodeOutput, parseWith, readToolCall, splitReasoning, taggedBlocks, textBefore } from './output.ts';
import { orchardKey } from './orchard-keys.ts';
import { TOOL_NAMES } from './orchard-tools.ts';
import type { FormatOptions, ModelOutput, ParseResult } from './types.ts';

function collect(output: ModelOutput): { calls: DecodedToolCall[]; thought?: string } {
  const d = decodeOutput(output);
  if (d.toolCalls?.length) return { calls: d.toolCalls.map(readToolCall), thought: cleanThought(splitReasoning(d.content).reasoning ?? d.content) };
  if (!d.content.trim()) fail('Empty output: expected <think>…</think> and <tool_call> blocks.');
  const { reasoning, rest } = splitReasoning(d.content);
  const blocks = taggedBlocks(rest, 'tool_call');
  const thoughtWith = (before: string | undefined) => cleanThought([reasoning, before].filter(Boolean).join('\n'));
  if (blocks.length) {
    const calls = blocks.map((b, i) => {
      const v = parseJsonText(b, `<tool_call> block ${i + 1}`);
      if (!v || typeof v !== 'object' || Array.isArray(v)) fail(`<tool_call> block ${i + 1} must hold one JSON object {"name": …, "arguments": {…}}.`);
      return callOf(v as Record<string, unknown>, i);
    });
    return { calls, thought: thoughtWith(textBefore(rest, '<tool_call>')) };
  }
  const bare = findCallJson(rest);
  if (!bare) fail(`No <tool_call> block in the output: ${JSON.stringify(rest.trim().slice(0, 120))}.`);
  const list = Array.isArray(bare.value) ? bare.value : [bare.value];
  return { calls: list.map((c, i) => callOf(c as Record<string, unknown>, i)), thought: thoughtWith(rest.slice(0, bare.start)) };
}

/** `{"name", "arguments"}`, or `"parameters"` as the published regex parser also reads. */
function callOf(o: Record<string, unknown>, i: number): DecodedToolCall {
  const args = o.arguments ?? o.parameters;
  return readToolCall({ name: o.name as string, arguments: args as Record<string, unknown> | string | undefined }, i);
}

function int(args: Record<string, unknown>, key: string, ctx: string, dflt: number): number {
  const v = args[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v)) fail(`${ctx}: "${key}" must be an integer, got ${describe(v)}.`);
  return v;
}

function toActions(c: DecodedToolCall, i: number, opts?: FormatOptions): Action[] {
  const a = c.args;
  const ctx = `${c.name} (call ${i + 1})`;
  const at = (key: string) => {
    const [x, y] = point(a, key, ctx);
    return relPoint(x, y, ctx, opts);
  };
  switch (c.name) {
    case 'click': {
      const p = at('point_2d');
      const clicks = int(a, 'clicks', ctx, 1);
      const button = a.button ?? 'left';
      if (button !== 'left' && button !== 'right' && button !== 'middle') fail(`${ctx}: "button" must be left, right or middle, got ${describe(button)}.`);
      if (clicks === 1) return [button === 'right' ? { action: 'right_click', ...p } : { action: 'click', ...p, ...(button === 'middle' ? { button } : {}) }];
      if (button === 'left' && clicks === 2) return [{ action: 'double_click', ...p }];
      if (button === 'left' && clicks === 3) return [{ action: 'triple_click', ...p }];
      fail(`${ctx}: ${clicks} ${button} clicks are not supported (left: 1 to 3 clicks; right and middle: 1).`);
    }
    case 'write': {
      const message = str(a, 'message', ctx);
      if (!message) fail(`${ctx}: "message" must not be empty.`);
      return [{ action: 'type', text: message, clear: true }];
    }
    case 'press_keys': {
      let keys = a.keys;
      if (typeof keys === 'string') keys = [keys];
      if (!Array.isArray(keys) || !keys.length || !keys.every((k) => typeof k === 'string')) {
        fail(`${ctx}: "keys" must be a non-empty list of key names, got ${describe(a.keys)}.`);
      }
      const legal = (keys as string[]).map(orchardKey).filter((k): k is string => k !== undefined);
      if (!legal.length) fail(`${ctx}: no valid keys in ${JSON.stringify(keys)}.`);
      const hot = a.is_hotkey ?? false;
      if (typeof hot !== 'boolean') fail(`${ctx}: "is_hotkey" must be true or false, got ${describe(hot)}.`);
      const presses = int(a, 'presses', ctx, 1);
      if (presses < 1) fail(`${ctx}: "presses" must be at least 1.`);
      const seq = hot ? Array.from({ length: presses }, () => legal.join('+')) : legal.flatMap((k) => Array.from({ length: presses }, () => k));
      if (seq.length > 16) fail(`${ctx}: ${seq.length} key presses in one call; at most 16.`);
      return [{ action: 'key', keys: seq.length === 1 ? seq[0] : seq }];
    }
    case 'scroll': {
      const direction = a.direction ?? 'down';
      if (direction !== 'up' && direction !== 'down' && direction !== 'left' && direction !== 'right') {
        fail(`${ctx}: "direction" must be up, down, left or right, got ${describe(direction)}.`);
      }
      const raw = a.amount ?? 0.5;
      if (typeof raw !== 'number' || !Number.isFinite(raw)) fail(`${ctx}: "amount" must be a number, got ${describe(raw)}.`);
      const amount = Math.max(0, Math.min(1, raw));
      // A zero scroll moves nothing: observe again.
      if (amount === 0) return [{ action: 'wait', ms: 0 }];
      const pos = a.point_2d === undefined || a.point_2d === null ? {} : at('point_2d');
      return [{ action: 'scroll', ...pos, direction, amount, unit: 'viewport' }];
    }
    case 'wait': {
      const s = int(a, 'seconds', ctx, 3);
      if (s < 0 || s > 60) fail(`${ctx}: "seconds" must be between 0 and 60.`);
      return [{ action: 'wait', ms: s * 1000 }];
    }
    case 'done': {
      const response = a.response === undefined || a.response === null ? '' : str(a, 'response', ctx);
      return [response.trim() ? { action: 'answer', text: response } : { action: 'terminate', status: 'success' }];
    }
    case 'goto_url': {
      const url = str(a, 'url', ctx);
      if (!url.trim()) fail(`${ctx}: "url" must not be empty.`);
      return [{ action: 'goto', url }];
    }
    case 'go_back':
      return [{ action: 'back' }];
    case 'hover':
      return [{ action: 'hover', ...at('point_2d') }];
    case 'drag': {
      const from = at('start_point_2d');
      const to = at('end_point_2d');
      return [{ action: 'drag', ...from, to_x: to.x, to_y: to.y }];
    }
    case 'new_tab':
      return [{ action: 'new_tab' }];
    case 'switch_tab': {
      const index = int(a, 'tab_index', ctx, -1);
      if (index < 0) fail(`${ctx}: "tab_index" must be a tab index (0 or more), got ${describe(a.tab_index)}.`);
      return [{ action: 'switch_tab', index }];
    }
    case 'close_tab':
      return [{ action: 'close_tab' }];
    default:
      fail(`Unknown tool "${c.name}" (call ${i + 1}); the tools are ${TOOL_NAMES.join(', ')}.`);
  }
}

export function parse(output: ModelOutput, opts?: FormatOptions): ParseResult {
  let thought: string | undefined;
  return parseWith(
    () => {
      const r = collect(output);
      thought = r.thought;
      return { actions: r.calls.flatMap((c, i) => toActions(c, i, opts)), thought };
    },
    () => thought,
  );
}
