// Each policy format against model outputs as their publishers show them, with the canonical actions written here
// by hand from the published semantics. The round trips of formats.test.ts print and parse with the same code, so a
// mistake made the same way both ways passes them; these cannot.
// Sources (read, not copied): WebVoyager's released trajectories (MinorJerry/WebVoyager, the three example tasks in
// ../shared/datasets/webvoyager/examples); UI-TARS's README, README_coordinates.md, action_parser tests and
// COMPUTER_USE_DOUBAO prompt (bytedance/UI-TARS); Qwen's computer_use tool (Qwen2.5-VL/Qwen3-VL cookbooks:
// hermes-style <tool_call> blocks, 0..1000 coordinates, `pixels` > 0 scrolls up); Anthropic's computer tool
// (computer_20250124 input schema and its key examples "Return", "alt+Tab", "ctrl+s", "Up", "KP_0"); OpenAI's
// computer-use guide (Responses output: a reasoning summary, then a computer_call); Orchard-GUI's prompt examples
// (MSR-Orchard/slime, also pinned in orchard.test.ts).
import { describe, expect, it } from 'vitest';
import type { Action } from '../../protocol/action.ts';
import { FORMATS, parseModelOutput } from '../../vlm-client/formats/index.ts';
import type { FormatOptions, ModelOutput } from '../../vlm-client/formats/types.ts';

const parsed = (format: string, out: ModelOutput, opts?: FormatOptions) => {
  const r = parseModelOutput(format, out, opts);
  if (!r.ok) throw new Error(`${format}: ${r.error}`);
  return r.actions;
};

describe('webvoyager: the released GPT-4V trajectories', () => {
  it('reads each action line as WebVoyager executes it', () => {
    const step = (action: string) => `Thought: The search functionality is available in element [5] labeled "Search or jump to...".\n\nAction: ${action}`;
    expect(parsed('webvoyager', step('Click [5]'))).toEqual([{ action: 'click_label', label: 5 }]);
    // "Type" clears the box, types and presses Enter (WebVoyager's exec_action_type).
    expect(parsed('webvoyager', step('Type [0]; climate change data visualization'))).toEqual([
      { action: 'type_label', label: 0, text: 'climate change data visualization', clear: true, submit: true },
    ]);
    expect(parsed('webvoyager', step('ANSWER; resource-watch/resource-watch with 63 stars'))).toEqual([{ action: 'answer', text: 'resource-watch/resource-watch with 63 stars' }]);
    // An answer keeps its quotes and punctuation as written.
    expect(parsed('webvoyager', step('ANSWER; Line ("-----")'))).toEqual([{ action: 'answer', text: 'Line ("-----")' }]);
    expect(parsed('webvoyager', step('Scroll [WINDOW]; down'))).toEqual([{ action: 'scroll', direction: 'down' }]);
    expect(parsed('webvoyager', step('Wait'))).toEqual([{ action: 'wait', ms: 5000 }]); // the prompt: "Wait" sleeps 5 s
    expect(parsed('webvoyager', step('GoBack'))).toEqual([{ action: 'back' }]);
    expect(parsed('webvoyager', step('Google'))).toEqual([{ action: 'goto', url: 'https://www.google.com/' }]);
  });

  it('prints the action line the way the trajectories write it', () => {
    expect(FORMATS.webvoyager.print([{ action: 'type_label', label: 0, text: 'Xi Yang', clear: true, submit: true }], { thought: 'The search box is [0].' })).toBe(
      'Thought: The search box is [0].\nAction: Type [0]; Xi Yang',
    );
    expect(FORMATS.webvoyager.print([{ action: 'click_label', label: 52 }], { thought: 'Most stars is [52].' })).toBe('Thought: Most stars is [52].\nAction: Click [52]');
  });
});

