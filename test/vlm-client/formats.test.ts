import { describe, expect, it } from 'vitest';
import type { Action } from '../../protocol/action.ts';
import type { SomElement } from '../../protocol/observation.ts';
import { FORMAT_NAMES, FORMATS, getFormat, parseModelOutput, UnsupportedActionError } from '../../vlm-client/formats/index.ts';
import type { FormatOptions } from '../../vlm-client/formats/types.ts';

const R = { space: 'rel1000' as const };
const PX = { space: 'image_px' as const };
const SOM: SomElement[] = [
  { label: 0, tag: 'input', text: 'Search', x: 10, y: 10, width: 200, height: 30 },
  { label: 7, tag: 'div', role: 'list', text: 'Results', x: 100, y: 200, width: 400, height: 300 },
];

/** Every action kind each format can express, in the canonical form its parser produces. */
const ROUND_TRIP: Record<string, { actions: Action[]; opts?: FormatOptions }[]> = {
  qwen3vl: [
    { actions: [{ action: 'click', x: 500, y: 300, ...R }] },
    { actions: [{ action: 'click', x: 0, y: 1000, ...R, button: 'middle' }] },
    { actions: [{ action: 'right_click', x: 12, y: 34, ...R }] },
    { actions: [{ action: 'double_click', x: 12, y: 34, ...R }] },
    { actions: [{ action: 'triple_click', x: 12, y: 34, ...R }] },
    { actions: [{ action: 'hover', x: 700, y: 20, ...R }] },
    { actions: [{ action: 'drag', x: 100, y: 200, to_x: 300, to_y: 400, ...R }] },
    { actions: [{ action: 'type', text: 'red "shoes"\nsize 42' }] },
    { actions: [{ action: 'key', keys: 'Control+a' }] },
    { actions: [{ action: 'key', keys: 'Enter' }] },
    { actions: [{ action: 'key', keys: 'Shift+Tab' }] },
    { actions: [{ action: 'key', keys: 'Meta+c' }] },
    { actions: [{ action: 'key', keys: 'PageDown' }] },
    { actions: [{ action: 'key', keys: 'F5' }] },
    { actions: [{ action: 'scroll', x: 500, y: 500, ...R, direction: 'down', amount: 5 }] },
    { actions: [{ action: 'scroll', direction: 'up', amount: 3 }] },
    { actions: [{ action: 'scroll', direction: 'right', amount: 2 }] },
    { actions: [{ action: 'scroll', x: 1, y: 2, ...R, direction: 'left', amount: 1 }] },
    { actions: [{ action: 'wait', ms: 2500 }] },
    { actions: [{ action: 'answer', text: 'The price is $12.' }] },
    { actions: [{ action: 'terminate', status: 'success' }] },
    { actions: [{ action: 'terminate', status: 'failure' }] },
    { actions: [{ action: 'click', x: 999, y: 0, space: 'rel1000', rel_divisor: 999 }], opts: { rel_divisor: 999 } },
    {
      actions: [
        { action: 'click', x: 10, y: 20, ...R },
        { action: 'drag', x: 1, y: 2, to_x: 3, to_y: 4, ...R },
        { action: 'type', text: 'abc' },
        { action: 'answer', text: 'x' },
        { action: 'terminate', status: 'success' },
      ],
    },
  ],
  uitars: [
    { actions: [{ action: 'click', x: 500, y: 300, ...R }] },
    { actions: [{ action: 'double_click', x: 5, y: 6, ...R }] },
    { actions: [{ action: 'right_click', x: 5, y: 6, ...R }] },
    { actions: [{ action: 'hover', x: 5, y: 6, ...R }] },
    { actions: [{ action: 'drag', x: 10, y: 20, to_x: 800, to_y: 900, ...R }] },
    { actions: [{ action: 'type', text: "it's \"quoted\" \\ and\nmultiline" }] },
    { actions: [{ action: 'type', text: 'search me', submit: true }] },
    { actions: [{ action: 'key', keys: 'Control+c' }] },
    { actions: [{ action: 'key', keys: 'Enter' }] },
    { actions: [{ action: 'key', keys: 'Alt+ArrowLeft' }] },
    { actions: [{ action: 'scroll', x: 500, y: 600, ...R, direction: 'down' }] },
    { actions: [{ action: 'scroll', direction: 'left' }] },
    { actions: [{ action: 'wait', ms: 5000 }] },
    { actions: [{ action: 'answer', text: "It's 42" }] },
    { actions: [{ action: 'terminate', status: 'success' }] },
    { actions: [{ action: 'terminate', status: 'failure' }] },
    { actions: [{ action: 'click', x: 1, y: 2, ...R }, { action: 'type', text: 'two' }] },
    { actions: [{ action: 'click', x: 500, y: 300, ...R }], opts: { variant: 'box' } },
    { actions: [{ action: 'drag', x: 10, y: 20, to_x: 800, to_y: 900, ...R }], opts: { variant: 'box' } },
  ],
  webvoyager: [
    { actions: [{ action: 'click_label', label: 5 }] },
    { actions: [{ action: 'type_label', label: 3, text: 'cheap flights; to Rome', clear: true, submit: true }] },
    { actions: [{ action: 'scroll', direction: 'down' }] },
    { actions: [{ action: 'scroll', direction: 'up' }] },
    { actions: [{ action: 'scroll', x: 300, y: 350, space: 'css_px', direction: 'down' }], opts: { som: SOM } },
    { actions: [{ action: 'wait', ms: 5000 }] },
    { actions: [{ action: 'back' }] },
    { actions: [{ action: 'goto', url: 'https://www.google.com/' }] },
    { actions: [{ action: 'answer', text: 'Three recipes: A, B and C.' }] },
  ],
  openai_cua: [
    { actions: [{ action: 'click', x: 640, y: 400, ...PX }] },
    { actions: [{ action: 'click', x: 640, y: 400, ...PX, button: 'middle' }] },
    { actions: [{ action: 'right_click', x: 1, y: 2, ...PX }] },
    { actions: [{ action: 'double_click', x: 1, y: 2, ...PX }] },
    { actions: [{ action: 'hover', x: 1, y: 2, ...PX }] },
    { actions: [{ action: 'drag', x: 1, y: 2, to_x: 30, to_y: 40, ...PX }] },
    { actions: [{ action: 'drag', x: 1, y: 2, to_x: 30, to_y: 40, ...PX, path: [{ x: 10, y: 10 }, { x: 20, y: 20 }] }] },
    { actions: [{ action: 'type', text: 'hello\tworld' }] },
    { actions: [{ action: 'key', keys: 'Control+l' }] },
    { actions: [{ action: 'key', keys: 'Enter' }] },
    { actions: [{ action: 'key', keys: 'Meta+Shift+ArrowUp' }] },
    { actions: [{ action: 'scroll', x: 640, y: 400, ...PX, dy: 300 }] },
    { actions: [{ action: 'scroll', x: 640, y: 400, ...PX, dx: -200, dy: 50 }] },
    { actions: [{ action: 'wait', ms: 2000 }] },
    { actions: [{ action: 'wait', ms: 0 }] },
    { actions: [{ action: 'back' }] },
    { actions: [{ action: 'forward' }] },
    { actions: [{ action: 'goto', url: 'https://example.com/a?b=1' }] },
    { actions: [{ action: 'answer', text: 'Done: the cart has 2 items.' }] },
    { actions: [{ action: 'click', x: 5, y: 5, ...PX }, { action: 'type', text: 'x' }, { action: 'key', keys: 'Enter' }] },
  ],
  anthropic: [
    { actions: [{ action: 'click', x: 640, y: 400, ...PX }] },
    { actions: [{ action: 'click', x: 640, y: 400, ...PX, modifiers: ['Shift'] }] },
    { actions: [{ action: 'click', x: 640, y: 400, ...PX, modifiers: ['Control', 'Shift'] }] },
    { actions: [{ action: 'click', x: 640, y: 400, ...PX, button: 'middle' }] },
    { actions: [{ action: 'right_click', x: 1, y: 2, ...PX }] },
    { actions: [{ action: 'double_click', x: 1, y: 2, ...PX }] },
    { actions: [{ action: 'triple_click', x: 1, y: 2, ...PX }] },
    { actions: [{ action: 'hover', x: 1, y: 2, ...PX }] },
    { actions: [{ action: 'drag', x: 1, y: 2, to_x: 30, to_y: 40, ...PX }] },
    { actions: [{ action: 'type', text: 'hello world' }] },
    { actions: [{ action: 'key', keys: 'Control+s' }] },
    { actions: [{ action: 'key', keys: 'Enter' }] },
    { actions: [{ action: 'key', keys: ['Control+a', 'Backspace'] }] },
    { actions: [{ action: 'scroll', x: 640, y: 400, ...PX, direction: 'down', amount: 3 }] },
    { actions: [{ action: 'scroll', direction: 'left', amount: 2 }] },
    { actions: [{ action: 'wait', ms: 1500 }] },
    { actions: [{ action: 'wait', ms: 0 }] },
    { actions: [{ action: 'answer', text: 'The answer.' }] },
    { actions: [{ action: 'hover', x: 9, y: 9, ...PX }, { action: 'click', x: 9, y: 9, ...PX }] },
  ],
  orchard: [
    { actions: [{ action: 'click', x: 500, y: 300, ...R }] },
    { actions: [{ action: 'click', x: 500, y: 300, ...R, button: 'middle' }] },
    { actions: [{ action: 'double_click', x: 1, y: 2, ...R }] },
    { actions: [{ action: 'triple_click', x: 1, y: 2, ...R }] },
    { actions: [{ action: 'right_click', x: 1, y: 2, ...R }] },
    { actions: [{ action: 'hover', x: 1, y: 2, ...R }] },
    { actions: [{ action: 'drag', x: 1, y: 2, to_x: 999, to_y: 1000, ...R }] },
    { actions: [{ action: 'type', text: 'red shoes', clear: true }] },
    { actions: [{ action: 'click', x: 480, y: 62, ...R }, { action: 'type', text: 'red shoes', clear: true }, { action: 'key', keys: 'Enter' }] },
    { actions: [{ action: 'key', keys: 'Control+a' }] },
    { actions: [{ action: 'key', keys: ['Tab', 'Enter'] }] },
    { actions: [{ action: 'scroll', direction: 'down', amount: 0.5, unit: 'viewport' }] },
    { actions: [{ action: 'scroll', x: 500, y: 500, ...R, direction: 'up', amount: 0.3, unit: 'viewport' }] },
    { actions: [{ action: 'goto', url: 'https://shop.test/item?id=3' }] },
    { actions: [{ action: 'back' }] },
    { actions: [{ action: 'new_tab' }] },
    { actions: [{ action: 'new_tab' }, { action: 'goto', url: 'https://a.test/' }] },
    { actions: [{ action: 'switch_tab', index: 2 }] },
    { actions: [{ action: 'close_tab' }] },
    { actions: [{ action: 'wait', ms: 3000 }] },
    { actions: [{ action: 'answer', text: 'Total: 3' }] },
    { actions: [{ action: 'terminate', status: 'success' }] },
    { actions: [{ action: 'click', x: 500, y: 300, space: 'rel1000', rel_divisor: 999 }], opts: { rel_divisor: 999 } },
    { actions: [{ action: 'click', x: 1, y: 1, ...R }, { action: 'type', text: 'a', clear: true }, { action: 'key', keys: 'Enter' }, { action: 'answer', text: 'ok' }] },
  ],
};

