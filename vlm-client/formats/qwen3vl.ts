// Qwen3-VL / Qwen2.5-VL `computer_use` function calling.
// Based on the public Qwen-VL cookbook conventions (computer_use tool: one function `computer_use` with an
// `action` enum key/type/mouse_move/left_click/left_click_drag/right_click/middle_click/double_click/triple_click/
// scroll/hscroll/wait/terminate/answer, `coordinate` [x, y], `keys`, `text`, `pixels`, `time`, `status`), and the
// Hermes-style `<tool_call>{json}</tool_call>` text the Qwen chat template produces. Qwen3-VL grounds on a 0..1000
// grid, so coordinates are `rel1000`.
//
// Accepted output shapes:
//   - text with one or more `<tool_call>{"name": "computer_use", "arguments": {...}}</tool_call>` blocks
//     (text before the first block, minus <think> tags, is the thought);
//   - an assistant message with OpenAI `tool_calls` (server-side tool parsing), passed either as an object or,
//     when the caller only carries strings, JSON-encoded: `JSON.stringify({ content, tool_calls: [{ name, arguments }] })`;
//   - a bare `{"name": "computer_use", "arguments": {...}}` object (a common slip: tags omitted).
// Several calls in one output are allowed (Qwen's template says "one or more functions") and run in order.
// Drag: Qwen's `left_click_drag` drags from the current pointer position, so a drag is written as `mouse_move`
// (start) followed by `left_click_drag` (end) in the same output; a lone `left_click_drag` is accepted only with a
// `start_coordinate` argument, otherwise it is a parse failure (the start point is unknown).
// The pointer actions and `type` are the Anthropic computer tool's (computer_tool.ts holds the shared mapping).
// Scroll: `pixels` > 0 scrolls up. Reference executors pass it to pyautogui.scroll, i.e. wheel clicks, so the
// magnitude is read as notches (canonical `amount`, unit notches).
import type { Action } from '../../protocol/action.ts';
import type { ToolDef } from '../client.ts';
import { describe, fail } from './failure.ts';
import { divisorOf, num, str } from './args.ts';
import { canonicalCombo, combosOf, splitCombo, styledKey } from './keys.ts';
import { findCallJson, parseJsonText } from './json-text.ts';
import { assertSpace, functionTool, scrollNotches, typeSteps } from './print-steps.ts';
import { cleanThought, type DecodedToolCall, decodeOutput, parseWith, readToolCall, splitReasoning, taggedBlocks, textBefore } from './output.ts';
import { coordinateReader, printComputerAction, readComputerAction, type ToolInput } from './computer_tool.ts';
import { UnsupportedActionError, type FormatOptions, type ModelOutput, type ParseResult, type PolicyFormat } from './types.ts';

const NAME = 'qwen3vl';
const TOOL = 'computer_use';
const DEFAULT_SCROLL_NOTCHES = 5;
const DRAG_HINT = 'write mouse_move to the start point before left_click_drag in the same output, or give start_coordinate';

const ACTIONS = [
  'key', 'type', 'mouse_move', 'left_click', 'left_click_drag', 'right_click', 'middle_click', 'double_click',
  'triple_click', 'scroll', 'hscroll', 'wait', 'terminate', 'answer',
] as const;

function toolDef(opts?: FormatOptions): ToolDef {
  const d = divisorOf(opts);
  const description =
    `Control the web browser shown in the screenshot with mouse and keyboard.\n` +
    `* Coordinates are [x, y] on a 0..${d} grid over the screenshot: [0, 0] is the top-left corner, [${d}, ${d}] the bottom-right.\n` +
    `* Aim at the centre of the element you want to hit.\n` +
    `* Pages may need a moment after an action; use wait when the screen has not changed yet.`;
  const properties = {
    action: {
      type: 'string',
      enum: [...ACTIONS],
      description:
        'key: press keys together (keys). type: type text at the focus (text). mouse_move: move the pointer (coordinate). ' +
        'left_click / right_click / middle_click / double_click / triple_click: click at coordinate. ' +
        'left_click_drag: press at the pointer (or start_coordinate) and release at coordinate. ' +
        'scroll: wheel vertically at coordinate, pixels > 0 up, < 0 down (wheel clicks). hscroll: horizontally, > 0 right. ' +
        'wait: pause (time, seconds). answer: give the answer to the user (text). terminate: end the task (status).',
    },
    coordinate: { type: 'array', items: { type: 'number' }, description: `[x, y] on the 0..${d} grid.` },
    start_coordinate: { type: 'array', items: { type: 'number' }, description: 'Drag start, for left_click_drag (optional).' },
    keys: { type: 'array', items: { type: 'string' }, description: 'For key: e.g. ["ctrl", "a"] or ["enter"].' },
    text: { type: 'string', description: 'For type and answer.' },
    pixels: { type: 'number', description: 'For scroll and hscroll.' },
    time: { type: 'number', description: 'For wait, in seconds.' },
    status: { type: 'string', enum: ['success', 'failure'], description: 'For terminate.' },
  };
  return functionTool(TOOL, description, properties, ['action']);
}

