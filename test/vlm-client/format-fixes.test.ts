// Formats as their families publish them: reasoning before tool calls (Qwen3-VL), a bare left_click after
// mouse_move (Anthropic's reference loop), UI-TARS-1.5 absolute pixels, untagged call JSON after a thought.
import { describe, expect, it } from 'vitest';
import { smartResize } from '../../protocol/smart-resize.ts';
import { getFormat, parseModelOutput } from '../../vlm-client/formats/index.ts';

const call = (args: object) => `<tool_call>\n${JSON.stringify({ name: 'computer_use', arguments: args })}\n</tool_call>`;

describe('qwen3vl reasoning', () => {
  it('strips a <think> block that mentions <tool_call> before looking for calls', () => {
    const out = `<think>The search box is at the top. I will answer with ${call({ action: 'left_click', coordinate: [1, 2] })} — no, the box is at [500, 40].</think>\n${call({ action: 'left_click', coordinate: [500, 40] })}`;
    const r = parseModelOutput('qwen3vl', out);
    expect(r).toMatchObject({ ok: true, actions: [{ action: 'click', x: 500, y: 40, space: 'rel1000' }] });
    expect(r.thought).toMatch(/^The search box is at the top/);
  });

  it('reads output that starts inside the reasoning (the template opened <think>)', () => {
    const out = `I should type into <tool_call> the field first.\n</think>\n${call({ action: 'type', text: 'shoes' })}`;
    expect(parseModelOutput('qwen3vl', out)).toMatchObject({ ok: true, actions: [{ action: 'type', text: 'shoes' }] });
  });

  it('reads a bare call object after the reasoning', () => {
    const out = `<think>click it</think>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [10, 20]}}`;
    expect(parseModelOutput('qwen3vl', out)).toMatchObject({ ok: true, actions: [{ action: 'click', x: 10, y: 20 }], thought: 'click it' });
  });
});

describe('bare left_click after mouse_move', () => {
  const use = (input: object) => ({ type: 'tool_use', id: 'toolu_1', name: 'computer', input });

  it('clicks where mouse_move pointed in the same output (Anthropic)', () => {
    const out = JSON.stringify([use({ action: 'mouse_move', coordinate: [300, 200] }), use({ action: 'left_click' })]);
    const r = parseModelOutput('anthropic', out, { width: 1024, height: 800 });
    expect(r).toMatchObject({ ok: true, actions: [{ action: 'hover', x: 300, y: 200 }, { action: 'click', x: 300, y: 200, space: 'image_px' }] });
  });

  it('clicks where an earlier turn left the pointer (the environment reports it)', () => {
    const out = JSON.stringify([use({ action: 'left_click' })]);
    const r = parseModelOutput('anthropic', out, { width: 1024, height: 800, pointer: { x: 640.5, y: 99, space: 'css_px' } });
    expect(r).toMatchObject({ ok: true, actions: [{ action: 'click', x: 640.5, y: 99, space: 'css_px' }] });
    const dbl = parseModelOutput('qwen3vl', call({ action: 'double_click' }), { pointer: { x: 5, y: 6, space: 'css_px' } });
    expect(dbl).toMatchObject({ ok: true, actions: [{ action: 'double_click', x: 5, y: 6, space: 'css_px' }] });
  });

  it('says so when the pointer position is unknown', () => {
    const r = parseModelOutput('anthropic', JSON.stringify([use({ action: 'left_click' })]));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/no coordinate, and the pointer position is unknown/);
  });
});

describe('UI-TARS-1.5 absolute coordinates', () => {
  it('reads pixels of the smart-resized image and maps them onto the screenshot', () => {
    // UI-TARS' own constants: factor 28, 100·28² ≤ pixels ≤ 16384·28². 1280x1000 → 1288x1008.
    expect(smartResize(1280, 1000, 28, 100 * 28 * 28, 16384 * 28 * 28)).toEqual({ width: 1288, height: 1008 });
    const out = "Thought: the search box\nAction: click(start_box='<|box_start|>(644,504)<|box_end|>')";
    const r = parseModelOutput('uitars15', out, { width: 1280, height: 1000 });
    expect(r).toMatchObject({ ok: true, actions: [{ action: 'click', x: 640, y: 500, space: 'image_px' }] });
    // The same text read with the 1.0 convention is a point on the 0..1000 grid.
    expect(parseModelOutput('uitars', out)).toMatchObject({ ok: true, actions: [{ action: 'click', x: 644, y: 504, space: 'rel1000' }] });
    // Beyond the image the model saw: a parse failure, not a click off the page.
    const off = parseModelOutput('uitars15', "Action: click(point='<point>1300 20</point>')", { width: 1280, height: 1000 });
    expect(!off.ok && off.error).toMatch(/outside the 1288x1008 image/);
    expect(parseModelOutput('uitars15', out).ok).toBe(false);
  });

  it('prints what the model would write and parses it back', () => {
    const f = getFormat('UI-TARS-1.5')!;
    expect(f.name).toBe('uitars15');
    const opts = { width: 1280, height: 720 };
    const text = f.print([{ action: 'drag', x: 100, y: 50, to_x: 640, to_y: 360, space: 'image_px' }], opts);
    const seen = smartResize(1280, 720, 28, 100 * 28 * 28, 16384 * 28 * 28);
    expect(text).toContain(`start_point='<point>${Math.round((100 * seen.width) / 1280)} ${Math.round((50 * seen.height) / 720)}</point>'`);
    const back = f.parse(text, opts);
    expect(back.ok && back.actions[0]).toMatchObject({ action: 'drag', space: 'image_px' });
    const d = back.ok ? (back.actions[0] as { x: number; to_x: number }) : { x: 0, to_x: 0 };
    expect(Math.abs(d.x - 100)).toBeLessThan(1);
    expect(Math.abs(d.to_x - 640)).toBeLessThan(1);
  });
});
