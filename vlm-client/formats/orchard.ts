// Orchard-GUI, as published in MSR-Orchard/slime examples/orchard_gui: the tool list (env/prompts/tool_list.json),
// the system prompt (env/prompts/system_prompt.md) and the executor (env/web_env.py). The tool names, argument
// names, types, enums and defaults below are those facts; the descriptions and the prompt text are our own.
//
// Output, as the published prompt asks: `<think>…</think>`, then one or more
//   <tool_call>
//   {"name": "click", "arguments": {"point_2d": [512, 88]}}
//   </tool_call>
// blocks, executed top to bottom (the Qwen chat-template tool-call form the published parser reads; "parameters" is
// accepted for "arguments", as its regex fallback does). Also accepted: OpenAI `tool_calls` (server-side parsing), and
// — a common slip — the call object or a list of them without tags, found after the thought (a bracket inside the
// thought is not taken for the list).
//
// Semantics, as web_env.py executes them (resize_scale 1000, dpr 1):
//   click{point_2d, clicks=1, button=left}   click_count 1..3 → click / double_click / triple_click
//   write{message}         Control+A, Backspace, then type: the field is cleared first (canonical type with clear)
//   press_keys{keys, is_hotkey=false, presses=1}   hotkey: the keys together, `presses` times; else each key
//                          `presses` times in turn; key names as its validate_and_correct_key (unknown ones dropped,
//                          none left is a failure)
//   scroll{direction=down, amount=0.5, point_2d?}   amount is a fraction of the viewport (height for up/down, width
//                          for left/right), clamped to 0..1; with point_2d the element there scrolls
//   wait{seconds=3}  done{response}  goto_url{url}  go_back{}  hover{point_2d}  drag{start_point_2d, end_point_2d}
//   new_tab{} (blank)  switch_tab{tab_index}  close_tab{} (the current one)
// Coordinates are on a 0..1000 grid over the viewport (`rel1000`: web_env divides by resize_scale 1000). The
// environment defaults are Orchard's: a 1280×1000 viewport at DPR 1 and PNG screenshots (`sandbox`).
import type { Action } from '../../protocol/action.ts';
import type { Observation, ResolvedAction } from '../../protocol/observation.ts';
import type { ToolDef } from '../client.ts';
import {
  assertSpace,
  canonicalKey,
  cleanThought,
  combosOf,
  decodeOutput,
  describe,
  divisorOf,
  fail,
  findCallJson,
  functionTool,
  parseJsonText,
  parseWith,
  point,
  readToolCall,
  relPoint,
  splitCombo,
  splitReasoning,
  str,
  taggedBlocks,
  textBefore,
  type DecodedToolCall,
} from './common.ts';
import { UnsupportedActionError, type FormatOptions, type ModelOutput, type ParseResult, type PolicyFormat } from './types.ts';

const NAME = 'orchard';

// ---------------------------------------------------------------------------------------------------------
// Tools (names and argument schema as tool_list.json)

const pointArg = (description: string, item: 'number' | 'integer' = 'number') => ({
  type: 'array',
  items: { type: item },
  minItems: 2,
  maxItems: 2,
  description,
});

