// Anthropic computer-use tool (`computer_20250124` action set). Based on the public tool definition: one tool named
// `computer` whose input has `action` (key, type, mouse_move, left_click, left_click_drag, right_click, middle_click,
// double_click, triple_click, scroll, wait, screenshot, ...), `coordinate` [x, y] in screenshot pixels,
// `start_coordinate` for drags, `text` (typed text, xdotool key combo such as "ctrl+s", or modifiers held during a
// click), `scroll_direction` + `scroll_amount` (wheel clicks), `duration` (seconds). Coordinates are `image_px`.
//
// Accepted output shapes (JSON-encoded when passed as a string):
//   - Anthropic content blocks `[{type: 'text'}, {type: 'tool_use', name: 'computer', input}]`, a message object
//     `{ role, content: [...] }`, or one tool_use block, or a bare input object `{ "action": ... }`;
//   - a chat assistant message `{ content, tool_calls }` with tool calls named `computer` (OpenAI-compatible gateways);
//   - plain text / text blocks only: Claude ending its turn without a tool call, read as the final answer.
// Several tool_use blocks in one output are accepted and run in order. Text next to tool_use blocks is the thought.
// A `left_click_drag` without `start_coordinate` (computer_20241022 style) takes its start from a `mouse_move` just
// before it in the same output, otherwise it is a parse failure. The pointer actions and `type` are the vocabulary
// Qwen's computer_use shares (computer_tool.ts). screenshot ↔ wait{ms: 0}; cursor_position,
// hold_key, left_mouse_down/up and zoom have no canonical equivalent and are reported as parse failures.
import type { Action } from '../../protocol/action.ts';
import type { ToolDef } from '../client.ts';
import { describe, fail } from './failure.ts';
import { num, sizeNote, str } from './args.ts';
import { canonicalCombo, combosOf, splitCombo, styledKey } from './keys.ts';
import { jsonItems, parseJsonText } from './json-text.ts';
import { assertSpace, functionTool, scrollNotches, typeSteps } from './print-steps.ts';
import { parseCallsOrJson } from './output.ts';
import { coordinateReader, printComputerAction, readComputerAction, type ToolInput } from './computer_tool.ts';
import { UnsupportedActionError, type FormatOptions, type ModelOutput, type ParseResult, type PolicyFormat } from './types.ts';

const NAME = 'anthropic';
const TOOL = 'computer';
const ACTIONS = ['key', 'type', 'mouse_move', 'left_click', 'left_click_drag', 'right_click', 'middle_click', 'double_click', 'triple_click', 'scroll', 'wait', 'screenshot'];

type Block = Record<string, unknown>;

function blocksOf(json: unknown): Block[] {
  const blocks = jsonItems(json, 'content', (o) => {
    if (o.type === 'tool_use' || o.type === 'text') return o;
    return typeof o.action === 'string' ? { type: 'tool_use', name: TOOL, input: o } : undefined;
  });
  return blocks ?? fail(`Unrecognised JSON output: ${JSON.stringify(json).slice(0, 120)}.`);
}

function inputToActions(input: Block, ctx: string, out: Action[], opts?: FormatOptions): void {
  const action = input.action;
  if (typeof action !== 'string') fail(`${ctx}: "action" must be a string, got ${describe(action)}.`);
  const c = `${ctx} ${action}`;
  const at = coordinateReader(input, c, 'image_px', opts);
  if (readComputerAction(action, input, out, { ctx: c, at, dragHint: 'give start_coordinate', modifiersInText: true, pointer: opts?.pointer })) return;
  switch (action) {
    case 'key': {
      const t = str(input, 'text', c).trim();
      if (!t) fail(`${c}: "text" must name a key.`);
      // xdotool syntax: combos joined by '+', several combos separated by spaces.
      const combos = t.split(/\s+/).map((combo) => canonicalCombo(combo === '+' ? ['+'] : combo.split('+')));
      out.push({ action: 'key', keys: combos.length === 1 ? combos[0] : combos });
      return;
    }
    case 'scroll': {
      const dir = input.scroll_direction;
      if (dir !== 'up' && dir !== 'down' && dir !== 'left' && dir !== 'right') {
        fail(`${c}: "scroll_direction" must be up, down, left or right, got ${describe(dir)}.`);
      }
      const amount = input.scroll_amount === undefined ? undefined : num(input, 'scroll_amount', c);
      if (amount !== undefined && amount <= 0) fail(`${c}: "scroll_amount" must be positive.`);
      const pos = input.coordinate !== undefined ? at() : {};
      out.push({ action: 'scroll', ...pos, direction: dir, ...(amount !== undefined ? { amount } : {}) });
      return;
    }
    case 'wait': {
      const secs = input.duration === undefined ? 1 : num(input, 'duration', c);
      if (secs < 0 || secs > 60) fail(`${c}: "duration" must be between 0 and 60 seconds.`);
      out.push({ action: 'wait', ms: Math.round(secs * 1000) });
      return;
    }
    case 'screenshot':
      out.push({ action: 'wait', ms: 0 });
      return;
    default:
      fail(`Unknown or unsupported computer action "${action}"; supported: ${ACTIONS.join(', ')}.`);
  }
}