describe('format registry', () => {
  it('lists the formats and resolves aliases', () => {
    expect(FORMAT_NAMES).toEqual(['qwen3vl', 'orchard', 'uitars', 'uitars15', 'webvoyager', 'openai_cua', 'anthropic']);
    expect(getFormat('ui-tars-1.5')?.name).toBe('uitars15');
    expect(getFormat('Qwen3-VL')?.name).toBe('qwen3vl');
    expect(getFormat('ui-tars')?.name).toBe('uitars');
    expect(getFormat('OpenAI-CUA')?.name).toBe('openai_cua');
    expect(getFormat('claude')?.name).toBe('anthropic');
    expect(getFormat('toString')).toBeUndefined();
    expect(getFormat('nope')).toBeUndefined();
  });

  it('parseModelOutput reports an unknown format without throwing', () => {
    const r = parseModelOutput('gpt-free-text', 'click somewhere');
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/Unknown policy output format "gpt-free-text"; known formats: qwen3vl, /) });
  });

  it.each(FORMAT_NAMES)('%s: empty and null outputs are structured failures', (name) => {
    for (const out of ['', '   ', null as unknown as string]) {
      const r = parseModelOutput(name, out);
      expect(r.ok).toBe(false);
    }
  });

  it.each(FORMAT_NAMES)('%s: has a system prompt and a description', (name) => {
    const f = FORMATS[name];
    expect(f.description.length).toBeGreaterThan(10);
    expect(f.systemPrompt({ width: 1280, height: 800 }).length).toBeGreaterThan(100);
  });
});