function toolDefs(d: number): ToolDef[] {
  const grid = `on the 0..${d} grid over the screenshot ([0, 0] top-left, [${d}, ${d}] bottom-right)`;
  return [
    functionTool(
      'click',
      'Click the mouse at a point of the page.',
      {
        point_2d: pointArg(`[x, y] of the point to click, ${grid}.`),
        clicks: { type: 'integer', description: 'How many clicks in a row: 1 for a click, 2 for a double click.', default: 1 },
        button: { type: 'string', enum: ['left', 'right', 'middle'], description: 'Which mouse button.', default: 'left' },
      },
      ['point_2d'],
    ),
    functionTool(
      'write',
      'Type text on the keyboard into the focused field. The field is emptied first (Ctrl+A, Backspace), so click the field before writing.',
      { message: { type: 'string', description: 'The text to type.' } },
      ['message'],
    ),
    functionTool(
      'press_keys',
      'Press keys or a shortcut: for navigation inside the page, shortcuts, or single key presses such as Enter.',
      {
        keys: {
          type: 'array',
          items: { type: 'string' },
          description:
            'Keys to press. Modifiers: "Alt", "Control", "Meta", "Shift"; actions: "Enter", "Tab", "Space", "Backspace", "Delete", ' +
            '"Escape"; navigation: "ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown"; ' +
            'letters "a"-"z", digits "0"-"9", "F1"-"F12".',
        },
        is_hotkey: { type: 'boolean', description: 'true: hold all keys together (e.g. ["Control", "c"]); false: press them one after another.', default: false },
        presses: { type: 'integer', description: 'How many times to repeat the press.', default: 1 },
      },
      ['keys'],
    ),
    functionTool(
      'scroll',
      'Scroll the page, or with point_2d the scrollable element at that point (a side panel, a dialog, a list).',
      {
        direction: { type: 'string', enum: ['up', 'down', 'left', 'right'], description: 'Scroll direction.', default: 'down' },
        amount: { type: 'number', minimum: 0.0, maximum: 1.0, description: 'How far, as a fraction of the visible page (0.5 = half a screen).', default: 0.5 },
        point_2d: pointArg(`Optional [x, y] of the element to scroll, ${grid}; without it the page scrolls.`),
      },
    ),
    functionTool('wait', 'Wait a few seconds, e.g. for a page to load or an animation to end.', {
      seconds: { type: 'integer', description: 'Seconds to wait.', default: 3 },
    }),
    functionTool(
      'done',
      'Finish the task with the final answer: when it is done, when it cannot be done, or when a CAPTCHA or bot check blocks the way.',
      { response: { type: 'string', description: 'The answer or result, or why the task could not be completed, with the relevant details.' } },
      ['response'],
    ),
    functionTool('goto_url', 'Open a URL in the current tab.', { url: { type: 'string', description: 'The full URL, e.g. "https://www.example.com".' } }, ['url']),
    functionTool('go_back', "Go back to the previous page of the tab's history.", {}),
    functionTool(
      'drag',
      'Drag with the left mouse button from one point to another.',
      {
        start_point_2d: pointArg(`[x, y] where the drag starts, ${grid}.`),
        end_point_2d: pointArg(`[x, y] where it ends, ${grid}.`),
        steps: { type: 'integer', description: 'Intermediate mouse moves (10-20 for an ordinary drag).', default: 10 },
      },
      ['start_point_2d', 'end_point_2d'],
    ),
    functionTool(
      'hover',
      'Move the mouse to a point without clicking: shows hover menus and tooltips.',
      { point_2d: pointArg(`[x, y] to move to, ${grid}.`, 'integer') },
      ['point_2d'],
    ),
    functionTool('new_tab', 'Open a new blank tab (then use goto_url in it).', {}),
    functionTool('switch_tab', 'Make another tab the current one.', { tab_index: { type: 'integer', description: 'Index of the tab, from 0.' } }, ['tab_index']),
    functionTool('close_tab', 'Close the current tab; the nearest remaining tab becomes current.', {}),
  ];
}

const TOOL_NAMES = ['click', 'write', 'press_keys', 'scroll', 'wait', 'done', 'goto_url', 'go_back', 'drag', 'hover', 'new_tab', 'switch_tab', 'close_tab'];

// ---------------------------------------------------------------------------------------------------------
// Keys, as web_env.py's validate_and_correct_key resolves them (names to Playwright's; unknown → dropped)

const PLAYWRIGHT_KEYS = new Set([
  'Alt', 'Control', 'Meta', 'Shift', 'Enter', 'Tab', 'Space', 'Backspace', 'Delete', 'Escape', 'Insert',
  'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown',
  ...Array.from({ length: 24 }, (_, i) => `F${i + 1}`),
  ...Array.from({ length: 10 }, (_, i) => `Numpad${i}`),
  'NumpadAdd', 'NumpadSubtract', 'NumpadMultiply', 'NumpadDivide', 'NumpadDecimal', 'NumpadEnter',
  'PrintScreen', 'ScrollLock', 'Pause', 'CapsLock', 'NumLock', 'AltLeft', 'AltRight', 'ControlLeft', 'ControlRight',
  'ShiftLeft', 'ShiftRight', 'MetaLeft', 'MetaRight', 'Backquote', 'Minus', 'Equal', 'Backslash', 'BracketLeft',
  'BracketRight', 'Semicolon', 'Quote', 'Comma', 'Period', 'Slash',
]);
/** pyautogui spellings web_env.py also maps (beyond common.ts' aliases). */
const EXTRA_KEYS: Record<string, string> = {
  win: 'Meta', winleft: 'MetaLeft', winright: 'MetaRight', ctrlleft: 'ControlLeft', ctrlright: 'ControlRight',
  altleft: 'AltLeft', altright: 'AltRight', shiftleft: 'ShiftLeft', shiftright: 'ShiftRight', optionleft: 'AltLeft',
  optionright: 'AltRight', pgup: 'PageUp', pgdn: 'PageDown', prtsc: 'PrintScreen', prtscr: 'PrintScreen',
  prntscrn: 'PrintScreen', printscreen: 'PrintScreen', scrolllock: 'ScrollLock', numlock: 'NumLock', pause: 'Pause',
};

