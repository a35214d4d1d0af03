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
// before it in the same output, otherwise it is a parse failure. screenshot ↔ wait{ms: 0}; cursor_position,
// hold_key, left_mouse_down/up and zoom have no canonical equivalent and are reported as parse failures.
import type { Action } from '../../protocol/action.ts';
import type { ToolDef } from '../client.ts';
import {
  assertSpace,
  canonicalCombo,
  canonicalKey,
  combosOf,
  decodeOutput,
  describe,
  fail,
  num,
  parseJsonText,
  parseWith,
  point,
  pxPoint,
  readToolCall,
  splitCombo,
  str,
  styledKey,
} from './common.ts';
import { UnsupportedActionError, type FormatOptions, type ModelOutput, type ParseResult, type PolicyFormat } from './types.ts';

const NAME = 'anthropic';
const TOOL = 'computer';
const ACTIONS = ['key', 'type', 'mouse_move', 'left_click', 'left_click_drag', 'right_click', 'middle_click', 'double_click', 'triple_click', 'scroll', 'wait', 'screenshot'];
const MODIFIERS = { Alt: 'Alt', Control: 'Control', Meta: 'Meta', Shift: 'Shift' } as const;

type Block = Record<string, unknown>;

function blocksOf(json: unknown): Block[] {
  if (Array.isArray(json)) return json.filter((b): b is Block => !!b && typeof b === 'object');
  if (json && typeof json === 'object') {
    const o = json as Block;
    if (Array.isArray(o.content)) return blocksOf(o.content);
    if (o.type === 'tool_use' || o.type === 'text') return [o];
    if (typeof o.action === 'string') return [{ type: 'tool_use', name: TOOL, input: o }];
  }
  fail(`Unrecognised JSON output: ${JSON.stringify(json).slice(0, 120)}.`);
}

