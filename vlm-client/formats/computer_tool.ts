// The computer-tool action vocabulary shared by the Anthropic computer tool and Qwen-VL's `computer_use` (which is
// modelled on it): left_click, right_click, middle_click, double_click, triple_click, mouse_move, left_click_drag
// and type, each with a `coordinate` [x, y] (and `start_coordinate` for drags). This module maps those actions to
// canonical actions (readComputerAction) and canonical pointer actions back (printComputerAction; typing is printed
// with common.ts' typeSteps). What differs between the formats is passed in: the coordinate space, the error
// context, how a drag start is written, and whether modifier keys can be held during a click. Keys, scrolling,
// waiting and the actions only one format has stay in the formats.
import type { Action } from '../../protocol/action.ts';
import { describe, fail } from './failure.ts';
import { point, pxPoint, relPoint, str } from './args.ts';
import { canonicalKey, styledKey } from './keys.ts';
import { assertSpace } from './print-steps.ts';
import { UnsupportedActionError, type FormatOptions } from './types.ts';

/** One tool input / argument object (`{ action: 'left_click', coordinate: [x, y] }`). */
export type ToolInput = Record<string, unknown>;

export type ToolSpace = 'image_px' | 'rel1000';

const MODIFIERS = { Alt: 'Alt', Control: 'Control', Meta: 'Meta', Shift: 'Shift' } as const;
type Modifier = keyof typeof MODIFIERS;

/** Point fields read from a coordinate argument (what `pxPoint` / `relPoint` return). */
export type ToolPoint = ReturnType<typeof pxPoint> | ReturnType<typeof relPoint>;
type PointFields = Omit<Extract<Action, { action: 'hover' }>, 'action'>;

/** A reader of the `[x, y]` argument `key` (default `coordinate`) of `args`, range-checked in `space`. */
export function coordinateReader(args: ToolInput, ctx: string, space: ToolSpace, opts?: FormatOptions): (key?: string) => ToolPoint {
  return (key = 'coordinate') => {
    const [x, y] = point(args, key, ctx);
    return space === 'rel1000' ? relPoint(x, y, ctx, opts) : pxPoint(x, y, ctx, opts);
  };
}

export interface ReadOptions {
  /** Error context, e.g. "tool call 1: left_click" or "computer_use left_click (call 1)". */
  ctx: string;
  /** Reads a coordinate argument (see `coordinateReader`). */
  at: (key?: string) => ToolPoint;
  /** Advice when left_click_drag has neither start_coordinate nor a mouse_move just before it. */
  dragHint: string;
  /** The format writes modifier keys held during left_click in `text` ("shift", "ctrl+alt"); otherwise `text` is ignored. */
  modifiersInText?: boolean;
  /** Where an earlier turn left the pointer (FormatOptions.pointer), for a click without a coordinate. */
  pointer?: FormatOptions['pointer'];
}

/**
 * The point of a click action: its coordinate, or — when it has none, as Anthropic's reference loop allows — where
 * the pointer is: a `mouse_move` just before it in this output, else the position the environment reported.
 */
function clickPoint(args: ToolInput, out: Action[], r: ReadOptions): PointFields {
  if (args.coordinate !== undefined && args.coordinate !== null) return r.at();
  const prev = out[out.length - 1];
  if (prev?.action === 'hover') return { x: prev.x, y: prev.y, space: prev.space, ...(prev.rel_divisor ? { rel_divisor: prev.rel_divisor } : {}) };
  if (r.pointer) return { x: r.pointer.x, y: r.pointer.y, space: r.pointer.space };
  fail(`${r.ctx}: no coordinate, and the pointer position is unknown (move the mouse first or give a coordinate).`);
}

/**
 * Appends the canonical action for a shared computer-tool action and returns true; returns false (appending
 * nothing) for any other action name, which the format then handles itself.
 * left_click → click, right_click, middle_click → click{button: middle}, double_click, triple_click,
 * mouse_move → hover, left_click_drag → drag, type. A left_click_drag without start_coordinate starts where a
 * mouse_move just before it in `out` pointed; that hover is replaced by the drag.
 */
