// OpenAI computer-use (`computer-use-preview`, Responses API) `computer_call` actions. Based on the public
// Responses API item shapes: `{ type: 'computer_call', call_id, action }` with action types click (button
// left/right/wheel/back/forward), double_click, scroll (x, y, scroll_x, scroll_y in pixels), type, keypress
// (keys pressed together), wait, move, drag (path of points), screenshot. Coordinates are pixels of the screenshot
// (`image_px`). The OpenAI browser sample harness adds function tools `goto` and `back`; they are accepted as
// `function_call` items (or chat tool calls) named goto / back / forward.
//
// Accepted output shapes (the string may be any of these JSON-encoded):
//   - the Responses `output` array (reasoning, message, computer_call, function_call items), or `{ output: [...] }`;
//   - a single computer_call item, or a bare action object `{ "type": "click", ... }`;
//   - a chat assistant message `{ content, tool_calls }` whose tool calls are named `computer` (arguments: the action
//     object, or `{ action: {...} }`) or goto / back / forward — this is how the format runs on chat-completions
//     servers, with the tools from `tools()`;
//   - plain text with no computer_call: the model is talking to the user, which for CUA ends the episode; it is
//     read as the final answer. Text that looks like JSON but does not parse is a (truncated) parse failure.
// Mapping notes: click wheel ↔ click{button: middle}; click back/forward ↔ back/forward; move ↔ hover;
// screenshot ↔ wait{ms: 0} (just observe again); wait ↔ wait{ms: 2000} (OpenAI's samples wait 2 s).
// Several computer_call items in one output are accepted and run in order.
import type { Action } from '../../protocol/action.ts';
import type { ToolDef } from '../client.ts';
import { clip, describe, fail } from './failure.ts';
import { num, pxPoint, sizeNote, str } from './args.ts';
import { canonicalCombo, combosOf, splitCombo, styledKey } from './keys.ts';
import { jsonItems } from './json-text.ts';
import { assertSpace, functionTool, typeSteps } from './print-steps.ts';
import { parseCallsOrJson, readToolCall } from './output.ts';
import { UnsupportedActionError, type FormatOptions, type ModelOutput, type ParseResult, type PolicyFormat } from './types.ts';

const NAME = 'openai_cua';
const WAIT_MS = 2000;
const ACTION_TYPES = ['click', 'double_click', 'scroll', 'type', 'keypress', 'wait', 'move', 'drag', 'screenshot'];
const COMPUTER_TOOL_NAMES = new Set(['computer', 'computer_call', 'computer_use_preview', 'computer_use']);

type Item = Record<string, unknown>;

function itemsOf(json: unknown): Item[] {
  const items = jsonItems(json, 'output', (o) => {
    if (o.type === 'computer_call' || o.type === 'message' || o.type === 'reasoning' || o.type === 'function_call') return o;
    // Any other typed object is taken as a bare action, so an unknown type gets a precise error.
    return typeof o.type === 'string' ? { type: 'computer_call', action: o } : undefined;
  });
  return items ?? fail(`Unrecognised JSON output: ${clip(JSON.stringify(json), 120)}.`);
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c) => (typeof c?.text === 'string' ? c.text : '')).join('');
  return '';
}

function actionToCanonical(act: Item, ctx: string, opts?: FormatOptions): Action {
  const type = act.type;
  const at = () => pxPoint(num(act, 'x', ctx), num(act, 'y', ctx), ctx, opts);
  switch (type) {
    case 'click': {
      const button = act.button ?? 'left';
      if (button === 'back') return { action: 'back' };
      if (button === 'forward') return { action: 'forward' };
      if (button === 'left') return { action: 'click', ...at() };
      if (button === 'right') return { action: 'right_click', ...at() };
      if (button === 'wheel' || button === 'middle') return { action: 'click', ...at(), button: 'middle' };
      fail(`${ctx}: unknown button ${describe(button)}.`);
    }
    case 'double_click':
      return { action: 'double_click', ...at() };
    case 'move':
      return { action: 'hover', ...at() };
    case 'drag': {
      const path = act.path;
      if (!Array.isArray(path) || path.length < 2) fail(`${ctx}: "path" must list at least two {x, y} points, got ${describe(path)}.`);
      const pts = path.map((p, i) => {
        if (!p || typeof p !== 'object') fail(`${ctx}: path point ${i + 1} is not an object.`);
        return pxPoint(num(p as Item, 'x', `${ctx} path[${i}]`), num(p as Item, 'y', `${ctx} path[${i}]`), ctx, opts);
      });
      const first = pts[0];
      const last = pts[pts.length - 1];
      const mid = pts.slice(1, -1).map((p) => ({ x: p.x, y: p.y }));
      return { action: 'drag', ...first, to_x: last.x, to_y: last.y, ...(mid.length ? { path: mid } : {}) };
    }
    case 'scroll': {
      const sx = num(act, 'scroll_x', ctx);
      const sy = num(act, 'scroll_y', ctx);
      if (sx === 0 && sy === 0) fail(`${ctx}: scroll_x and scroll_y are both 0.`);
      return { action: 'scroll', ...at(), ...(sx !== 0 ? { dx: sx } : {}), ...(sy !== 0 ? { dy: sy } : {}) };
    }
    case 'type':
      return { action: 'type', text: str(act, 'text', ctx) };
    case 'keypress': {
      const keys = act.keys;
      if (!Array.isArray(keys) || !keys.length || !keys.every((k) => typeof k === 'string')) {
        fail(`${ctx}: "keys" must be a non-empty array of key names, got ${describe(keys)}.`);
      }
      return { action: 'key', keys: canonicalCombo(keys as string[]) };
    }
    case 'wait':
      return { action: 'wait', ms: WAIT_MS };
    case 'screenshot':
      return { action: 'wait', ms: 0 };
    default:
      fail(`Unknown computer action type ${describe(type)}; known: ${ACTION_TYPES.join(', ')}.`);
  }
}

