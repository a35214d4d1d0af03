// Behaviour several formats share through vlm-client/formats/computer_tool.ts and common.ts, pinned per format:
// type steps, scroll sizes, held modifiers, drag starts, and the text / JSON / tool-call parse of JSON-native formats.
import { describe, expect, it } from 'vitest';
import type { Action } from '../../protocol/action.ts';
import { FORMATS, parseModelOutput, UnsupportedActionError } from '../../vlm-client/formats/index.ts';

const PX = { space: 'image_px' as const };
const R = { space: 'rel1000' as const };

const anthropicInputs = (actions: Action[]) => (JSON.parse(FORMATS.anthropic.print(actions)) as { input: unknown }[]).map((b) => b.input);
const qwenArgs = (actions: Action[]) =>
  FORMATS.qwen3vl
    .print(actions)
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l).arguments);

describe('type with a focus point, clear and submit', () => {
  const a = { action: 'type', text: 'q', x: 10, y: 20, clear: true, submit: true } as const;

  it('anthropic: click, ctrl+a, type, Return', () => {
    expect(anthropicInputs([{ ...a, ...PX }])).toEqual([
      { action: 'left_click', coordinate: [10, 20] },
      { action: 'key', text: 'ctrl+a' },
      { action: 'type', text: 'q' },
      { action: 'key', text: 'Return' },
    ]);
  });

  it('openai_cua: one computer_call per step, numbered in order', () => {
    const items = JSON.parse(FORMATS.openai_cua.print([{ ...a, ...PX }])) as { call_id: string; action: unknown }[];
    expect(items.map((i) => [i.call_id, i.action])).toEqual([
      ['call_1', { type: 'click', button: 'left', x: 10, y: 20 }],
      ['call_2', { type: 'keypress', keys: ['CTRL', 'A'] }],
      ['call_3', { type: 'type', text: 'q' }],
      ['call_4', { type: 'keypress', keys: ['ENTER'] }],
    ]);
    const plain = JSON.parse(FORMATS.openai_cua.print([{ action: 'type', text: 'q', submit: true }])) as { call_id: string; action: unknown }[];
    expect(plain.map((i) => [i.call_id, i.action])).toEqual([
      ['call_1', { type: 'type', text: 'q' }],
      ['call_2', { type: 'keypress', keys: ['ENTER'] }],
    ]);
  });

  it('uitars: submit is the trailing newline of the typed text', () => {
    expect(FORMATS.uitars.print([{ ...a, ...R }], { thought: 't' })).toBe(
      "Thought: t\nAction: click(point='<point>10 20</point>')\n\nhotkey(key='ctrl a')\n\ntype(content='q\\n')",
    );
  });

  it('the focus point must be in the space the format writes', () => {
    expect(() => FORMATS.anthropic.print([{ ...a, ...R }])).toThrow(/writes image_px coordinates; the type action is in rel1000/);
    expect(() => FORMATS.qwen3vl.print([{ ...a, ...PX }])).toThrow(/writes rel1000 coordinates; the type action is in image_px/);
    // Without a point there is nothing to check.
    expect(anthropicInputs([{ action: 'type', text: 'q', space: 'rel1000' }])).toEqual([{ action: 'type', text: 'q' }]);
  });
});

describe('scroll sizes', () => {
  it('anthropic: pixel sizes become whole wheel clicks; a size in notches is kept', () => {
    const input = (s: Action) => anthropicInputs([s])[0];
    expect(input({ action: 'scroll', dy: 449 })).toEqual({ action: 'scroll', scroll_direction: 'down', scroll_amount: 4 });
    expect(input({ action: 'scroll', dx: -30 })).toEqual({ action: 'scroll', scroll_direction: 'left', scroll_amount: 1 });
    expect(input({ action: 'scroll', direction: 'up', amount: 250, unit: 'px' })).toEqual({ action: 'scroll', scroll_direction: 'up', scroll_amount: 3 });
    expect(input({ action: 'scroll', direction: 'up', amount: 2.5 })).toEqual({ action: 'scroll', scroll_direction: 'up', scroll_amount: 2.5 });
    expect(input({ action: 'scroll', direction: 'right', dy: 300 })).toEqual({ action: 'scroll', scroll_direction: 'right' });
    expect(input({ action: 'scroll', x: 5, y: 6, ...PX })).toEqual({ action: 'scroll', coordinate: [5, 6], scroll_direction: 'down' });
  });

  it('qwen3vl: whole notches (5 when no size is given), hscroll for left and right', () => {
    expect(qwenArgs([{ action: 'scroll', dy: -449 }])).toEqual([{ action: 'scroll', pixels: 4 }]);
    expect(qwenArgs([{ action: 'scroll', dx: 250 }])).toEqual([{ action: 'hscroll', pixels: 3 }]);
    expect(qwenArgs([{ action: 'scroll' }])).toEqual([{ action: 'scroll', pixels: -5 }]);
    expect(qwenArgs([{ action: 'scroll', direction: 'left', amount: 0.2 }])).toEqual([{ action: 'hscroll', pixels: -1 }]);
    expect(qwenArgs([{ action: 'scroll', direction: 'down', amount: 300, unit: 'px' }])).toEqual([{ action: 'scroll', pixels: -3 }]);
  });

  it('uitars: the direction comes from dy, then dx, else down', () => {
    const line = (s: Action) => FORMATS.uitars.print([s]).split('Action: ')[1];
    expect(line({ action: 'scroll', dy: -10 })).toBe("scroll(direction='up')");
    expect(line({ action: 'scroll', dx: 5 })).toBe("scroll(direction='right')");
    expect(line({ action: 'scroll' })).toBe("scroll(direction='down')");
    expect(line({ action: 'scroll', direction: 'left', dy: 100 })).toBe("scroll(direction='left')");
  });
});

