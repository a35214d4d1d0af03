// UI-TARS text actions. Based on the public bytedance/UI-TARS prompt conventions: the model writes
// `Thought: ...` then `Action: name(arg='value', ...)` with actions click / left_double / right_single / drag /
// hotkey / type / scroll / wait / finished / call_user. Points are written either UI-TARS 1.0 style,
// `start_box='<|box_start|>(x1,y1)<|box_end|>'` (a box `(x1,y1,x2,y2)` is reduced to its centre), or UI-TARS-1.5
// style, `point='<point>x y</point>'`; both are parsed, `print` writes the 1.5 style unless `variant: 'box'`.
// Coordinates, two conventions, one format name each (so the choice travels with every step request):
// - `uitars` (UI-TARS 1.0): a 0..1000 grid over the screenshot (`rel1000`).
// - `uitars15` (UI-TARS-1.5): absolute pixels of the image as the model saw it, i.e. the screenshot after Qwen2.5-VL's
//   smart resize with UI-TARS' own constants (factor 28, 100·28² ≤ pixels ≤ 16384·28²), exactly as
//   bytedance/UI-TARS codes/ui_tars/action_parser.py divides them by the smart-resized size. Parsed points are mapped
//   back onto the screenshot as returned (`image_px`), so the parser needs the screenshot size.
// `type(content='…\n')`: a trailing newline means "submit" (press Enter), per the UI-TARS convention.
// Several calls after `Action:` (one per line) are accepted and run in order, as UI-TARS' own parser allows.
// `wait()` is a 5 s pause (the documented UI-TARS meaning); `finished(content='…')` with content is an answer,
// without content a successful termination; `call_user()` ends the episode as a failure (no human in the loop).
import type { Action } from '../../protocol/action.ts';
import { fail } from './failure.ts';
import { divisorOf, pxPoint, relPoint } from './args.ts';
import { canonicalCombo } from './keys.ts';
import { cleanThought, decodeOutput, parseWith } from './output.ts';
import { print } from './uitars-print.ts';
import { absoluteSizes } from './uitars-space.ts';
import { readCalls, WAIT_MS, type Call } from './uitars-syntax.ts';
import { type FormatOptions, type ModelOutput, type ParseResult, type PolicyFormat } from './types.ts';

const NAME = 'uitars';
const ACTIONS: PolicyFormat['actions'] = ['click', 'double_click', 'right_click', 'hover', 'drag', 'type', 'key', 'scroll', 'wait', 'answer', 'terminate'];
const KNOWN = ['click', 'left_single', 'left_double', 'right_single', 'hover', 'mouse_move', 'drag', 'select', 'hotkey', 'press', 'type', 'scroll', 'wait', 'finished', 'call_user'];