describe.each(Object.keys(ROUND_TRIP))('%s round trip', (name) => {
  const f = FORMATS[name];
  const cases = ROUND_TRIP[name];

  it('covers every action kind the format declares', () => {
    const covered = new Set(cases.flatMap((c) => c.actions.map((a) => a.action)));
    expect([...covered].sort()).toEqual([...f.actions].sort());
  });

  it.each(cases.map((c, i) => [i, c.actions.map((a) => a.action).join('+'), c] as const))('case %i: %s', (_i, _label, c) => {
    const printed = f.print(c.actions, { ...c.opts, thought: 'I look at the page.' });
    const r = f.parse(printed, c.opts);
    expect(r, printed).toMatchObject({ ok: true });
    if (r.ok) expect(r.actions).toEqual(c.actions);
    // The registry entry point agrees.
    expect(parseModelOutput(name, printed, c.opts)).toEqual(r);
  });
});

describe('thoughts', () => {
  it('qwen3vl keeps the text before the tool call, without <think> tags', () => {
    const r = parseModelOutput('qwen3vl', '<think>\nThe search box is at the top.\n</think>\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [500, 40]}}\n</tool_call>');
    expect(r).toEqual({ ok: true, thought: 'The search box is at the top.', actions: [{ action: 'click', x: 500, y: 40, space: 'rel1000' }] });
  });

  it('uitars reads Thought and both point syntaxes', () => {
    const r = parseModelOutput('uitars', "Thought: Click the blue button.\nAction: click(start_box='<|box_start|>(100,200,300,400)<|box_end|>')");
    expect(r).toEqual({ ok: true, thought: 'Click the blue button.', actions: [{ action: 'click', x: 200, y: 300, space: 'rel1000' }] });
    const r2 = parseModelOutput('uitars', "Action: left_double(start_box='[10, 20, 30, 40]')");
    expect(r2).toEqual({ ok: true, actions: [{ action: 'double_click', x: 20, y: 30, space: 'rel1000' }] });
    const r4 = parseModelOutput('uitars', "**Thought:** Go.\n**Action:** click(point='<point>10 20</point>')");
    expect(r4).toEqual({ ok: true, thought: 'Go.', actions: [{ action: 'click', x: 10, y: 20, space: 'rel1000' }] });
    const r3 = parseModelOutput('uitars', "click(point='<point>10 20</point>')");
    expect(r3).toEqual({ ok: true, actions: [{ action: 'click', x: 10, y: 20, space: 'rel1000' }] });
  });

  it('webvoyager keeps the thought even when the action is invalid', () => {
    const r = parseModelOutput('webvoyager', 'Thought: I need the menu.\nAction: Fly [3]');
    expect(r).toEqual({ ok: false, thought: 'I need the menu.', error: expect.stringMatching(/Unknown WebVoyager action "Fly \[3\]"/) });
  });

  it('openai_cua reads reasoning summaries; a text-only reply is the final answer', () => {
    const out = JSON.stringify([
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Open the cart.' }] },
      { type: 'computer_call', call_id: 'c', action: { type: 'click', button: 'left', x: 10, y: 20 } },
    ]);
    expect(parseModelOutput('openai_cua', out)).toEqual({ ok: true, thought: 'Open the cart.', actions: [{ action: 'click', x: 10, y: 20, space: 'image_px' }] });
    expect(parseModelOutput('openai_cua', 'The cheapest one costs $4.')).toEqual({ ok: true, actions: [{ action: 'answer', text: 'The cheapest one costs $4.' }] });
  });

  it('anthropic text next to tool_use is the thought', () => {
    const out = JSON.stringify({ role: 'assistant', content: [{ type: 'text', text: 'Scrolling down.' }, { type: 'tool_use', id: 't', name: 'computer', input: { action: 'scroll', coordinate: [5, 5], scroll_direction: 'down', scroll_amount: 2 } }] });
    expect(parseModelOutput('anthropic', out)).toEqual({ ok: true, thought: 'Scrolling down.', actions: [{ action: 'scroll', x: 5, y: 5, space: 'image_px', direction: 'down', amount: 2 }] });
  });
});