function orchardKey(k: string): string | undefined {
  if (k.length === 1) return k;
  const lower = k.toLowerCase();
  if (EXTRA_KEYS[lower]) return EXTRA_KEYS[lower];
  const numpad = /^num([0-9])$/.exec(lower);
  if (numpad) return `Numpad${numpad[1]}`;
  const c = canonicalKey(k);
  if (PLAYWRIGHT_KEYS.has(c)) return c;
  for (const name of PLAYWRIGHT_KEYS) if (name.toLowerCase() === lower) return name;
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Parsing

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

function parse(output: ModelOutput, opts?: FormatOptions): ParseResult {
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

// ---------------------------------------------------------------------------------------------------------
// Printing (what the published prompt teaches: <think>, then one <tool_call> block per call)

type Call = { name: string; arguments: Record<string, unknown> };

/** The viewport a px/notch scroll is converted on (Orchard's default). */
const VIEWPORT = { width: 1280, height: 1000 };

function toCalls(a: Action): Call[] {
  const call = (name: string, args: Record<string, unknown> = {}): Call => ({ name, arguments: args });
  const pt = (p: { x: number; y: number }) => [p.x, p.y];
  switch (a.action) {
    case 'click':
      assertSpace(a, 'rel1000', NAME);
      if (a.modifiers?.length) throw new UnsupportedActionError(NAME, 'click', 'modifier keys cannot be held during a click');
      return [call('click', { point_2d: pt(a), ...(a.button && a.button !== 'left' ? { button: a.button } : {}) })];
    case 'double_click':
    case 'triple_click':
      assertSpace(a, 'rel1000', NAME);
      return [call('click', { point_2d: pt(a), clicks: a.action === 'double_click' ? 2 : 3 })];
    case 'right_click':
      assertSpace(a, 'rel1000', NAME);
      return [call('click', { point_2d: pt(a), button: 'right' })];
    case 'hover':
      assertSpace(a, 'rel1000', NAME);
      return [call('hover', { point_2d: pt(a) })];
    case 'drag':
      assertSpace(a, 'rel1000', NAME);
      if (a.path?.length) throw new UnsupportedActionError(NAME, 'drag', 'intermediate path points are not expressible');
      return [call('drag', { start_point_2d: pt(a), end_point_2d: [a.to_x, a.to_y] })];
    case 'type': {
      // write always empties the field first; a type without `clear` is written the same way.
      const out: Call[] = [];
      if (a.x !== undefined && a.y !== undefined) {
        assertSpace(a, 'rel1000', NAME);
        out.push(call('click', { point_2d: [a.x, a.y] }));
      }
      out.push(call('write', { message: a.text }));
      if (a.submit) out.push(call('press_keys', { keys: ['Enter'] }));
      return out;
    }
    case 'key': {
      const combos = combosOf(a.keys).map((combo) => splitCombo(combo).map(canonicalKey));
      // Single keys in a row are one sequential press_keys; a combination is a hotkey call of its own.
      if (combos.every((k) => k.length === 1)) return [call('press_keys', { keys: combos.map((k) => k[0]) })];
      return combos.map((keys) => call('press_keys', keys.length > 1 ? { keys, is_hotkey: true } : { keys }));
    }
    case 'scroll': {
      let direction = a.direction;
      let fraction: number | undefined;
      if (a.unit === 'viewport') fraction = a.amount;
      else if (a.amount !== undefined) fraction = (a.amount * (a.unit === 'px' ? 1 : 100)) / (direction === 'left' || direction === 'right' ? VIEWPORT.width : VIEWPORT.height);
      if (!direction) {
        const [d, v] = a.dy ? ([a.dy > 0 ? 'down' : 'up', Math.abs(a.dy) / VIEWPORT.height] as const) : a.dx ? ([a.dx > 0 ? 'right' : 'left', Math.abs(a.dx) / VIEWPORT.width] as const) : (['down', undefined] as const);
        [direction, fraction] = [d, v];
      }
      const args: Record<string, unknown> = { direction };
      if (fraction !== undefined) args.amount = Math.round(Math.min(1, fraction) * 1000) / 1000;
      if (a.x !== undefined && a.y !== undefined) {
        assertSpace(a, 'rel1000', NAME);
        args.point_2d = [a.x, a.y];
      }
      return [call('scroll', args)];
    }
    case 'wait':
      return [call('wait', { seconds: Math.round((a.ms ?? 3000) / 1000) })];
    case 'answer':
      return [call('done', { response: a.text })];
    case 'terminate':
      // done has no status: a failure is told in the response; an empty response ends the task without an answer.
      return [call('done', { response: a.reason ?? (a.status === 'failure' ? 'The task could not be completed.' : '') })];
    case 'goto':
      return [call('goto_url', { url: a.url })];
    case 'back':
      return [call('go_back')];
    case 'forward':
      return [call('press_keys', { keys: ['Alt', 'ArrowRight'], is_hotkey: true })];
    case 'reload':
      return [call('press_keys', { keys: ['F5'] })];
    case 'new_tab':
      return a.url ? [call('new_tab'), call('goto_url', { url: a.url })] : [call('new_tab')];
    case 'switch_tab':
      return [call('switch_tab', { tab_index: a.index })];
    case 'close_tab':
      return a.index === undefined ? [call('close_tab')] : [call('switch_tab', { tab_index: a.index }), call('close_tab')];
    default:
      throw new UnsupportedActionError(NAME, a.action, 'Orchard-GUI acts on coordinates, not Set-of-Mark labels');
  }
}

function print(actions: Action[], opts?: FormatOptions & { thought?: string }): string {
  const blocks = actions.flatMap(toCalls).map((c) => `<tool_call>\n${JSON.stringify(c)}\n</tool_call>`);
  const thought = opts?.thought?.trim();
  return [thought ? `<think>\n${thought}\n</think>` : undefined, ...blocks].filter(Boolean).join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// Prompt and observation text (our own words for what the published prompt and adapter convey)

function systemPrompt(opts?: FormatOptions): string {
  const d = divisorOf(opts);
  const policy = [
    'You are an agent that completes tasks in a web browser, one step at a time: look, act, look again.',
    '',
    '# How you work',
    '',
    'You read screenshots of the browser and act on them. You can:',
    '- use the mouse: click, double-click, right-click, hover, drag, and scroll the page or one element of it;',
    '- use the keyboard: type text, press keys and shortcuts;',
    '- navigate: open a URL, go back;',
    '- manage tabs: open, switch to and close tabs;',
    '- wait for the page to change, and finish the task with an answer.',
    '',
    '## What you get each step',
    '1. The actions you took so far, so you can see what worked and avoid repeating yourself.',
    '2. The user request: the task you must complete.',
    '3. The observation: the open tabs (index, URL, title, which one is active) and a screenshot of the active tab.',
    '',
    '## How to answer',
    '- Begin with your reasoning inside <think></think>: what is on the screen, whether your last actions did what you',
    '  expected, how far the task has come, what to do next and why it is safe and correct. If you keep repeating an',
    '  action without progress, try something else.',
    '- Then call one or more tools, each in its own <tool_call></tool_call> block on its own line. Only the tools',
    '  listed below, with valid arguments.',
    '- Several calls run in order, top to bottom; use them for a short chain on the same page, such as',
    '  click → write → press_keys Enter, or new_tab → goto_url. Later calls may depend on earlier ones.',
    `- Points (point_2d and the drag points) are [x, y] on a 0..${d} grid over the screenshot: [0, 0] is the`,
    `  top-left corner, [${d}, ${d}] the bottom-right.`,
    '- Call done with your answer when the task is complete, when it cannot be completed, or when a CAPTCHA or a bot',
    '  check blocks the way.',
  ].join('\n');
  if (opts?.native_tools) return policy;
  const tools = toolDefs(d).map((t) => JSON.stringify(t)).join('\n');
  return (
    `${policy}\n\n# Tools\n\nThe functions you may call are described inside <tools></tools>:\n<tools>\n${tools}\n</tools>\n\n` +
    'Each call is a JSON object with the function name and its arguments, inside <tool_call></tool_call> tags:\n' +
    '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
  );
}

/** The Orchard tool a canonical action is written with (for feedback lines). */
function toolName(a: Action): string {
  try {
    return toCalls(a)[0]?.name ?? a.action;
  } catch {
    return a.action;
  }
}

/**
 * The feedback web_env.py gives after a step, where it matters: each call's outcome (`Succeed: …` / `Failed: …`),
 * a navigation or a new tab, and a click that changed neither.
 */
function feedback(obs: Observation, o: { parseError?: string; lastActions?: ResolvedAction[] }): string[] {
  const lines: string[] = [];
  if (o.parseError) lines.push(`Failed: your previous reply could not be executed: ${o.parseError}`);
  for (const r of o.lastActions ?? []) {
    const name = toolName(r.action);
    const at = r.raw ? ` at (${Math.round(r.raw.x)}, ${Math.round(r.raw.y)})` : '';
    lines.push(r.error ? `Failed: \`${name}\`${at} execution failed: ${r.error.message}` : `Succeed: \`${name}\`${at} executed.`);
  }
  if (obs.last_action_error && !o.lastActions?.some((r) => r.error)) lines.push(`Failed: ${obs.last_action_error.message} (${obs.last_action_error.code})`);
  let moved = false;
  for (const e of obs.events) {
    if (e.type === 'navigation') lines.push(`Page navigated to ${e.url}.`);
    else if (e.type === 'popup') lines.push(`New tab opened (tab ${e.tab_index}).`);
    else if (e.type === 'tab_closed') lines.push(`Tab ${e.tab_index} was closed.`);
    else if (e.type === 'dialog') lines.push(`A ${e.dialog_type} dialog said "${e.message}" and was ${e.handled}.`);
    else if (e.type === 'download') lines.push(`Downloaded ${e.filename}.`);
    if (e.type === 'navigation' || e.type === 'popup') moved = true;
  }
  const clicked = o.lastActions?.some((r) => !r.error && ['click', 'double_click', 'triple_click', 'right_click'].includes(r.action.action));
  if (clicked && !moved) lines.push('Note: no visible navigation or new tab detected.');
  return lines;
}

/** The observation as the Orchard-GUI adapter lays it out (screen size, current tab, the tab list), after the feedback. */
function observationText(obs: Observation, o: { parseError?: string; lastActions?: ResolvedAction[] } = {}): string {
  const lines = feedback(obs, o);
  const active = obs.tabs.find((t) => t.active);
  const size = obs.screenshot ? `${obs.screenshot.width} x ${obs.screenshot.height}` : `${obs.viewport.width} x ${obs.viewport.height}`;
  lines.push('<observation>', `screen size: ${size}`);
  if (active) lines.push(`Current tab: ${active.index}`);
  lines.push('Available tabs:');
  for (const t of obs.tabs.length ? obs.tabs : [{ index: 0, url: obs.url, title: obs.title, active: true }]) {
    lines.push(`- Tab ${t.index}${t.active ? ' (active)' : ''}: ${t.url}${t.title ? ` - ${t.title.slice(0, 50)}` : ''}`);
  }
  lines.push(obs.screenshot?.base64 ? 'screenshot:' : '(no screenshot for this step)', '</observation>');
  return lines.join('\n');
}

export const orchard: PolicyFormat = {
  name: NAME,
  description: 'Orchard-GUI tool calls (MSR-Orchard/slime tool_list.json: click, write, press_keys, scroll, …) in <tool_call> blocks, rel1000 coordinates.',
  space: 'rel1000',
  // forward and reload are also printed (as the keys Alt+ArrowRight and F5), but the parser never produces them.
  actions: ['click', 'double_click', 'triple_click', 'right_click', 'hover', 'drag', 'type', 'key', 'scroll', 'wait', 'answer', 'terminate', 'goto', 'back', 'new_tab', 'switch_tab', 'close_tab'],
  sandbox: { viewport: { width: 1280, height: 1000 }, screenshot_format: 'png', coordinate_space: 'rel1000' },
  systemPrompt,
  tools: (opts) => toolDefs(divisorOf(opts)),
  observationText,
  parse,
  print,
};