describe('uitars (UI-TARS 1.0): coordinates on a 0..1000 grid', () => {
  it('reads the box syntax of the training example and the bare tuple of README_coordinates.md', () => {
    expect(parsed('uitars', "Thought: xxx\nAction: click(start_box='(197,525)')")).toEqual([{ action: 'click', x: 197, y: 525, space: 'rel1000' }]);
    expect(parsed('uitars', "Action: click(start_box='<|box_start|>(495,30)<|box_end|>')")).toEqual([{ action: 'click', x: 495, y: 30, space: 'rel1000' }]);
    expect(parsed('uitars', "Thought: test\nAction: click(point='<point>200 300</point>')")).toEqual([{ action: 'click', x: 200, y: 300, space: 'rel1000' }]);
  });

  it('prints the published action space: box tuples (variant box), lowercase space-split hotkeys', () => {
    expect(FORMATS.uitars.print([{ action: 'click', x: 495, y: 30, space: 'rel1000' }], { variant: 'box' })).toBe("Thought: …\nAction: click(start_box='<|box_start|>(495,30)<|box_end|>')");
    expect(FORMATS.uitars.print([{ action: 'key', keys: 'Control+c' }])).toBe("Thought: …\nAction: hotkey(key='ctrl c')");
  });
});

describe('uitars15 (UI-TARS-1.5): absolute pixels of the smart-resized screenshot', () => {
  // A 1920x1080 screenshot is smart-resized (factor 28) to 1932x1092, the image the model answers on:
  // x' = x * 1920 / 1932, y' = y * 1080 / 1092 (README_coordinates.md), to two decimals.
  const screen = { width: 1920, height: 1080 };
  it('maps the README example and the parser test onto the screenshot', () => {
    expect(parsed('uitars15', "Thought: Click the button\nAction: click(start_box='(100,200)')", screen)).toEqual([{ action: 'click', x: 99.38, y: 197.8, space: 'image_px' }]);
    expect(parsed('uitars15', "Thought: test\nAction: click(point='<point>200 300</point>')", screen)).toEqual([{ action: 'click', x: 198.76, y: 296.7, space: 'image_px' }]);
  });

  it('reads the COMPUTER_USE_DOUBAO action space as documented', () => {
    expect(parsed('uitars15', "Thought: paste\nAction: hotkey(key='ctrl v')", screen)).toEqual([{ action: 'key', keys: 'Control+v' }]);
    // "If you want to submit your input, use \n at the end of content."
    expect(parsed('uitars15', "Thought: t\nAction: type(content='hello world\\n')", screen)).toEqual([{ action: 'type', text: 'hello world', submit: true }]);
    expect(parsed('uitars15', "Thought: t\nAction: finished(content='It\\'s done')", screen)).toEqual([{ action: 'answer', text: "It's done" }]);
    expect(parsed('uitars15', "Thought: t\nAction: wait()", screen)).toEqual([{ action: 'wait', ms: 5000 }]); // "Sleep for 5s"
    expect(parsed('uitars15', "Thought: t\nAction: drag(start_point='<point>10 20</point>', end_point='<point>300 400</point>')", screen)).toEqual([
      { action: 'drag', x: 9.94, y: 19.78, to_x: 298.14, to_y: 395.6, space: 'image_px' },
    ]);
  });

  it('prints the point syntax of the published prompt', () => {
    expect(FORMATS.uitars15.print([{ action: 'click', x: 200, y: 300, space: 'image_px' }], { width: 1932, height: 1092 })).toBe("Thought: …\nAction: click(point='<point>200 300</point>')");
  });
});

describe('qwen3vl: the computer_use tool in hermes-style <tool_call> blocks', () => {
  // Written as the model writes them (Python json.dumps spacing of the chat template).
  const call = (args: string) => `<tool_call>\n{"name": "computer_use", "arguments": ${args}}\n</tool_call>`;
  it('reads each documented action', () => {
    expect(parsed('qwen3vl', call('{"action": "left_click", "coordinate": [230, 118]}'))).toEqual([{ action: 'click', x: 230, y: 118, space: 'rel1000' }]);
    expect(parsed('qwen3vl', call('{"action": "type", "text": "Hello"}'))).toEqual([{ action: 'type', text: 'Hello' }]);
    expect(parsed('qwen3vl', call('{"action": "key", "keys": ["ctrl", "c"]}'))).toEqual([{ action: 'key', keys: 'Control+c' }]);
    expect(parsed('qwen3vl', call('{"action": "key", "keys": ["enter"]}'))).toEqual([{ action: 'key', keys: 'Enter' }]);
    // pixels > 0 scrolls up, < 0 down; the reference executors hand it to pyautogui.scroll (wheel clicks).
    expect(parsed('qwen3vl', call('{"action": "scroll", "coordinate": [500, 500], "pixels": -5}'))).toEqual([{ action: 'scroll', x: 500, y: 500, space: 'rel1000', direction: 'down', amount: 5 }]);
    expect(parsed('qwen3vl', call('{"action": "wait", "time": 2}'))).toEqual([{ action: 'wait', ms: 2000 }]);
    expect(parsed('qwen3vl', call('{"action": "answer", "text": "42"}'))).toEqual([{ action: 'answer', text: '42' }]);
    expect(parsed('qwen3vl', call('{"action": "terminate", "status": "success"}'))).toEqual([{ action: 'terminate', status: 'success' }]);
    // left_click_drag drags from where mouse_move left the pointer to coordinate.
    expect(parsed('qwen3vl', `${call('{"action": "mouse_move", "coordinate": [100, 200]}')}\n${call('{"action": "left_click_drag", "coordinate": [500, 600]}')}`)).toEqual([
      { action: 'drag', x: 100, y: 200, to_x: 500, to_y: 600, space: 'rel1000' },
    ]);
  });

  it('prints one <tool_call> block holding the published call object', () => {
    const text = FORMATS.qwen3vl.print([{ action: 'click', x: 230, y: 118, space: 'rel1000' }]);
    const m = /^<tool_call>\n(.*)\n<\/tool_call>$/s.exec(text);
    expect(m).not.toBeNull();
    expect(JSON.parse(m![1])).toEqual({ name: 'computer_use', arguments: { action: 'left_click', coordinate: [230, 118] } });
  });
});