function systemPrompt(opts?: FormatOptions): string {
  const intro =
    'You operate a web browser to complete the user\'s task. Each turn you see the current screenshot and choose the next action. ' +
    'Think briefly about what you see and what to do, then call the tool. When the task asks for information, report it with ' +
    'the answer action, then call terminate with status "success"; if the task cannot be done, terminate with "failure".';
  if (opts?.native_tools) return intro;
  return (
    `${intro}\n\n# Tools\n\nThe only function you may call is described inside <tools></tools>:\n<tools>\n` +
    `${JSON.stringify(toolDef(opts))}\n</tools>\n\n` +
    'To call it, write a JSON object with "name" and "arguments" inside <tool_call></tool_call> tags, e.g.\n' +
    '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [512, 240]}}\n</tool_call>'
  );
}

function collectCalls(output: ModelOutput): { calls: DecodedToolCall[]; thought?: string } {
  const d = decodeOutput(output);
  if (d.toolCalls?.length) {
    return { calls: d.toolCalls.map(readToolCall), thought: cleanThought(d.content) };
  }
  if (!d.content.trim()) fail('Empty output: expected a <tool_call> block.');
  // Reasoning first: a <think> block that mentions <tool_call> is not a call.
  const { reasoning, rest: text } = splitReasoning(d.content);
  const blocks = taggedBlocks(text, 'tool_call');
  if (blocks.length) {
    const calls = blocks.map((b, i) => {
      const v = parseJsonText(b, `<tool_call> block ${i + 1}`);
      if (!v || typeof v !== 'object' || Array.isArray(v)) fail(`<tool_call> block ${i + 1} must hold a JSON object.`);
      return readToolCall(v as Record<string, never>, i);
    });
    return { calls, thought: cleanThought([reasoning, textBefore(text, '<tool_call>')].filter(Boolean).join('\n')) };
  }
  // A common slip: the call object without its tags (after the thought, if any).
  const bare = findCallJson(text);
  if (bare && !Array.isArray(bare.value)) {
    return { calls: [readToolCall(bare.value as Record<string, never>, 0)], thought: cleanThought([reasoning, text.slice(0, bare.start)].filter(Boolean).join('\n')) };
  }
  fail(`No <tool_call> block in the output: ${JSON.stringify(text.slice(0, 120))}.`);
}