function functionToCanonical(name: string, args: Item, ctx: string): Action {
  if (name === 'goto') return { action: 'goto', url: str(args, 'url', ctx) };
  if (name === 'back') return { action: 'back' };
  if (name === 'forward') return { action: 'forward' };
  fail(`Unknown function "${name}"; known: computer, goto, back, forward.`);
}

function parse(output: ModelOutput, opts?: FormatOptions): ParseResult {
  let thought: string | undefined;
  return parseCallsOrJson(output, {
    call: (c, i, out) => {
      const ctx = `${c.name} (call ${i + 1})`;
      if (COMPUTER_TOOL_NAMES.has(c.name)) {
        const act = c.args.action && typeof c.args.action === 'object' ? (c.args.action as Item) : c.args;
        out.push(actionToCanonical(act, ctx, opts));
      } else out.push(functionToCanonical(c.name, c.args, ctx));
    },
    json: (json) => {
      const actions: Action[] = [];
      let message = '';
      const thoughts: string[] = [];
      itemsOf(json).forEach((it, i) => {
        const ctx = `output item ${i + 1} (${String(it.type)})`;
        if (it.type === 'reasoning') {
          const s = Array.isArray(it.summary) ? textOf(it.summary) : '';
          if (s) thoughts.push(s);
        } else if (it.type === 'message') message += textOf(it.content);
        else if (it.type === 'computer_call') {
          const list = Array.isArray(it.actions) ? it.actions : [it.action];
          for (const act of list) {
            if (!act || typeof act !== 'object') fail(`${ctx}: the computer_call has no action object.`);
            actions.push(actionToCanonical(act as Item, ctx, opts));
          }
        } else if (it.type === 'function_call') {
          const c = readToolCall({ name: it.name as string, arguments: it.arguments as string }, i);
          actions.push(functionToCanonical(c.name, c.args, ctx));
        } else fail(`${ctx}: unknown item type.`);
      });
      thought = thoughts.join('\n') || undefined;
      if (!actions.length) {
        if (message.trim()) return { actions: [{ action: 'answer', text: message.trim() }], thought };
        fail('The output has neither a computer_call nor a message.');
      }
      if (message.trim()) thought = [thought, message.trim()].filter(Boolean).join('\n');
      return { actions, thought };
    },
    // A reasoning summary read before the failure is still reported.
    thoughtOnFailure: () => thought,
  });
}