function parse(output: ModelOutput, opts?: FormatOptions): ParseResult {
  return parseCallsOrJson(output, {
    call: (call, i, out) => {
      if (call.name !== TOOL) fail(`Unknown tool "${call.name}" in call ${i + 1}; the only tool is ${TOOL}.`);
      inputToActions(call.args, `tool call ${i + 1}:`, out, opts);
    },
    json: (json) => {
      const actions: Action[] = [];
      const texts: string[] = [];
      blocksOf(json).forEach((b, i) => {
        if (b.type === 'text') {
          if (typeof b.text === 'string' && b.text.trim()) texts.push(b.text.trim());
        } else if (b.type === 'tool_use') {
          if (b.name !== TOOL) fail(`Unknown tool "${String(b.name)}" in block ${i + 1}; the only tool is ${TOOL}.`);
          const input = typeof b.input === 'string' ? parseJsonText(b.input, `the input of block ${i + 1}`) : b.input;
          if (!input || typeof input !== 'object') fail(`Block ${i + 1}: tool_use without an input object.`);
          inputToActions(input as Block, `block ${i + 1}:`, actions, opts);
        }
        // thinking / redacted_thinking blocks are not part of the action.
      });
      const text = texts.join('\n');
      if (!actions.length) {
        if (!text) fail('The output has neither a tool_use block nor text.');
        return { actions: [{ action: 'answer', text }] };
      }
      return { actions, thought: text || undefined };
    },
  });
}

function toInputs(a: Action): ToolInput[] {
  const pointer = printComputerAction(a, { format: NAME, space: 'image_px', dragStart: 'start_coordinate', modifiersInText: true });
  if (pointer) return pointer;
  switch (a.action) {
    case 'type':
      return typeSteps<ToolInput>(a, 'image_px', NAME, {
        click: (x, y) => ({ action: 'left_click', coordinate: [x, y] }),
        selectAll: () => ({ action: 'key', text: 'ctrl+a' }),
        type: (text) => ({ action: 'type', text }),
        enter: () => ({ action: 'key', text: 'Return' }),
      });
    case 'key':
      return [{ action: 'key', text: combosOf(a.keys).map((combo) => splitCombo(combo).map((k) => styledKey(k, 'xdotool')).join('+')).join(' ') }];
    case 'scroll': {
      const { direction, notches, fromPx } = scrollNotches(a);
      const input: ToolInput = { action: 'scroll' };
      if (a.x !== undefined && a.y !== undefined) {
        assertSpace(a, 'image_px', NAME);
        input.coordinate = [a.x, a.y];
      }
      input.scroll_direction = direction;
      // Pixel sizes become whole wheel clicks; a size given in notches is kept as it is.
      if (notches !== undefined) input.scroll_amount = fromPx ? Math.max(1, Math.round(notches)) : notches;
      return [input];
    }
    case 'wait':
      return [a.ms === 0 ? { action: 'screenshot' } : { action: 'wait', duration: (a.ms ?? 1000) / 1000 }];
    default:
      throw new UnsupportedActionError(NAME, a.action, 'the computer tool has no such action');
  }
}

function print(actions: Action[], opts?: FormatOptions & { thought?: string }): string {
  const answers = actions.filter((a) => a.action === 'answer');
  if (answers.length) {
    if (actions.length > 1) throw new UnsupportedActionError(NAME, 'answer', 'an answer is a text-only turn and cannot follow tool calls');
    return JSON.stringify([{ type: 'text', text: (answers[0] as { text: string }).text }]);
  }
  const blocks: Block[] = [];
  if (opts?.thought?.trim()) blocks.push({ type: 'text', text: opts.thought.trim() });
  let i = 0;
  for (const a of actions) for (const input of toInputs(a)) blocks.push({ type: 'tool_use', id: `toolu_${++i}`, name: TOOL, input });
  return JSON.stringify(blocks);
}

function tools(opts?: FormatOptions): ToolDef[] {
  const description = `Use the mouse and keyboard on the browser shown in the screenshot; coordinates are screenshot pixels.${sizeNote(opts, 'The screen is')}`;
  const properties = {
    action: { type: 'string', enum: ACTIONS },
    coordinate: { type: 'array', items: { type: 'integer' }, description: '[x, y] pixels' },
    start_coordinate: { type: 'array', items: { type: 'integer' }, description: 'drag start [x, y]' },
    text: { type: 'string', description: 'text to type, an xdotool key combo for key (e.g. "ctrl+s"), or modifiers held during left_click' },
    scroll_direction: { type: 'string', enum: ['up', 'down', 'left', 'right'] },
    scroll_amount: { type: 'integer', description: 'wheel clicks' },
    duration: { type: 'number', description: 'seconds, for wait' },
  };
  return [functionTool(TOOL, description, properties, ['action'])];
}

function systemPrompt(opts?: FormatOptions): string {
  const size = sizeNote(opts, 'The screen is');
  return (
    `You are using a web browser through the computer tool to finish the user's task.${size} Look at each new screenshot ` +
    'before acting and use its pixel coordinates. Do not ask for confirmation. When you are done, reply with the final ' +
    'answer as text and no tool call.'
  );
}

export const anthropic: PolicyFormat = {
  name: NAME,
  description: 'Anthropic computer tool (tool_use blocks or chat tool calls named "computer"), image_px coordinates.',
  space: 'image_px',
  // Anthropic's API shrinks images above ~1.15 MP (1280x1000 is 1.28 MP) and Claude would answer in the shrunk
  // space: send the size the model sees (1280x1000 → 1024x800), which is also the display size the tool declares.
  sandbox: { resize: { mode: 'max_side', max_side: 1024 } },
  actions: ['click', 'right_click', 'double_click', 'triple_click', 'hover', 'drag', 'type', 'key', 'scroll', 'wait', 'answer'],
  systemPrompt,
  tools,
  parse,
  print,
};
