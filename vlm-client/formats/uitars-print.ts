// Printing canonical actions as UI-TARS text: `Thought: …` then `Action:` calls, points in the 1.5 `<point>x y</point>`
// style (or 1.0 boxes with `variant: 'box'`), on the 0..1000 grid or in UI-TARS-1.5's absolute pixels.
import type { Action } from '../../protocol/action.ts';
import { combosOf, splitCombo, styledKey } from './keys.ts';
import { assertSpace, scrollNotches, typeSteps } from './print-steps.ts';
import { UnsupportedActionError, type FormatOptions } from './types.ts';
import { fmt, q } from './uitars-syntax.ts';
import { absoluteSizes } from './uitars-space.ts';

const NAME = 'uitars';

function printAction(a: Action, opts: FormatOptions | undefined, abs: boolean): string[] {
  const box = opts?.variant === 'box';
  const space = abs ? 'image_px' : 'rel1000';
  // UI-TARS-1.5 writes whole pixels of the smart-resized image.
  const model = (x: number, y: number): [string, string] => {
    if (!abs) return [fmt(x), fmt(y)];
    const { shot, seen } = absoluteSizes(opts, `print ${a.action}`);
    return [String(Math.round((x * seen.width) / shot.width)), String(Math.round((y * seen.height) / shot.height))];
  };
  const pt = (x: number, y: number) => {
    const [mx, my] = model(x, y);
    return box ? `start_box='<|box_start|>(${mx},${my})<|box_end|>'` : `point='<point>${mx} ${my}</point>'`;
  };
  const dragPt = (x: number, y: number, key: 'start' | 'end') => {
    const [mx, my] = model(x, y);
    return box ? `${key}_box='<|box_start|>(${mx},${my})<|box_end|>'` : `${key}_point='<point>${mx} ${my}</point>'`;
  };
  switch (a.action) {
    case 'click':
      assertSpace(a, space, NAME);
      if (a.modifiers?.length) throw new UnsupportedActionError(NAME, 'click', 'modifier keys cannot be held');
      if (a.button === 'middle') throw new UnsupportedActionError(NAME, 'click', 'no middle button');
      return [`${a.button === 'right' ? 'right_single' : 'click'}(${pt(a.x, a.y)})`];
    case 'double_click':
      assertSpace(a, space, NAME);
      return [`left_double(${pt(a.x, a.y)})`];
    case 'right_click':
      assertSpace(a, space, NAME);
      return [`right_single(${pt(a.x, a.y)})`];
    case 'hover':
      assertSpace(a, space, NAME);
      return [`hover(${pt(a.x, a.y)})`];
    case 'drag':
      assertSpace(a, space, NAME);
      if (a.path?.length) throw new UnsupportedActionError(NAME, 'drag', 'intermediate path points are not expressible');
      return [`drag(${dragPt(a.x, a.y, 'start')}, ${dragPt(a.to_x, a.to_y, 'end')})`];
    case 'key':
      return combosOf(a.keys).map((combo) => `hotkey(key=${q(splitCombo(combo).map((k) => styledKey(k, 'lower')).join(' '))})`);
    case 'type':
      // A trailing newline submits, so there is no separate Enter step.
      return typeSteps(a, space, NAME, {
        click: (x, y) => `click(${pt(x, y)})`,
        selectAll: () => `hotkey(key='ctrl a')`,
        type: (text) => `type(content=${q(text + (a.submit ? '\n' : ''))})`,
      });
    case 'scroll': {
      const dir = scrollNotches(a).direction;
      if (a.x !== undefined && a.y !== undefined) {
        assertSpace(a, space, NAME);
        return [`scroll(${pt(a.x, a.y)}, direction='${dir}')`];
      }
      return [`scroll(direction='${dir}')`];
    }
    case 'wait':
      return ['wait()'];
    case 'answer':
      return [`finished(content=${q(a.text)})`];
    case 'terminate':
      return [a.status === 'failure' ? 'call_user()' : 'finished()'];
    default:
      throw new UnsupportedActionError(NAME, a.action, 'UI-TARS has no such action');
  }
}

export function print(actions: Action[], opts: (FormatOptions & { thought?: string }) | undefined, abs: boolean): string {
  const lines = actions.flatMap((a) => printAction(a, opts, abs));
  return `Thought: ${opts?.thought?.trim() || '…'}\nAction: ${lines.join('\n\n')}`;
}