function toActions(calls: DecodedToolCall[], opts?: FormatOptions): Action[] {
  const out: Action[] = [];
  calls.forEach((c, i) => {
    if (c.name !== TOOL) fail(`Unknown function "${c.name}" in call ${i + 1}; the only function is ${TOOL}.`);
    const action = c.args.action;
    if (typeof action !== 'string') fail(`Call ${i + 1}: "action" must be a string, got ${describe(action)}.`);
    const ctx = `computer_use ${action} (call ${i + 1})`;
    const at = coordinateReader(c.args, ctx, 'rel1000', opts);
    if (readComputerAction(action, c.args, out, { ctx, at, dragHint: DRAG_HINT, pointer: opts?.pointer })) return;
    switch (action) {
      case 'key': {
        const keys = c.args.keys;
        let parts: string[];
        // ["ctrl", "c"] is the convention; ["ctrl+c"] is a frequent variant.
        if (Array.isArray(keys) && keys.length && keys.every((k) => typeof k === 'string')) {
          parts = (keys as string[]).flatMap((k) => (k.length > 1 && k.includes('+') ? k.split('+') : [k]));
        }
        else if (typeof keys === 'string' && keys.trim()) parts = keys.split(/[+\s]+/);
        else fail(`${ctx}: "keys" must be a non-empty array of key names, got ${describe(keys)}.`);
        out.push({ action: 'key', keys: canonicalCombo(parts) });
        break;
      }
      case 'scroll':
      case 'hscroll': {
        const pixels = num(c.args, 'pixels', ctx);
        if (pixels === 0) fail(`${ctx}: "pixels" must not be 0.`);
        const direction = action === 'scroll' ? (pixels > 0 ? 'up' : 'down') : pixels > 0 ? 'right' : 'left';
        const pos = c.args.coordinate !== undefined ? at() : {};
        out.push({ action: 'scroll', ...pos, direction, amount: Math.abs(pixels) });
        break;
      }
      case 'wait': {
        const t = c.args.time === undefined ? 1 : num(c.args, 'time', ctx);
        if (t < 0 || t > 60) fail(`${ctx}: "time" must be between 0 and 60 seconds, got ${t}.`);
        out.push({ action: 'wait', ms: Math.round(t * 1000) });
        break;
      }
      case 'answer':
        out.push({ action: 'answer', text: str(c.args, 'text', ctx) });
        break;
      case 'terminate': {
        const status = c.args.status ?? 'success';
        if (status !== 'success' && status !== 'failure') fail(`${ctx}: "status" must be "success" or "failure", got ${describe(status)}.`);
        out.push({ action: 'terminate', status });
        break;
      }
      default:
        fail(`Unknown computer_use action "${action}" (call ${i + 1}); known: ${ACTIONS.join(', ')}.`);
    }
  });
  return out;
}

function parse(output: ModelOutput, opts?: FormatOptions): ParseResult {
  return parseWith(() => {
    const { calls, thought } = collectCalls(output);
    return { actions: toActions(calls, opts), thought };
  });
}

/** Canonical actions → computer_use argument objects (some actions expand to several calls). */
function toArgs(a: Action): ToolInput[] {
  const pointer = printComputerAction(a, { format: NAME, space: 'rel1000', dragStart: 'mouse_move' });
  if (pointer) return pointer;
  switch (a.action) {
    case 'type':
      return typeSteps<ToolInput>(a, 'rel1000', NAME, {
        click: (x, y) => ({ action: 'left_click', coordinate: [x, y] }),
        selectAll: () => ({ action: 'key', keys: ['ctrl', 'a'] }),
        type: (text) => ({ action: 'type', text }),
        enter: () => ({ action: 'key', keys: ['enter'] }),
      });
    case 'key':
      return combosOf(a.keys).map((combo) => ({ action: 'key', keys: splitCombo(combo).map((k) => styledKey(k, 'lower')) }));
    case 'scroll': {
      const { direction, notches } = scrollNotches(a);
      const n = Math.max(1, Math.round(notches ?? DEFAULT_SCROLL_NOTCHES));
      const args: ToolInput = {
        action: direction === 'up' || direction === 'down' ? 'scroll' : 'hscroll',
        pixels: direction === 'up' || direction === 'right' ? n : -n,
      };
      if (a.x !== undefined && a.y !== undefined) {
        assertSpace(a, 'rel1000', NAME);
        args.coordinate = [a.x, a.y];
      }
      return [args];
    }
    case 'wait':
      return [{ action: 'wait', time: (a.ms ?? 1000) / 1000 }];
    case 'answer':
      return [{ action: 'answer', text: a.text }];
    case 'terminate':
      return [{ action: 'terminate', status: a.status ?? 'success' }];
    default:
      throw new UnsupportedActionError(NAME, a.action, 'Qwen computer_use has no such action');
  }
}

function print(actions: Action[], opts?: FormatOptions & { thought?: string }): string {
  const blocks = actions.flatMap(toArgs).map((args) => `<tool_call>\n${JSON.stringify({ name: TOOL, arguments: args })}\n</tool_call>`);
  return [opts?.thought?.trim(), ...blocks].filter(Boolean).join('\n');
}

export const qwen3vl: PolicyFormat = {
  name: NAME,
  description: 'Qwen3-VL / Qwen2.5-VL computer_use tool calls (<tool_call> text or OpenAI tool_calls), rel1000 coordinates.',
  space: 'rel1000',
  actions: ['click', 'double_click', 'triple_click', 'right_click', 'hover', 'drag', 'type', 'key', 'scroll', 'wait', 'answer', 'terminate'],
  systemPrompt,
  tools: (opts) => [toolDef(opts)],
  parse,
  print,
};
