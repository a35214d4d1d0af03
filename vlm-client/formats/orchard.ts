// Orchard-GUI tool list: a JSON list of tool calls, coordinates on a 0..1000 grid (`rel1000`).
// No public specification of "Orchard-GUI" turned up in our search, so this schema is ours. It is built from:
// the Qwen/Hermes function-calling convention (`{"name": …, "arguments": {…}}` objects), the 0..1000 grounding grid
// of Qwen3-VL, and our canonical action vocabulary (protocol/action.ts), so every browser action — navigation and
// tabs included — is expressible one to one.
//
// Output: optional free text (the thought), then the list, preferably inside <tool_calls>…</tool_calls>:
//   I will search for the product.
//   <tool_calls>
//   [{"name": "click", "arguments": {"x": 512, "y": 88}},
//    {"name": "type", "arguments": {"text": "red shoes", "submit": true}}]
//   </tool_calls>
// Also accepted: the list in a ```json fence or bare in the text, a single call object, and OpenAI `tool_calls`
// (each function named after the action; JSON-encode `{ content, tool_calls }` when passing a string).
// Tools and arguments (x/y: numbers on the grid; other types as shown):
//   click {x, y, button?: left|middle|right, modifiers?: [Alt|Control|Meta|Shift]}   double_click {x, y}
//   triple_click {x, y}   right_click {x, y}   hover {x, y}   drag {x, y, to_x, to_y}
//   type {text, x?, y?, clear?: bool, submit?: bool}        key {keys: "Control+a" | ["Tab", "Enter"]}
//   scroll {direction: up|down|left|right, amount?: wheel notches, x?, y?}
//   goto {url}  back {}  forward {}  reload {}  new_tab {url?}  switch_tab {index}  close_tab {index?}
//   wait {seconds?}  answer {text}  terminate {status?: success|failure, reason?}
// Several calls run in order (at most 16). Unknown tools, wrong types and points off the grid are parse failures.
import type { Action } from '../../protocol/action.ts';
import type { ToolDef } from '../client.ts';
import {
  assertSpace,
  canonicalCombo,
  cleanThought,
  decodeOutput,
  describe,
  fail,
  findJson,
  num,
  optBool,
  optNum,
  optStr,
  parseJsonText,
  parseWith,
  readToolCall,
  relPoint,
  str,
  taggedBlocks,
  type DecodedToolCall,
} from './common.ts';
import { UnsupportedActionError, type FormatOptions, type ModelOutput, type ParseResult, type PolicyFormat } from './types.ts';

const NAME = 'orchard';

