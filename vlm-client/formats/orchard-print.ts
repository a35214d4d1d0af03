// Printing canonical actions as Orchard-GUI output: what the published prompt teaches, `<think>` then one
// `<tool_call>` block per call; actions Orchard has no tool for are written with the keys that do the same.
import type { Action } from '../../protocol/action.ts';
import { canonicalKey, combosOf, splitCombo } from './keys.ts';
import { assertSpace } from './print-steps.ts';
import { UnsupportedActionError, type FormatOptions } from './types.ts';

const NAME = 'orchard';

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

export function print(actions: Action[], opts?: FormatOptions & { thought?: string }): string {
  const blocks = actions.flatMap(toCalls).map((c) => `<tool_call>\n${JSON.stringify(c)}\n</tool_call>`);
  const thought = opts?.thought?.trim();
  return [thought ? `<think>\n${thought}\n</think>` : undefined, ...blocks].filter(Boolean).join('\n');
}

/** The Orchard tool a canonical action is written with (for feedback lines). */
export function toolName(a: Action): string {
  try {
    return toCalls(a)[0]?.name ?? a.action;
  } catch {
    return a.action;
  }
}