export function readComputerAction(action: string, args: ToolInput, out: Action[], r: ReadOptions): boolean {
  const { ctx, at } = r;
  switch (action) {
    case 'left_click': {
      const m = r.modifiersInText ? heldModifiers(args, ctx) : undefined;
      out.push({ action: 'click', ...clickPoint(args, out, r), ...(m ? { modifiers: m } : {}) });
      return true;
    }
    case 'right_click':
      out.push({ action: 'right_click', ...clickPoint(args, out, r) });
      return true;
    case 'middle_click':
      out.push({ action: 'click', ...clickPoint(args, out, r), button: 'middle' });
      return true;
    case 'double_click':
      out.push({ action: 'double_click', ...clickPoint(args, out, r) });
      return true;
    case 'triple_click':
      out.push({ action: 'triple_click', ...clickPoint(args, out, r) });
      return true;
    case 'mouse_move':
      out.push({ action: 'hover', ...at() });
      return true;
    case 'left_click_drag': {
      const to = at();
      let from: PointFields;
      if (args.start_coordinate !== undefined) from = at('start_coordinate');
      else {
        const prev = out[out.length - 1];
        if (prev?.action !== 'hover') fail(`${ctx}: the drag start is unknown; ${r.dragHint}.`);
        out.pop();
        from = { x: prev.x, y: prev.y, space: prev.space, ...(prev.rel_divisor ? { rel_divisor: prev.rel_divisor } : {}) };
      }
      out.push({ action: 'drag', ...from, to_x: to.x, to_y: to.y });
      return true;
    }
    case 'type':
      out.push({ action: 'type', text: str(args, 'text', ctx) });
      return true;
    default:
      return false;
  }
}

function heldModifiers(args: ToolInput, ctx: string): Modifier[] | undefined {
  if (args.text === undefined || args.text === null || args.text === '') return undefined;
  if (typeof args.text !== 'string') fail(`${ctx}: "text" (held modifiers) must be a string, got ${describe(args.text)}.`);
  return args.text.split('+').map((k) => {
    const m = canonicalKey(k.trim());
    if (!(m in MODIFIERS)) fail(`${ctx}: "${k}" is not a modifier key (shift, ctrl, alt, super).`);
    return m as Modifier;
  });
}

export interface PrintOptions {
  format: string;
  space: ToolSpace;
  /**
   * How a drag names its start: a `start_coordinate` argument of left_click_drag (Anthropic), or a mouse_move to
   * the start before left_click_drag (Qwen's convention: the drag starts at the pointer).
   */
  dragStart: 'start_coordinate' | 'mouse_move';
  /** Modifier keys held during a left click are written in `text` (xdotool names); otherwise they are unsupported. */
  modifiersInText?: boolean;
}

/**
 * Canonical pointer actions (click, right_click, double_click, triple_click, hover, drag) → computer-tool inputs;
 * undefined for any other action, which the format prints itself. Coordinates must already be in `space`.
 */
export function printComputerAction(a: Action, p: PrintOptions): ToolInput[] | undefined {
  const c = (x: number, y: number) => [x, y];
  switch (a.action) {
    case 'click': {
      assertSpace(a, p.space, p.format);
      const name = a.button === 'right' ? 'right_click' : a.button === 'middle' ? 'middle_click' : 'left_click';
      const input: ToolInput = { action: name, coordinate: c(a.x, a.y) };
      if (a.modifiers?.length) {
        if (!p.modifiersInText) throw new UnsupportedActionError(p.format, 'click', 'modifier keys cannot be held during a click');
        if (name !== 'left_click') throw new UnsupportedActionError(p.format, 'click', 'modifiers only with the left button');
        input.text = a.modifiers.map((m) => styledKey(m, 'xdotool')).join('+');
      }
      return [input];
    }
    case 'right_click':
    case 'double_click':
    case 'triple_click':
      assertSpace(a, p.space, p.format);
      return [{ action: a.action, coordinate: c(a.x, a.y) }];
    case 'hover':
      assertSpace(a, p.space, p.format);
      return [{ action: 'mouse_move', coordinate: c(a.x, a.y) }];
    case 'drag':
      assertSpace(a, p.space, p.format);
      if (a.path?.length) throw new UnsupportedActionError(p.format, 'drag', 'intermediate path points are not expressible');
      if (p.dragStart === 'start_coordinate') {
        return [{ action: 'left_click_drag', start_coordinate: c(a.x, a.y), coordinate: c(a.to_x, a.to_y) }];
      }
      return [
        { action: 'mouse_move', coordinate: c(a.x, a.y) },
        { action: 'left_click_drag', coordinate: c(a.to_x, a.to_y) },
      ];
    default:
      return undefined;
  }
}