describe('tool calls passed as a JSON-encoded assistant message', () => {
  const msg = (tool_calls: unknown[], content: string | null = null) => JSON.stringify({ content, tool_calls });

  it('qwen3vl accepts OpenAI tool_calls, flat or in the wire shape', () => {
    const flat = msg([{ id: 'a', name: 'computer_use', arguments: '{"action":"type","text":"hi"}' }], 'Typing.');
    expect(parseModelOutput('qwen3vl', flat)).toEqual({ ok: true, thought: 'Typing.', actions: [{ action: 'type', text: 'hi' }] });
    const wire = msg([{ id: 'a', type: 'function', function: { name: 'computer_use', arguments: '{"action":"key","keys":["ctrl","l"]}' } }]);
    expect(parseModelOutput('qwen3vl', wire)).toEqual({ ok: true, actions: [{ action: 'key', keys: 'Control+l' }] });
    // An object (not a string) works too.
    expect(FORMATS.qwen3vl.parse({ content: null, tool_calls: [{ name: 'computer_use', arguments: { action: 'answer', text: '7' } }] })).toEqual({ ok: true, actions: [{ action: 'answer', text: '7' }] });
  });

  it('orchard accepts one tool call per action', () => {
    const out = msg([{ name: 'goto_url', arguments: '{"url":"https://a.test/"}' }, { name: 'go_back', arguments: '' }]);
    expect(parseModelOutput('orchard', out)).toEqual({ ok: true, actions: [{ action: 'goto', url: 'https://a.test/' }, { action: 'back' }] });
  });

  it('openai_cua and anthropic accept chat tool calls', () => {
    const cua = msg([{ name: 'computer', arguments: JSON.stringify({ action: { type: 'move', x: 3, y: 4 } }) }, { name: 'goto', arguments: '{"url":"https://b.test/"}' }]);
    expect(parseModelOutput('openai_cua', cua)).toEqual({ ok: true, actions: [{ action: 'hover', x: 3, y: 4, space: 'image_px' }, { action: 'goto', url: 'https://b.test/' }] });
    const claude = msg([{ name: 'computer', arguments: '{"action":"left_click_drag","start_coordinate":[1,2],"coordinate":[3,4]}' }]);
    expect(parseModelOutput('anthropic', claude)).toEqual({ ok: true, actions: [{ action: 'drag', x: 1, y: 2, to_x: 3, to_y: 4, space: 'image_px' }] });
  });
});