type Props = Record<string, Record<string, unknown>>;
const P = { x: { type: 'number' }, y: { type: 'number' } };
const TOOLS: { name: Action['action']; description: string; properties: Props; required?: string[] }[] = [
  { name: 'click', description: 'Click at a point.', properties: { ...P, button: { type: 'string', enum: ['left', 'middle', 'right'] }, modifiers: { type: 'array', items: { type: 'string', enum: ['Alt', 'Control', 'Meta', 'Shift'] } } }, required: ['x', 'y'] },
  { name: 'double_click', description: 'Double-click at a point.', properties: P, required: ['x', 'y'] },
  { name: 'triple_click', description: 'Triple-click at a point (selects a line or paragraph).', properties: P, required: ['x', 'y'] },
  { name: 'right_click', description: 'Right-click at a point.', properties: P, required: ['x', 'y'] },
  { name: 'hover', description: 'Move the pointer to a point.', properties: P, required: ['x', 'y'] },
  { name: 'drag', description: 'Press at (x, y), move to (to_x, to_y), release.', properties: { ...P, to_x: { type: 'number' }, to_y: { type: 'number' } }, required: ['x', 'y', 'to_x', 'to_y'] },
  { name: 'type', description: 'Type text into the focused field, or click (x, y) first. clear empties the field first; submit presses Enter after.', properties: { text: { type: 'string' }, ...P, clear: { type: 'boolean' }, submit: { type: 'boolean' } }, required: ['text'] },
  { name: 'key', description: 'Press a key or combination, e.g. "Enter", "Control+a"; a list presses several in turn.', properties: { keys: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] } }, required: ['keys'] },
  { name: 'scroll', description: 'Scroll the page, or the element under (x, y), by wheel notches.', properties: { direction: { type: 'string', enum: ['up', 'down', 'left', 'right'] }, amount: { type: 'number' }, ...P }, required: ['direction'] },
  { name: 'goto', description: 'Open a URL.', properties: { url: { type: 'string' } }, required: ['url'] },
  { name: 'back', description: 'Go back.', properties: {} },
  { name: 'forward', description: 'Go forward.', properties: {} },
  { name: 'reload', description: 'Reload the page.', properties: {} },
  { name: 'new_tab', description: 'Open a new tab, optionally at a URL.', properties: { url: { type: 'string' } } },
  { name: 'switch_tab', description: 'Switch to the tab with this index.', properties: { index: { type: 'integer' } }, required: ['index'] },
  { name: 'close_tab', description: 'Close a tab (default: the current one).', properties: { index: { type: 'integer' } } },
  { name: 'wait', description: 'Wait for the page.', properties: { seconds: { type: 'number' } } },
  { name: 'answer', description: 'Give the final answer to the task.', properties: { text: { type: 'string' } }, required: ['text'] },
  { name: 'terminate', description: 'End the task.', properties: { status: { type: 'string', enum: ['success', 'failure'] }, reason: { type: 'string' } } },
];
const TOOL_NAMES = TOOLS.map((t) => t.name);

function collect(output: ModelOutput): { calls: DecodedToolCall[]; thought?: string } {
  const d = decodeOutput(output);
  if (d.toolCalls?.length) return { calls: d.toolCalls.map(readToolCall), thought: cleanThought(d.content) };
  const text = d.content;
  if (!text.trim()) fail('Empty output: expected a JSON list of tool calls.');
  let jsonText: string | undefined;
  let thought: string | undefined;
  const tagged = taggedBlocks(text, 'tool_calls');
  if (tagged.length > 1) fail(`Expected one <tool_calls> list, found ${tagged.length}.`);
  if (tagged.length === 1) {
    jsonText = tagged[0];
    thought = text.slice(0, text.indexOf('<tool_calls>'));
  } else {
    const fence = /```(?:json)?\s*\n([\s\S]*?)(```|$)/.exec(text);
    if (fence) {
      if (!fence[2]) fail('Truncated output: a ``` fence is not closed.');
      jsonText = fence[1].trim();
      thought = text.slice(0, fence.index);
    } else {
      const arr = findJson(text, '[');
      const obj = findJson(text, '{');
      const first = arr && obj ? (arr.start < obj.start ? arr : obj) : (arr ?? obj);
      if (!first) fail(`No JSON tool-call list in the output: ${JSON.stringify(text.slice(0, 120))}.`);
      jsonText = first.text;
      thought = text.slice(0, first.start);
    }
  }
  let v = parseJsonText(jsonText, 'the tool-call list');
  if (v && typeof v === 'object' && !Array.isArray(v)) v = [v];
  if (!Array.isArray(v)) fail(`The tool-call list must be a JSON array, got ${describe(v)}.`);
  const calls = v.map((c, i) => {
    if (!c || typeof c !== 'object' || Array.isArray(c)) fail(`Tool call ${i + 1} must be an object with "name" and "arguments".`);
    return readToolCall(c as Record<string, never>, i);
  });
  return { calls, thought: cleanThought(thought) };
}

