// Steps several formats print alike: typing at a point, scrolling by direction and notches, function tool
// definitions, and the check that an action is in the coordinate space a format writes.
import type { Action } from '../../protocol/action.ts';
import type { ToolDef } from '../client.ts';

type TypeAction = Extract<Action, { action: 'type' }>;
type ScrollAction = Extract<Action, { action: 'scroll' }>;

/**
 * A canonical type action as the steps of a format without "type at a point": click the point (when given), select
 * all (`clear`), type the text, press Enter (`submit`). Formats whose typing step carries the submit itself
 * (UI-TARS' trailing newline) give no `enter`. Steps are built in order, only when needed.
 */
export function typeSteps<T>(
  a: TypeAction,
  space: 'rel1000' | 'image_px',
  format: string,
  step: { click: (x: number, y: number) => T; selectAll: () => T; type: (text: string) => T; enter?: () => T },
): T[] {
  const out: T[] = [];
  if (a.x !== undefined && a.y !== undefined) {
    assertSpace(a, space, format);
    out.push(step.click(a.x, a.y));
  }
  if (a.clear) out.push(step.selectAll());
  out.push(step.type(a.text));
  if (a.submit && step.enter) out.push(step.enter());
  return out;
}

/**
 * Direction and size of a canonical scroll for formats that scroll by direction + wheel notches. Without a
 * direction, dy (else dx) gives it, and its size; with neither it is down. `notches` is undefined when no size is
 * given; `fromPx` says it was converted from pixels (100 px a notch) and may be fractional.
 */
export function scrollNotches(a: ScrollAction): { direction: 'up' | 'down' | 'left' | 'right'; notches: number | undefined; fromPx: boolean } {
  let direction = a.direction;
  // A viewport fraction is taken on a 1000 px viewport (Grove's default height) for formats that count notches.
  let notches = a.amount !== undefined ? (a.unit === 'px' ? a.amount / 100 : a.unit === 'viewport' ? a.amount * 10 : a.amount) : undefined;
  let fromPx = a.unit === 'px' || a.unit === 'viewport';
  if (!direction) {
    if (a.dy) [direction, notches, fromPx] = [a.dy > 0 ? 'down' : 'up', Math.abs(a.dy) / 100, true];
    else if (a.dx) [direction, notches, fromPx] = [a.dx > 0 ? 'right' : 'left', Math.abs(a.dx) / 100, true];
    else direction = 'down';
  }
  return { direction, notches, fromPx };
}

/** A function tool whose arguments are one JSON object with these properties. */
export function functionTool(name: string, description: string, properties: Record<string, unknown>, required?: string[]): ToolDef {
  return { type: 'function', function: { name, description, parameters: { type: 'object', ...(required ? { required } : {}), properties } } };
}

/** Checks that an action's coordinates are in the space the format writes (print does not convert). */
export function assertSpace(a: { space?: string; action: string }, space: 'rel1000' | 'image_px', format: string): void {
  if (a.space !== undefined && a.space !== space) {
    throw new RangeError(`The ${format} format writes ${space} coordinates; the ${a.action} action is in ${a.space}. Convert it first.`);
  }
}