const tc = (args: unknown, name = 'computer_use') => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

/** [format, output, expected error pattern, options?] */
const FAILURES: [string, string, RegExp, FormatOptions?][] = [
  ['qwen3vl', '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [1', /Truncated output: <tool_call> without <\/tool_call>/],
  ['qwen3vl', '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [1,</tool_call>', /Truncated JSON in <tool_call> block 1/],
  ['qwen3vl', '<tool_call>{"name": "computer_use", "arguments": {"action": left_click}}</tool_call>', /Malformed JSON in <tool_call> block 1/],
  ['qwen3vl', tc({ action: 'left_click', coordinate: [1200, 50] }), /coordinate \(1200, 50\) is outside the 0\.\.1000 grid/],
  ['qwen3vl', tc({ action: 'left_click', coordinate: [999.5, 50] }), /outside the 0\.\.999 grid/, { rel_divisor: 999 }],
  ['qwen3vl', tc({ action: 'left_click', coordinate: '500,300' }), /"coordinate" must be an \[x, y\] pair of numbers, got the string "500,300"/],
  ['qwen3vl', tc({ action: 'left_click' }), /no coordinate, and the pointer position is unknown/],
  ['qwen3vl', tc({ action: 'type', text: 42 }), /"text" must be a string, got number 42/],
  ['qwen3vl', tc({ action: 'scroll', pixels: 'down' }), /"pixels" must be a number/],
  ['qwen3vl', tc({ action: 'key', keys: 5 }), /"keys" must be a non-empty array/],
  ['qwen3vl', tc({ action: 'terminate', status: 'done' }), /"status" must be "success" or "failure"/],
  ['qwen3vl', tc({ action: 'fly', coordinate: [1, 2] }), /Unknown computer_use action "fly"/],
  ['qwen3vl', tc({ action: 'left_click', coordinate: [1, 2] }, 'browser'), /Unknown function "browser"/],
  ['qwen3vl', tc({ action: 'left_click_drag', coordinate: [1, 2] }), /drag start is unknown/],
  ['qwen3vl', 'I would click the search button.', /No <tool_call> block in the output/],
  ['qwen3vl', JSON.stringify({ content: '', tool_calls: [{ name: 'computer_use', arguments: '{"action": "left_cl' }] }), /Truncated JSON in the arguments of tool call 1/],
  ['qwen3vl', JSON.stringify({ content: '', tool_calls: [{ name: 'computer_use', arguments: '[1, 2]' }] }), /must be a JSON object/],
  ['uitars', 'Thought: I am thinking.', /No "Action:" in the output/],
  ['uitars', "Thought: x\nAction: click(start_box='<|box_start|>(100,200)", /Truncated action: the start_box value of click has no closing quote/],
  ['uitars', "Action: click(point='<point>1 2</point>'", /Truncated action: click\( is not closed/],
  ['uitars', "Action: click(point='<point>1200 5</point>')", /outside the 0\.\.1000 grid/],
  ['uitars', "Action: click(point='<point>abc</point>')", /cannot read a point/],
  ['uitars', "Action: teleport(point='<point>1 5</point>')", /Unknown UI-TARS action "teleport"/],
  ['uitars', "Action: scroll(point='<point>1 5</point>', direction='sideways')", /direction must be up, down, left or right/],
  ['uitars', "Action: drag(start_point='<point>1 5</point>')", /missing end_box/],
  ['uitars', 'Action: hotkey()', /missing key/],
  ['uitars', 'Action:', /"Action:" label but no action/],
  ['webvoyager', 'Thought: first\nAction: Click [5]\nAction: Click [6]', /Expected exactly one action, found 2/],
  ['webvoyager', 'Thought: first\nAction: Click [5]\nType [3]; hello', /exactly one action/],
  ['webvoyager', 'Thought: nothing to do', /No "Action:"/],
  ['webvoyager', 'Action: Scroll [7]; down', /needs the element list/],
  ['webvoyager', 'Action: Scroll [9]; down', /no element with label 9/, { som: SOM }],
  ['webvoyager', 'Action: Scroll [WINDOW]; sideways', /Malformed Scroll action/],
  ['webvoyager', 'Action: Type [3]', /Malformed Type action/],
  ['webvoyager', 'Action: Click [abc]', /label must be a non-negative integer/],
  ['webvoyager', 'Action: ANSWER;', /ANSWER without an answer text/],
  ['webvoyager', 'Action: ', /"Action:" line is empty/],
  ['openai_cua', '[{"type":"computer_call","action":{"type":"click","x":1', /Truncated JSON in the output/],
  ['openai_cua', '{"type":"click","x":"10","y":5}', /"x" must be a number, got the string "10"/],
  ['openai_cua', '{"type":"teleport"}', /Unknown computer action type the string "teleport"/],
  ['openai_cua', '{"type":"scroll","x":1,"y":1,"scroll_x":0,"scroll_y":0}', /scroll_x and scroll_y are both 0/],
  ['openai_cua', '{"type":"click","button":"left","x":2000,"y":5}', /outside the 1280x800 screenshot/, { width: 1280, height: 800 }],
  ['openai_cua', '{"type":"click","button":"left","x":-1,"y":5}', /is negative/],
  ['openai_cua', '{"type":"keypress","keys":"ctrl+c"}', /"keys" must be a non-empty array/],
  ['openai_cua', '{"type":"drag","path":[{"x":1,"y":2}]}', /at least two/],
  ['openai_cua', '[]', /neither a computer_call nor a message/],
  ['openai_cua', JSON.stringify({ content: null, tool_calls: [{ name: 'shell', arguments: '{}' }] }), /Unknown function "shell"/],
  ['anthropic', '[{"type":"tool_use","name":"computer","input":{"action":"left_click","coordinate":[1]}}]', /"coordinate" must be an \[x, y\] pair/],
  ['anthropic', '[{"type":"tool_use","name":"computer","input":{"action":"cursor_position"}}]', /Unknown or unsupported computer action "cursor_position"/],
  ['anthropic', '[{"type":"tool_use","name":"bash","input":{"command":"ls"}}]', /Unknown tool "bash"/],
  ['anthropic', '[{"type":"tool_use","name":"computer","input":{"action":"scroll","coordinate":[1,1],"scroll_direction":"sideways"}}]', /"scroll_direction" must be up, down, left or right/],
  ['anthropic', '[{"type":"tool_use","name":"computer","input":{"action":"left_click","coordinate":[1,1],"text":"a"}}]', /"a" is not a modifier key/],
  ['anthropic', '[{"type":"tool_use","name":"computer","input":{"action":"key","text":"ctrl+', /Truncated JSON/],
  ['anthropic', '{"action":"left_click_drag","coordinate":[5,5]}', /drag start is unknown/],
  ['orchard', '<tool_call>{"name":"click","arguments":{"point_2d":[1001,5]}}</tool_call>', /outside the 0\.\.1000 grid/],
  ['orchard', 'Clicking.\n<tool_call>\n{"name":"click","arguments":{"point_2d":[1', /Truncated output: <tool_call> without <\/tool_call>/],
  ['orchard', 'Clicking now: {"name":"click","arguments":{"point_2d":[1,2]', /Truncated JSON in the tool call/],
  ['orchard', '<tool_call>{"name":"fly","arguments":{}}</tool_call>', /Unknown tool "fly" \(call 1\)/],
  ['orchard', '<tool_call>{"name":"click","arguments":{"point_2d":"500,300"}}</tool_call>', /"point_2d" must be an \[x, y\] pair/],
  ['orchard', '<tool_call>{"name":"click","arguments":{"point_2d":[5,5],"clicks":2,"button":"right"}}</tool_call>', /2 right clicks are not supported/],
  ['orchard', '<tool_call>{"name":"write","arguments":{"message":""}}</tool_call>', /"message" must not be empty/],
  ['orchard', '<tool_call>{"name":"press_keys","arguments":{"keys":["Hyper","Foo"]}}</tool_call>', /no valid keys in \["Hyper","Foo"\]/],
  ['orchard', '<tool_call>{"name":"press_keys","arguments":{"keys":["a"],"presses":17}}</tool_call>', /17 key presses in one call; at most 16/],
  ['orchard', '<tool_call>{"name":"switch_tab","arguments":{"tab_index":1.5}}</tool_call>', /"tab_index" must be an integer/],
  ['orchard', '<tool_call>{"name":"scroll","arguments":{"direction":"sideways"}}</tool_call>', /"direction" must be up, down, left or right/],
  ['orchard', Array.from({ length: 17 }, () => '<tool_call>{"name":"go_back","arguments":{}}</tool_call>').join('\n'), /Too many actions in one output \(17; at most 16\)/],
  ['orchard', 'I am not sure what to do [maybe scroll].', /No <tool_call> block in the output/],
];

describe('malformed outputs are structured failures', () => {
  it.each(FAILURES.map(([f, out, re, opts], i) => [i, f, out, re, opts] as const))('#%i %s', (_i, format, output, re, opts) => {
    const r = parseModelOutput(format, output, opts);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(re);
  });
});

describe('decisions on several calls', () => {
  it('qwen3vl, uitars, orchard, openai_cua and anthropic run several calls in order; webvoyager allows one', () => {
    const two = `${tc({ action: 'left_click', coordinate: [1, 2] })}\n${tc({ action: 'type', text: 'x' })}`;
    expect(parseModelOutput('qwen3vl', two)).toMatchObject({ ok: true, actions: [{ action: 'click' }, { action: 'type' }] });
    expect(parseModelOutput('uitars', "Action: click(point='<point>1 2</point>')\n\ntype(content='x')")).toMatchObject({ ok: true, actions: [{ action: 'click' }, { action: 'type' }] });
    expect(parseModelOutput('webvoyager', 'Action: Click [1]\nAction: Click [2]').ok).toBe(false);
  });

  it('qwen3vl reads key variants', () => {
    expect(parseModelOutput('qwen3vl', tc({ action: 'key', keys: ['ctrl+shift', 't'] }))).toEqual({ ok: true, actions: [{ action: 'key', keys: 'Control+Shift+t' }] });
    expect(parseModelOutput('qwen3vl', tc({ action: 'key', keys: ['Return'] }))).toEqual({ ok: true, actions: [{ action: 'key', keys: 'Enter' }] });
    expect(parseModelOutput('qwen3vl', tc({ action: 'key', keys: ['+'] }))).toEqual({ ok: true, actions: [{ action: 'key', keys: '+' }] });
  });

  it('a mouse_move before left_click_drag is the drag start (qwen3vl and anthropic)', () => {
    const out = `${tc({ action: 'mouse_move', coordinate: [1, 2] })}${tc({ action: 'left_click_drag', coordinate: [3, 4] })}`;
    expect(parseModelOutput('qwen3vl', out)).toEqual({ ok: true, actions: [{ action: 'drag', x: 1, y: 2, to_x: 3, to_y: 4, space: 'rel1000' }] });
    const claude = JSON.stringify([
      { type: 'tool_use', id: 'a', name: 'computer', input: { action: 'mouse_move', coordinate: [1, 2] } },
      { type: 'tool_use', id: 'b', name: 'computer', input: { action: 'left_click_drag', coordinate: [3, 4] } },
    ]);
    expect(parseModelOutput('anthropic', claude)).toEqual({ ok: true, actions: [{ action: 'drag', x: 1, y: 2, to_x: 3, to_y: 4, space: 'image_px' }] });
  });
});

describe('print', () => {
  it('throws UnsupportedActionError for actions a format cannot express', () => {
    expect(() => FORMATS.qwen3vl.print([{ action: 'goto', url: 'https://a.test/' }])).toThrow(UnsupportedActionError);
    expect(() => FORMATS.webvoyager.print([{ action: 'click', x: 1, y: 2 }])).toThrow(/cannot express the "click" action/);
    expect(() => FORMATS.webvoyager.print([{ action: 'back' }, { action: 'back' }])).toThrow(/one action per reply/);
    expect(() => FORMATS.anthropic.print([{ action: 'terminate' }])).toThrow(UnsupportedActionError);
    expect(() => FORMATS.orchard.print([{ action: 'click_label', label: 1 }])).toThrow(UnsupportedActionError);
    expect(() => FORMATS.openai_cua.print([{ action: 'triple_click', x: 1, y: 1 }])).toThrow(UnsupportedActionError);
  });

  it('refuses coordinates in a space the format does not write', () => {
    expect(() => FORMATS.qwen3vl.print([{ action: 'click', x: 1, y: 2, space: 'css_px' }])).toThrow(/writes rel1000 coordinates; the click action is in css_px/);
    expect(() => FORMATS.anthropic.print([{ action: 'click', x: 1, y: 2, space: 'rel1000' }])).toThrow(/writes image_px/);
  });

  it('expands type with focus point, clear and submit (qwen3vl)', () => {
    const printed = FORMATS.qwen3vl.print([{ action: 'type', text: 'q', x: 10, y: 20, space: 'rel1000', clear: true, submit: true }]);
    const r = FORMATS.qwen3vl.parse(printed);
    expect(r).toEqual({
      ok: true,
      actions: [
        { action: 'click', x: 10, y: 20, space: 'rel1000' },
        { action: 'key', keys: 'Control+a' },
        { action: 'type', text: 'q' },
        { action: 'key', keys: 'Enter' },
      ],
    });
  });

  it('writes the documented native shapes', () => {
    expect(FORMATS.qwen3vl.print([{ action: 'click', x: 5, y: 6, space: 'rel1000' }])).toBe('<tool_call>\n{"name":"computer_use","arguments":{"action":"left_click","coordinate":[5,6]}}\n</tool_call>');
    expect(FORMATS.uitars.print([{ action: 'click', x: 5, y: 6 }], { thought: 'go' })).toBe("Thought: go\nAction: click(point='<point>5 6</point>')");
    expect(FORMATS.uitars.print([{ action: 'key', keys: 'Control+c' }], { variant: 'box', thought: 't' })).toBe("Thought: t\nAction: hotkey(key='ctrl c')");
    expect(FORMATS.webvoyager.print([{ action: 'type_label', label: 3, text: 'hi' }], { thought: 't' })).toBe('Thought: t\nAction: Type [3]; hi');
    expect(JSON.parse(FORMATS.openai_cua.print([{ action: 'key', keys: 'Control+a' }]))).toEqual([{ type: 'computer_call', call_id: 'call_1', action: { type: 'keypress', keys: ['CTRL', 'a'] }, pending_safety_checks: [], status: 'completed' }]);
    expect(JSON.parse(FORMATS.anthropic.print([{ action: 'key', keys: 'Control+s' }]))).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'computer', input: { action: 'key', text: 'ctrl+s' } }]);
    expect(FORMATS.orchard.print([{ action: 'back' }], { thought: 'Back.' })).toBe('<think>\nBack.\n</think>\n<tool_call>\n{"name":"go_back","arguments":{}}\n</tool_call>');
  });

  it('tool definitions name what the parser accepts', () => {
    expect(FORMATS.qwen3vl.tools!()[0].function.name).toBe('computer_use');
    expect(FORMATS.anthropic.tools!()[0].function.name).toBe('computer');
    expect(FORMATS.orchard.tools!().map((t) => t.function.name)).toEqual(['click', 'write', 'press_keys', 'scroll', 'wait', 'done', 'goto_url', 'go_back', 'drag', 'hover', 'new_tab', 'switch_tab', 'close_tab']);
    expect(FORMATS.openai_cua.tools!().map((t) => t.function.name)).toEqual(['computer', 'goto', 'back']);
  });
});