function toAction(c: DecodedToolCall, i: number, opts?: FormatOptions): Action {
  const a = c.args;
  const ctx = `${c.name} (call ${i + 1})`;
  const at = () => relPoint(num(a, 'x', ctx), num(a, 'y', ctx), ctx, opts);
  const optAt = () => (a.x === undefined && a.y === undefined ? {} : at());
  switch (c.name) {
    case 'click': {
      const button = optStr(a, 'button', ctx);
      if (button !== undefined && !['left', 'middle', 'right'].includes(button)) fail(`${ctx}: "button" must be left, middle or right.`);
      const modifiers = a.modifiers;
      if (modifiers !== undefined && (!Array.isArray(modifiers) || !modifiers.every((m) => typeof m === 'string'))) {
        fail(`${ctx}: "modifiers" must be an array of key names, got ${describe(modifiers)}.`);
      }
      return {
        action: 'click',
        ...at(),
        ...(button && button !== 'left' ? { button: button as 'middle' } : {}),
        ...(modifiers?.length ? { modifiers: (modifiers as string[]).map((m) => canonicalCombo([m])) as 'Alt'[] } : {}),
      };
    }
    case 'double_click':
    case 'triple_click':
    case 'right_click':
    case 'hover':
      return { action: c.name, ...at() };
    case 'drag': {
      const from = at();
      const to = relPoint(num(a, 'to_x', ctx), num(a, 'to_y', ctx), ctx, opts);
      return { action: 'drag', ...from, to_x: to.x, to_y: to.y };
    }
    case 'type': {
      const clear = optBool(a, 'clear', ctx);
      const submit = optBool(a, 'submit', ctx);
      return { action: 'type', text: str(a, 'text', ctx), ...optAt(), ...(clear !== undefined ? { clear } : {}), ...(submit !== undefined ? { submit } : {}) };
    }
    case 'key': {
      const k = a.keys;
      if (typeof k === 'string' && k.trim()) return { action: 'key', keys: canonicalCombo(k.split('+')) };
      if (Array.isArray(k) && k.length && k.every((x) => typeof x === 'string' && x.trim())) {
        return { action: 'key', keys: (k as string[]).map((x) => canonicalCombo(x.split('+'))) };
      }
      fail(`${ctx}: "keys" must be a key combination string or a list of them, got ${describe(k)}.`);
    }
    case 'scroll': {
      const direction = str(a, 'direction', ctx);
      if (!['up', 'down', 'left', 'right'].includes(direction)) fail(`${ctx}: "direction" must be up, down, left or right.`);
      const amount = optNum(a, 'amount', ctx);
      return { action: 'scroll', ...optAt(), direction: direction as 'up', ...(amount !== undefined ? { amount } : {}) };
    }
    case 'goto':
      return { action: 'goto', url: str(a, 'url', ctx) };
    case 'back':
    case 'forward':
    case 'reload':
      return { action: c.name };
    case 'new_tab': {
      const url = optStr(a, 'url', ctx);
      return { action: 'new_tab', ...(url !== undefined ? { url } : {}) };
    }
    case 'switch_tab':
      return { action: 'switch_tab', index: num(a, 'index', ctx) };
    case 'close_tab': {
      const index = optNum(a, 'index', ctx);
      return { action: 'close_tab', ...(index !== undefined ? { index } : {}) };
    }
    case 'wait': {
      const s = optNum(a, 'seconds', ctx);
      if (s !== undefined && (s < 0 || s > 60)) fail(`${ctx}: "seconds" must be between 0 and 60.`);
      return { action: 'wait', ...(s !== undefined ? { ms: Math.round(s * 1000) } : {}) };
    }
    case 'answer':
      return { action: 'answer', text: str(a, 'text', ctx) };
    case 'terminate': {
      const status = optStr(a, 'status', ctx);
      if (status !== undefined && status !== 'success' && status !== 'failure') fail(`${ctx}: "status" must be success or failure.`);
      const reason = optStr(a, 'reason', ctx);
      return { action: 'terminate', ...(status ? { status: status as 'success' } : {}), ...(reason !== undefined ? { reason } : {}) };
    }
    default:
      fail(`Unknown tool "${c.name}" (call ${i + 1}); known: ${TOOL_NAMES.join(', ')}.`);
  }
}

function parse(output: ModelOutput, opts?: FormatOptions): ParseResult {
  let thought: string | undefined;
  return parseWith(
    () => {
      const r = collect(output);
      thought = r.thought;
      return { actions: r.calls.map((c, i) => toAction(c, i, opts)), thought };
    },
    () => thought,
  );
}