describe('modifier keys held during a click', () => {
  it('anthropic reads and writes them in text, with the left button only', () => {
    const out = JSON.stringify({ action: 'left_click', coordinate: [1, 2], text: 'ctrl+shift' });
    expect(parseModelOutput('anthropic', out)).toEqual({ ok: true, actions: [{ action: 'click', x: 1, y: 2, space: 'image_px', modifiers: ['Control', 'Shift'] }] });
    expect(anthropicInputs([{ action: 'click', x: 1, y: 2, ...PX, modifiers: ['Meta'] }])).toEqual([{ action: 'left_click', coordinate: [1, 2], text: 'super' }]);
    expect(() => FORMATS.anthropic.print([{ action: 'click', x: 1, y: 2, button: 'right', modifiers: ['Shift'] }])).toThrow(/modifiers only with the left button/);
  });

  it('qwen3vl cannot hold them: print refuses, parse ignores text on left_click', () => {
    expect(() => FORMATS.qwen3vl.print([{ action: 'click', x: 1, y: 2, modifiers: ['Shift'] }])).toThrow(UnsupportedActionError);
    expect(() => FORMATS.qwen3vl.print([{ action: 'click', x: 1, y: 2, modifiers: ['Shift'] }])).toThrow(/modifier keys cannot be held during a click/);
    const out = `<tool_call>\n${JSON.stringify({ name: 'computer_use', arguments: { action: 'left_click', coordinate: [1, 2], text: 'shift' } })}\n</tool_call>`;
    expect(parseModelOutput('qwen3vl', out)).toEqual({ ok: true, actions: [{ action: 'click', x: 1, y: 2, space: 'rel1000' }] });
  });
});

describe('drag starts', () => {
  const drag: Action = { action: 'drag', x: 1, y: 2, to_x: 3, to_y: 4 };

  it('anthropic writes start_coordinate; qwen3vl a mouse_move before left_click_drag', () => {
    expect(anthropicInputs([{ ...drag, ...PX }])).toEqual([{ action: 'left_click_drag', start_coordinate: [1, 2], coordinate: [3, 4] }]);
    expect(qwenArgs([{ ...drag, ...R }])).toEqual([
      { action: 'mouse_move', coordinate: [1, 2] },
      { action: 'left_click_drag', coordinate: [3, 4] },
    ]);
    expect(() => FORMATS.anthropic.print([{ ...drag, path: [{ x: 2, y: 3 }] }])).toThrow(/intermediate path points are not expressible/);
  });

  it('qwen3vl keeps the 999 grid of a mouse_move drag start', () => {
    const tc = (args: unknown) => `<tool_call>\n${JSON.stringify({ name: 'computer_use', arguments: args })}\n</tool_call>`;
    const out = tc({ action: 'mouse_move', coordinate: [1, 2] }) + tc({ action: 'left_click_drag', coordinate: [3, 4] });
    expect(parseModelOutput('qwen3vl', out, { rel_divisor: 999 })).toEqual({
      ok: true,
      actions: [{ action: 'drag', x: 1, y: 2, space: 'rel1000', rel_divisor: 999, to_x: 3, to_y: 4 }],
    });
  });

  it('a left_click before left_click_drag is no drag start', () => {
    const out = JSON.stringify([
      { type: 'tool_use', name: 'computer', input: { action: 'left_click', coordinate: [1, 2] } },
      { type: 'tool_use', name: 'computer', input: { action: 'left_click_drag', coordinate: [3, 4] } },
    ]);
    expect(parseModelOutput('anthropic', out)).toEqual({ ok: false, error: 'block 2: left_click_drag: the drag start is unknown; give start_coordinate.' });
  });
});

describe('JSON-native formats (anthropic, openai_cua)', () => {
  it.each(['anthropic', 'openai_cua'])('%s: plain text is the answer, JSON-like text must parse, tool calls carry the thought', (name) => {
    expect(parseModelOutput(name, '  Done: 3 items.  ')).toEqual({ ok: true, actions: [{ action: 'answer', text: 'Done: 3 items.' }] });
    expect(parseModelOutput(name, '[{"type": "text"')).toEqual({ ok: false, error: expect.stringMatching(/^Truncated JSON in the output/) });
    expect(parseModelOutput(name, '{}')).toEqual({ ok: false, error: 'Unrecognised JSON output: {}.' });
    const args = name === 'anthropic' ? { action: 'mouse_move', coordinate: [3, 4] } : { action: { type: 'move', x: 3, y: 4 } };
    const msg = JSON.stringify({ content: ' Pointing. ', tool_calls: [{ name: 'computer', arguments: JSON.stringify(args) }] });
    expect(parseModelOutput(name, msg)).toEqual({ ok: true, thought: 'Pointing.', actions: [{ action: 'hover', x: 3, y: 4, space: 'image_px' }] });
  });

  it('openai_cua reports the reasoning summary of an output with no action', () => {
    const out = JSON.stringify([{ type: 'reasoning', summary: [{ type: 'summary_text', text: 'Hmm.' }] }]);
    expect(parseModelOutput('openai_cua', out)).toEqual({ ok: false, error: 'The output has neither a computer_call nor a message.', thought: 'Hmm.' });
  });
});