describe('anthropic: the computer tool (computer_20250124)', () => {
  const use = (input: Record<string, unknown>, content = '') => ({ content, tool_calls: [{ id: 'toolu_01', name: 'computer', arguments: input }] });
  it('reads the documented inputs, pixel coordinates of the screenshot', () => {
    expect(parsed('anthropic', use({ action: 'left_click', coordinate: [500, 300] }))).toEqual([{ action: 'click', x: 500, y: 300, space: 'image_px' }]);
    expect(parsed('anthropic', use({ action: 'type', text: 'Hello, world!' }))).toEqual([{ action: 'type', text: 'Hello, world!' }]);
    expect(parsed('anthropic', use({ action: 'scroll', coordinate: [500, 400], scroll_direction: 'down', scroll_amount: 3 }))).toEqual([
      { action: 'scroll', x: 500, y: 400, space: 'image_px', direction: 'down', amount: 3 }, // scroll_amount: wheel clicks
    ]);
    expect(parsed('anthropic', use({ action: 'wait', duration: 2 }))).toEqual([{ action: 'wait', ms: 2000 }]); // duration in seconds
    expect(parsed('anthropic', use({ action: 'left_click_drag', start_coordinate: [100, 200], coordinate: [300, 400] }))).toEqual([
      { action: 'drag', x: 100, y: 200, to_x: 300, to_y: 400, space: 'image_px' },
    ]);
    expect(parsed('anthropic', use({ action: 'triple_click', coordinate: [10, 20] }))).toEqual([{ action: 'triple_click', x: 10, y: 20, space: 'image_px' }]);
    // `text` on a click: "key combination to hold down during this action (e.g. "ctrl", "shift", "ctrl+shift")".
    expect(parsed('anthropic', use({ action: 'left_click', coordinate: [500, 300], text: 'shift' }))).toEqual([{ action: 'click', x: 500, y: 300, space: 'image_px', modifiers: ['Shift'] }]);
  });

  it('reads every key example of the tool description (xdotool syntax) as the Playwright key it means', () => {
    const key = (text: string) => parsed('anthropic', use({ action: 'key', text }));
    expect(key('a')).toEqual([{ action: 'key', keys: 'a' }]);
    expect(key('Return')).toEqual([{ action: 'key', keys: 'Enter' }]);
    expect(key('alt+Tab')).toEqual([{ action: 'key', keys: 'Alt+Tab' }]);
    expect(key('ctrl+s')).toEqual([{ action: 'key', keys: 'Control+s' }]);
    expect(key('Up')).toEqual([{ action: 'key', keys: 'ArrowUp' }]);
    expect(key('KP_0')).toEqual([{ action: 'key', keys: 'Numpad0' }]); // "KP_0" (for the numpad 0 key)
  });

  it('prints a tool_use block in xdotool spelling', () => {
    expect(JSON.parse(FORMATS.anthropic.print([{ action: 'key', keys: 'Control+s' }]))).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'computer', input: { action: 'key', text: 'ctrl+s' } }]);
    expect(JSON.parse(FORMATS.anthropic.print([{ action: 'key', keys: 'Numpad0' }]))[0].input).toEqual({ action: 'key', text: 'KP_0' });
  });
});