function toCall(a: Action): { name: string; arguments: Record<string, unknown> } {
  const { action, space, rel_divisor, ...rest } = a as Action & { space?: string; rel_divisor?: number };
  void rel_divisor;
  if (space !== undefined) assertSpace(a as { space?: string; action: string }, 'rel1000', NAME);
  if (action === 'click_label' || action === 'type_label') throw new UnsupportedActionError(NAME, action, 'Orchard acts on coordinates, not SoM labels');
  if (action === 'drag' && (a as { path?: unknown[] }).path?.length) throw new UnsupportedActionError(NAME, 'drag', 'intermediate path points are not expressible');
  if (action === 'scroll' && (rest as { dx?: number }).dx !== undefined) throw new UnsupportedActionError(NAME, 'scroll', 'pixel deltas; use direction + amount');
  if (action === 'scroll' && (rest as { dy?: number }).dy !== undefined) throw new UnsupportedActionError(NAME, 'scroll', 'pixel deltas; use direction + amount');
  if (action === 'scroll' && (rest as { unit?: string }).unit === 'px') throw new UnsupportedActionError(NAME, 'scroll', 'pixel amounts; use notches');
  if (action === 'wait') {
    const ms = (rest as { ms?: number }).ms;
    return { name: 'wait', arguments: ms !== undefined ? { seconds: ms / 1000 } : {} };
  }
  return { name: action, arguments: rest };
}

function print(actions: Action[], opts?: FormatOptions & { thought?: string }): string {
  const list = JSON.stringify(actions.map(toCall));
  return [opts?.thought?.trim(), `<tool_calls>\n${list}\n</tool_calls>`].filter(Boolean).join('\n');
}

function tools(opts?: FormatOptions): ToolDef[] {
  const d = opts?.rel_divisor ?? 1000;
  return TOOLS.map((t) => ({
    type: 'function' as const,
    function: {
      name: t.name,
      description: t.description + (t.properties.x ? ` x, y are on the 0..${d} grid.` : ''),
      parameters: { type: 'object', properties: t.properties, ...(t.required ? { required: t.required } : {}) },
    },
  }));
}

function systemPrompt(opts?: FormatOptions): string {
  const d = opts?.rel_divisor ?? 1000;
  const lines = [
    'You operate a web browser to complete the user\'s task. Each turn you see the current screenshot.',
    `Points are given as x, y on a 0..${d} grid over the screenshot: (0, 0) is the top-left corner, (${d}, ${d}) the bottom-right.`,
    'First write one or two sentences about what you see and what you will do. Then give the actions to run now as a JSON',
    'list inside <tool_calls></tool_calls>, each item {"name": <tool>, "arguments": {…}}. Keep the list short: actions',
    'after a page change cannot see the new page. When you know the answer, call answer and then terminate.',
  ];
  if (!opts?.native_tools) {
    lines.push('', 'Tools:');
    for (const t of TOOLS) {
      const args = Object.keys(t.properties).map((k) => (t.required?.includes(k) ? k : `${k}?`));
      lines.push(`- ${t.name}(${args.join(', ')}): ${t.description}`);
    }
    lines.push('', 'Example:', 'The search box is at the top; I will search for the item.', '<tool_calls>',
      '[{"name": "type", "arguments": {"x": 480, "y": 62, "text": "red shoes", "submit": true}}]', '</tool_calls>');
  }
  return lines.join('\n');
}

export const orchard: PolicyFormat = {
  name: NAME,
  description: 'Orchard-GUI JSON tool-call list (<tool_calls>[{name, arguments}]</tool_calls>), rel1000 coordinates, full browser action set.',
  space: 'rel1000',
  actions: ['click', 'double_click', 'triple_click', 'right_click', 'hover', 'drag', 'type', 'key', 'scroll', 'goto', 'back', 'forward', 'reload', 'new_tab', 'switch_tab', 'close_tab', 'wait', 'answer', 'terminate'],
  systemPrompt,
  tools,
  parse,
  print,
};