/** A point from any UI-TARS spelling: <point>x y</point>, <|box_start|>(x,y)<|box_end|>, (x1,y1,x2,y2), [x1, y1, x2, y2]. */
function pointOf(v: string, ctx: string, opts: FormatOptions | undefined, abs: boolean) {
  const nums = (v.match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number);
  let x: number;
  let y: number;
  if (nums.length === 2) [x, y] = nums;
  else if (nums.length === 4) [x, y] = [(nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2];
  else fail(`${ctx}: cannot read a point from ${JSON.stringify(v)} (expected 2 or 4 numbers).`);
  if (!abs) return relPoint(x, y, ctx, opts);
  const { shot, seen } = absoluteSizes(opts, ctx);
  if (x < 0 || y < 0 || x > seen.width || y > seen.height) {
    fail(`${ctx}: coordinate (${x}, ${y}) is outside the ${seen.width}x${seen.height} image the model saw.`);
  }
  const r2 = (n: number) => Math.round(n * 100) / 100;
  return pxPoint(r2((x * shot.width) / seen.width), r2((y * shot.height) / seen.height), ctx, opts);
}

function pick(args: Record<string, string>, keys: string[]): string | undefined {
  for (const k of keys) if (args[k] !== undefined) return args[k];
  return undefined;
}

function toAction(c: Call, n: number, opts: FormatOptions | undefined, abs: boolean): Action {
  const ctx = `${c.name} (action ${n})`;
  const start = () => {
    const v = pick(c.args, ['start_box', 'point', 'start_point']);
    if (v === undefined) fail(`${ctx}: missing start_box / point.`);
    return pointOf(v, ctx, opts, abs);
  };
  switch (c.name) {
    case 'click':
    case 'left_single':
      return { action: 'click', ...start() };
    case 'left_double':
      return { action: 'double_click', ...start() };
    case 'right_single':
      return { action: 'right_click', ...start() };
    case 'hover':
    case 'mouse_move':
      return { action: 'hover', ...start() };
    case 'drag':
    case 'select': {
      const from = start();
      const endV = pick(c.args, ['end_box', 'end_point']);
      if (endV === undefined) fail(`${ctx}: missing end_box / end_point.`);
      const to = pointOf(endV, ctx, opts, abs);
      return { action: 'drag', ...from, to_x: to.x, to_y: to.y };
    }
    case 'hotkey':
    case 'press': {
      const k = pick(c.args, ['key', 'keys', 'hotkey']);
      if (!k?.trim()) fail(`${ctx}: missing key.`);
      return { action: 'key', keys: canonicalCombo(k.trim().split(/[\s+]+/)) };
    }
    case 'type': {
      const content = c.args.content;
      if (content === undefined) fail(`${ctx}: missing content.`);
      if (content.endsWith('\n')) return { action: 'type', text: content.slice(0, -1), submit: true };
      return { action: 'type', text: content };
    }
    case 'scroll': {
      const dir = (c.args.direction ?? '').trim().toLowerCase();
      if (!['up', 'down', 'left', 'right'].includes(dir)) fail(`${ctx}: direction must be up, down, left or right, got ${JSON.stringify(c.args.direction ?? '')}.`);
      const pos = pick(c.args, ['start_box', 'point', 'start_point']);
      return { action: 'scroll', ...(pos !== undefined ? pointOf(pos, ctx, opts, abs) : {}), direction: dir as 'up' };
    }
    case 'wait':
      return { action: 'wait', ms: WAIT_MS };
    case 'finished': {
      const content = c.args.content ?? '';
      return content.trim() ? { action: 'answer', text: content } : { action: 'terminate', status: 'success' };
    }
    case 'call_user':
      return { action: 'terminate', status: 'failure' };
    default:
      fail(`Unknown UI-TARS action "${c.name}"; known: ${KNOWN.join(', ')}.`);
  }
}

/** Splits "Thought: … Action: …" (labels may be bold or absent). */
function sections(text: string): { thought?: string; action: string } {
  const m = /(?:^|\n)\s*\**\s*Action\s*\**\s*:/i.exec(text);
  if (!m) {
    // Grounding-only prompts make UI-TARS answer with the bare call.
    if (/^[A-Za-z_]+\s*\(/.test(text.trim())) return { action: text.trim() };
    fail('No "Action:" in the output.');
  }
  const before = text.slice(0, m.index);
  const t = /\**\s*Thought\s*\**\s*:/i.exec(before);
  const thought = cleanThought((t ? before.slice(t.index + t[0].length) : before).replace(/^\s*Reflection\s*:.*$/im, ''));
  // `**Action:**` (markdown bold) leaves stray asterisks before the call.
  return { thought, action: text.slice(m.index + m[0].length).replace(/^[\s*]+/, '').trim() };
}

function parse(output: ModelOutput, opts: FormatOptions | undefined, abs: boolean): ParseResult {
  let thought: string | undefined;
  return parseWith(
    () => {
      const d = decodeOutput(output);
      const text = d.content;
      if (!text.trim()) fail('Empty output: expected "Thought: … Action: …".');
      const s = sections(text);
      thought = s.thought;
      if (!s.action) fail('The output has an "Action:" label but no action after it.');
      // Stray backticks from markdown fences are not part of the call syntax.
      const calls = readCalls(s.action.replace(/```[a-z]*|```/g, '\n'));
      return { actions: calls.map((c, i) => toAction(c, i + 1, opts, abs)), thought };
    },
    () => thought,
  );
}

function systemPrompt(opts: FormatOptions | undefined, abs: boolean): string {
  const d = divisorOf(opts);
  const coords = abs
    ? '- x and y are pixels of the screenshot as you see it ((0, 0) is the top-left corner).'
    : `- x and y are on a 0..${d} grid over the screenshot ((0, 0) top-left, (${d}, ${d}) bottom-right).`;
  return [
    'You are a GUI agent operating a web browser. You receive the task, your previous actions and the current screenshot, and you decide the single next step.',
    '',
    '## Reply format',
    'Thought: <what you see, a short plan, and the next step with its target element>',
    'Action: <one action from the list below>',
    '',
    '## Actions',
    "click(point='<point>x y</point>')",
    "left_double(point='<point>x y</point>')",
    "right_single(point='<point>x y</point>')",
    "drag(start_point='<point>x1 y1</point>', end_point='<point>x2 y2</point>')",
    "hotkey(key='ctrl c')  # lowercase key names separated by spaces, at most 3 keys",
    "type(content='text')  # escape ' \" and newlines with a backslash; end with \\n to submit",
    "scroll(point='<point>x y</point>', direction='down')  # up, down, left or right",
    'wait()  # pause 5 seconds, then look again',
    "finished(content='answer')  # the task is done; put the requested answer in content",
    'call_user()  # the task cannot be completed',
    '',
    '## Notes',
    coords,
    `- Write the Thought in ${opts?.language ?? 'English'}.`,
  ].join('\n');
}

export const uitars: PolicyFormat = {
  name: NAME,
  description: 'UI-TARS 1.0 "Thought: … Action: click(start_box=…)" text actions (box and point syntax), rel1000 coordinates.',
  space: 'rel1000',
  actions: ACTIONS,
  systemPrompt: (opts) => systemPrompt(opts, false),
  parse: (output, opts) => parse(output, opts, false),
  print: (actions, opts) => print(actions, opts, false),
};

export const uitars15: PolicyFormat = {
  name: 'uitars15',
  description: "UI-TARS-1.5 text actions with absolute pixels of the smart-resized screenshot (as UI-TARS' own parser reads them), image_px coordinates.",
  space: 'image_px',
  actions: ACTIONS,
  systemPrompt: (opts) => systemPrompt(opts, true),
  parse: (output, opts) => parse(output, opts, true),
  print: (actions, opts) => print(actions, opts, true),
};