describe('openai_cua: Responses output items', () => {
  const output = (...items: unknown[]) => JSON.stringify({ output: items });
  const callOf = (action: Record<string, unknown>) => ({ type: 'computer_call', id: 'cu_67cc', call_id: 'call_zw3', action, pending_safety_checks: [], status: 'completed' });
  it('reads the guide example: a reasoning summary, then a click in screenshot pixels', () => {
    const r = parseModelOutput('openai_cua', output({ type: 'reasoning', id: 'rs_67cc', summary: [{ type: 'summary_text', text: 'Clicking on the browser address bar.' }] }, callOf({ type: 'click', button: 'left', x: 156, y: 50 })));
    expect(r).toEqual({ ok: true, thought: 'Clicking on the browser address bar.', actions: [{ action: 'click', x: 156, y: 50, space: 'image_px' }] });
  });

  it('reads each action type of the computer tool', () => {
    const one = (action: Record<string, unknown>) => parsed('openai_cua', output(callOf(action)));
    expect(one({ type: 'double_click', x: 10, y: 20 })).toEqual([{ action: 'double_click', x: 10, y: 20, space: 'image_px' }]);
    expect(one({ type: 'scroll', x: 300, y: 400, scroll_x: 0, scroll_y: 300 })).toEqual([{ action: 'scroll', x: 300, y: 400, space: 'image_px', dy: 300 }]);
    expect(one({ type: 'keypress', keys: ['CTRL', 'L'] })).toEqual([{ action: 'key', keys: 'Control+L' }]);
    expect(one({ type: 'keypress', keys: ['ENTER'] })).toEqual([{ action: 'key', keys: 'Enter' }]);
    expect(one({ type: 'type', text: 'penguin' })).toEqual([{ action: 'type', text: 'penguin' }]);
    expect(one({ type: 'wait' })).toEqual([{ action: 'wait', ms: 2000 }]); // the sample app waits 2 s
    expect(one({ type: 'move', x: 10, y: 20 })).toEqual([{ action: 'hover', x: 10, y: 20, space: 'image_px' }]);
    expect(one({ type: 'drag', path: [{ x: 10, y: 20 }, { x: 30, y: 40 }] })).toEqual([{ action: 'drag', x: 10, y: 20, to_x: 30, to_y: 40, space: 'image_px' }]);
    // A reply with no computer_call is the model talking to the user: the episode's answer.
    expect(parsed('openai_cua', output({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'The cart has 2 items.' }] }))).toEqual([{ action: 'answer', text: 'The cart has 2 items.' }]);
  });

  it('prints computer_call items of that shape', () => {
    const [item] = JSON.parse(FORMATS.openai_cua.print([{ action: 'click', x: 156, y: 50, space: 'image_px' }]));
    expect(item).toMatchObject({ type: 'computer_call', action: { type: 'click', button: 'left', x: 156, y: 50 }, pending_safety_checks: [], status: 'completed' });
  });
});

describe('orchard: the Orchard-GUI prompt examples', () => {
  it('reads click → write → press Enter as the env executes it (write replaces the field)', () => {
    const out = [
      '<think>The search field is at the top; I will search for the product.</think>',
      '<tool_call>\n{"name": "click", "arguments": {"point_2d": [379, 69]}}\n</tool_call>',
      '<tool_call>\n{"name": "write", "arguments": {"message": "wireless mouse"}}\n</tool_call>',
      '<tool_call>\n{"name": "press_keys", "arguments": {"keys": ["Enter"]}}\n</tool_call>',
    ].join('\n');
    const actions: Action[] = [{ action: 'click', x: 379, y: 69, space: 'rel1000' }, { action: 'type', text: 'wireless mouse', clear: true }, { action: 'key', keys: 'Enter' }];
    expect(parsed('orchard', out)).toEqual(actions);
  });

  it('reads scroll amounts as fractions of the viewport (0..1, default 0.5)', () => {
    expect(parsed('orchard', '<tool_call>\n{"name": "scroll", "arguments": {"direction": "down"}}\n</tool_call>')).toEqual([{ action: 'scroll', direction: 'down', amount: 0.5, unit: 'viewport' }]);
  });
});