function toItems(a: Action, n: () => string, opts?: FormatOptions): Item[] {
  const call = (action: Item): Item => ({ type: 'computer_call', call_id: n(), action, pending_safety_checks: [], status: 'completed' });
  const fn = (name: string, args: Item): Item => ({ type: 'function_call', call_id: n(), name, arguments: JSON.stringify(args) });
  switch (a.action) {
    case 'click':
      assertSpace(a, 'image_px', NAME);
      if (a.modifiers?.length) throw new UnsupportedActionError(NAME, 'click', 'modifier keys cannot be held');
      return [call({ type: 'click', button: a.button === 'middle' ? 'wheel' : (a.button ?? 'left'), x: a.x, y: a.y })];
    case 'right_click':
      assertSpace(a, 'image_px', NAME);
      return [call({ type: 'click', button: 'right', x: a.x, y: a.y })];
    case 'double_click':
      assertSpace(a, 'image_px', NAME);
      return [call({ type: 'double_click', x: a.x, y: a.y })];
    case 'hover':
      assertSpace(a, 'image_px', NAME);
      return [call({ type: 'move', x: a.x, y: a.y })];
    case 'drag':
      assertSpace(a, 'image_px', NAME);
      return [call({ type: 'drag', path: [{ x: a.x, y: a.y }, ...(a.path ?? []), { x: a.to_x, y: a.to_y }] })];
    case 'type':
      return typeSteps(a, 'image_px', NAME, {
        click: (x, y) => call({ type: 'click', button: 'left', x, y }),
        selectAll: () => call({ type: 'keypress', keys: ['CTRL', 'A'] }),
        type: (text) => call({ type: 'type', text }),
        enter: () => call({ type: 'keypress', keys: ['ENTER'] }),
      });
    case 'key':
      return combosOf(a.keys).map((c) => call({ type: 'keypress', keys: splitCombo(c).map((k) => styledKey(k, 'openai')) }));
    case 'scroll': {
      let x = a.x;
      let y = a.y;
      if (x === undefined || y === undefined) {
        if (opts?.width === undefined || opts?.height === undefined) {
          throw new UnsupportedActionError(NAME, 'scroll', 'a CUA scroll needs a point; give x/y or the screenshot size');
        }
        [x, y] = [Math.round(opts.width / 2), Math.round(opts.height / 2)];
      } else assertSpace(a, 'image_px', NAME);
      let sx = a.dx ?? 0;
      let sy = a.dy ?? 0;
      if (a.direction) {
        // A viewport fraction is taken on a 1000 px viewport (Grove's default height).
        const px = (a.amount ?? 5) * (a.unit === 'px' ? 1 : a.unit === 'viewport' ? 1000 : 100);
        if (a.direction === 'down') sy = px;
        else if (a.direction === 'up') sy = -px;
        else if (a.direction === 'right') sx = px;
        else sx = -px;
      }
      return [call({ type: 'scroll', x, y, scroll_x: sx, scroll_y: sy })];
    }
    case 'wait':
      return [call(a.ms === 0 ? { type: 'screenshot' } : { type: 'wait' })];
    case 'back':
      return [fn('back', {})];
    case 'forward':
      return [fn('forward', {})];
    case 'goto':
      return [fn('goto', { url: a.url })];
    case 'answer':
      return [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: a.text }] }];
    default:
      throw new UnsupportedActionError(NAME, a.action, 'the computer tool has no such action');
  }
}

function print(actions: Action[], opts?: FormatOptions & { thought?: string }): string {
  let i = 0;
  const n = () => `call_${++i}`;
  const items: Item[] = [];
  if (opts?.thought?.trim()) items.push({ type: 'reasoning', summary: [{ type: 'summary_text', text: opts.thought.trim() }] });
  for (const a of actions) items.push(...toItems(a, n, opts));
  return JSON.stringify(items);
}

function tools(opts?: FormatOptions): ToolDef[] {
  const description = `Act on the browser with mouse and keyboard. x and y are pixels of the screenshot, origin top-left.${sizeNote(opts, 'The screenshot is')}`;
  const action = {
    type: 'object',
    required: ['type'],
    properties: {
      type: { type: 'string', enum: ACTION_TYPES },
      x: { type: 'number' },
      y: { type: 'number' },
      button: { type: 'string', enum: ['left', 'right', 'wheel', 'back', 'forward'] },
      scroll_x: { type: 'number', description: 'pixels, > 0 scrolls right' },
      scroll_y: { type: 'number', description: 'pixels, > 0 scrolls down' },
      text: { type: 'string' },
      keys: { type: 'array', items: { type: 'string' }, description: 'keys pressed together, e.g. ["CTRL", "L"]' },
      path: { type: 'array', items: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } } } },
    },
  };
  return [
    functionTool('computer', description, { action }, ['action']),
    functionTool('goto', 'Open a URL in the current tab.', { url: { type: 'string' } }, ['url']),
    functionTool('back', 'Go back to the previous page.', {}),
  ];
}

function systemPrompt(opts?: FormatOptions): string {
  const size = sizeNote(opts, 'Screenshots are');
  return (
    `You control a web browser through the computer tool to carry out the user's task.${size} Use pixel coordinates of the ` +
    'latest screenshot. Act without asking for confirmation. When the task is complete, stop calling tools and reply ' +
    'with the final answer as plain text.'
  );
}

export const openaiCua: PolicyFormat = {
  name: NAME,
  description: 'OpenAI computer-use computer_call actions (Responses items or chat tool calls), image_px coordinates.',
  space: 'image_px',
  actions: ['click', 'right_click', 'double_click', 'hover', 'drag', 'type', 'key', 'scroll', 'wait', 'back', 'forward', 'goto', 'answer'],
  systemPrompt,
  tools,
  parse,
  print,
};