function inputToActions(input: Block, ctx: string, out: Action[], opts?: FormatOptions): void {
  const action = input.action;
  if (typeof action !== 'string') fail(`${ctx}: "action" must be a string, got ${describe(action)}.`);
  const c = `${ctx} ${action}`;
  const at = (key = 'coordinate') => {
    const [x, y] = point(input, key, c);
    return pxPoint(x, y, c, opts);
  };
  const mods = (): (keyof typeof MODIFIERS)[] | undefined => {
    if (input.text === undefined || input.text === null || input.text === '') return undefined;
    if (typeof input.text !== 'string') fail(`${c}: "text" (held modifiers) must be a string, got ${describe(input.text)}.`);
    return input.text.split('+').map((k) => {
      const m = canonicalKey(k.trim());
      if (!(m in MODIFIERS)) fail(`${c}: "${k}" is not a modifier key (shift, ctrl, alt, super).`);
      return m as keyof typeof MODIFIERS;
    });
  };
  switch (action) {
    case 'left_click': {
      const m = mods();
      out.push({ action: 'click', ...at(), ...(m ? { modifiers: m } : {}) });
      return;
    }
    case 'right_click':
      out.push({ action: 'right_click', ...at() });
      return;
    case 'middle_click':
      out.push({ action: 'click', ...at(), button: 'middle' });
      return;
    case 'double_click':
      out.push({ action: 'double_click', ...at() });
      return;
    case 'triple_click':
      out.push({ action: 'triple_click', ...at() });
      return;
    case 'mouse_move':
      out.push({ action: 'hover', ...at() });
      return;
    case 'left_click_drag': {
      const to = at();
      let from: { x: number; y: number; space: 'image_px' };
      if (input.start_coordinate !== undefined) from = at('start_coordinate');
      else {
        const prev = out[out.length - 1];
        if (prev?.action !== 'hover') fail(`${c}: the drag start is unknown; give start_coordinate.`);
        out.pop();
        from = { x: prev.x, y: prev.y, space: 'image_px' };
      }
      out.push({ action: 'drag', ...from, to_x: to.x, to_y: to.y });
      return;
    }
    case 'type':
      out.push({ action: 'type', text: str(input, 'text', c) });
      return;
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
  let thought: string | undefined;
  return parseWith(
    () => {
      const d = decodeOutput(output);
      const actions: Action[] = [];
      if (d.toolCalls?.length) {
        d.toolCalls.forEach((tc, i) => {
          const call = readToolCall(tc, i);
          if (call.name !== TOOL) fail(`Unknown tool "${call.name}" in call ${i + 1}; the only tool is ${TOOL}.`);
          inputToActions(call.args, `tool call ${i + 1}:`, actions, opts);
        });
        thought = d.content.trim() || undefined;
        return { actions, thought };
      }
      if (d.json === undefined) {
        const t = d.content.trim();
        if (!t) fail('Empty output.');
        if (t.startsWith('{') || t.startsWith('[')) parseJsonText(t, 'the output');
        return { actions: [{ action: 'answer', text: t }] };
      }
      const texts: string[] = [];
      blocksOf(d.json).forEach((b, i) => {
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
      thought = text || undefined;
      return { actions, thought };
    },
    () => thought,
  );
}

function toInputs(a: Action): Block[] {
  const c = (x: number, y: number) => [x, y];
  switch (a.action) {
    case 'click': {
      assertSpace(a, 'image_px', NAME);
      const name = a.button === 'right' ? 'right_click' : a.button === 'middle' ? 'middle_click' : 'left_click';
      const input: Block = { action: name, coordinate: c(a.x, a.y) };
      if (a.modifiers?.length) {
        if (name !== 'left_click') throw new UnsupportedActionError(NAME, 'click', 'modifiers only with the left button');
        input.text = a.modifiers.map((m) => styledKey(m, 'xdotool')).join('+');
      }
      return [input];
    }
    case 'right_click':
    case 'double_click':
    case 'triple_click':
      assertSpace(a, 'image_px', NAME);
      return [{ action: a.action, coordinate: c(a.x, a.y) }];
    case 'hover':
      assertSpace(a, 'image_px', NAME);
      return [{ action: 'mouse_move', coordinate: c(a.x, a.y) }];
    case 'drag':
      assertSpace(a, 'image_px', NAME);
      if (a.path?.length) throw new UnsupportedActionError(NAME, 'drag', 'intermediate path points are not expressible');
      return [{ action: 'left_click_drag', start_coordinate: c(a.x, a.y), coordinate: c(a.to_x, a.to_y) }];
    case 'type': {
      const out: Block[] = [];
      if (a.x !== undefined && a.y !== undefined) {
        assertSpace(a, 'image_px', NAME);
        out.push({ action: 'left_click', coordinate: c(a.x, a.y) });
      }
      if (a.clear) out.push({ action: 'key', text: 'ctrl+a' });
      out.push({ action: 'type', text: a.text });
      if (a.submit) out.push({ action: 'key', text: 'Return' });
      return out;
    }
    case 'key':
      return [{ action: 'key', text: combosOf(a.keys).map((combo) => splitCombo(combo).map((k) => styledKey(k, 'xdotool')).join('+')).join(' ') }];
    case 'scroll': {
      let dir = a.direction;
      let amount = a.amount !== undefined ? (a.unit === 'px' ? Math.max(1, Math.round(a.amount / 100)) : a.amount) : undefined;
      if (!dir) {
        if (a.dy) [dir, amount] = [a.dy > 0 ? 'down' : 'up', Math.max(1, Math.round(Math.abs(a.dy) / 100))];
        else if (a.dx) [dir, amount] = [a.dx > 0 ? 'right' : 'left', Math.max(1, Math.round(Math.abs(a.dx) / 100))];
        else dir = 'down';
      }
      const input: Block = { action: 'scroll' };
      if (a.x !== undefined && a.y !== undefined) {
        assertSpace(a, 'image_px', NAME);
        input.coordinate = c(a.x, a.y);
      }
      input.scroll_direction = dir;
      if (amount !== undefined) input.scroll_amount = amount;
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
  const size = opts?.width && opts?.height ? ` The screen is ${opts.width}x${opts.height} pixels.` : '';
  return [
    {
      type: 'function',
      function: {
        name: TOOL,
        description: `Use the mouse and keyboard on the browser shown in the screenshot; coordinates are screenshot pixels.${size}`,
        parameters: {
          type: 'object',
          required: ['action'],
          properties: {
            action: { type: 'string', enum: ACTIONS },
            coordinate: { type: 'array', items: { type: 'integer' }, description: '[x, y] pixels' },
            start_coordinate: { type: 'array', items: { type: 'integer' }, description: 'drag start [x, y]' },
            text: { type: 'string', description: 'text to type, an xdotool key combo for key (e.g. "ctrl+s"), or modifiers held during left_click' },
            scroll_direction: { type: 'string', enum: ['up', 'down', 'left', 'right'] },
            scroll_amount: { type: 'integer', description: 'wheel clicks' },
            duration: { type: 'number', description: 'seconds, for wait' },
          },
        },
      },
    },
  ];
}

function systemPrompt(opts?: FormatOptions): string {
  const size = opts?.width && opts?.height ? ` The screen is ${opts.width}x${opts.height} pixels.` : '';
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
  actions: ['click', 'right_click', 'double_click', 'triple_click', 'hover', 'drag', 'type', 'key', 'scroll', 'wait', 'answer'],
  systemPrompt,
  tools,
  parse,
  print,
};
