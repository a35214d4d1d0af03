// Action text: a readable description of canonical actions (exports, viewer) and WebVoyager's text action
// language ("Click [5]", "Type [0]; text", "Scroll [WINDOW]; down", "Wait", "GoBack", "Google", "ANSWER; text")
// as found in its interact_messages.json: parsed for the reader, printed for the WebVoyager export.
import type { Action } from '../protocol/action.ts';

export interface WebVoyagerTurn {
  thought?: string;
  /** The text after "Action:" (trimmed), or undefined when the message has none. */
  action_text?: string;
  action?: Action;
}

export function splitThoughtAction(text: string): WebVoyagerTurn {
  const m = /Action:\s*([\s\S]*)$/i.exec(text);
  const thoughtMatch = /Thought:\s*([\s\S]*?)(?:\n\s*Action:|$)/i.exec(text);
  const thought = (thoughtMatch ? thoughtMatch[1] : m ? text.slice(0, m.index) : text).trim() || undefined;
  if (!m) return { thought };
  const action_text = m[1].trim();
  return { thought, action_text, action: parseWebVoyagerAction(action_text) };
}

function parseWebVoyagerAction(text: string): Action | undefined {
  const t = text.trim();
  let m: RegExpExecArray | null;
  if ((m = /^click\s*\[?(\d+)\]?/i.exec(t))) return { action: 'click_label', label: Number(m[1]) };
  // Grove's own readable form of a coordinate click (describeAction), as printed into WebVoyager exports.
  if ((m = /^click\s*\((-?[\d.]+),\s*(-?[\d.]+)\)/i.exec(t))) return { action: 'click', x: Number(m[1]), y: Number(m[2]), space: 'css_px' };
  if ((m = /^type\s*\[?(\d+)\]?\s*[;,]\s*([\s\S]*)$/i.exec(t)))
    // WebVoyager clears the field and presses Enter after typing.
    return { action: 'type_label', label: Number(m[1]), text: m[2].trim(), clear: true, submit: true };
  if ((m = /^scroll\s*\[?(window|\d+)\]?\s*[;,]\s*(up|down)/i.exec(t)))
    return { action: 'scroll', direction: m[2].toLowerCase() as 'up' | 'down', amount: 5 };
  if (/^wait\b/i.test(t)) return { action: 'wait', ms: 5000 };
  if (/^go\s*back\b/i.test(t)) return { action: 'back' };
  if (/^google\b/i.test(t)) return { action: 'goto', url: 'https://www.google.com/' };
  if ((m = /^answer\s*[;,:]?\s*([\s\S]*)$/i.exec(t))) return { action: 'answer', text: m[1].trim() };
  return undefined;
}

/**
 * Canonical → WebVoyager action text; coordinate actions have no WebVoyager form and get a readable one in page
 * pixels (`css`, the position the action resolved to), the same convention as the Online-Mind2Web export, which
 * the reader parses back as css_px.
 */
export function printWebVoyagerAction(a: Action, css?: { x: number; y: number }): string {
  switch (a.action) {
    case 'click_label':
      return `Click [${a.label}]`;
    case 'type_label':
      return `Type [${a.label}]; ${a.text}`;
    case 'scroll':
      return `Scroll [WINDOW]; ${a.direction === 'up' || (a.dy ?? 0) < 0 ? 'up' : 'down'}`;
    case 'wait':
      return 'Wait';
    case 'back':
      return 'GoBack';
    case 'goto':
      return /^https?:\/\/(www\.)?google\.[a-z.]+\/?$/i.test(a.url) ? 'Google' : `Goto ${a.url}`;
    case 'answer':
      return `ANSWER; ${a.text}`;
    default:
      return describeAction(a, css);
  }
}

const pt = (x?: number, y?: number) => (x === undefined || y === undefined ? '' : ` (${round(x)}, ${round(y)})`);
const round = (v: number) => Math.round(v * 10) / 10;

/** A short, human-readable description of a canonical action (logs, exports, the viewer). */
export function describeAction(a: Action, css?: { x: number; y: number }): string {
  const at = (x?: number, y?: number) => (css ? pt(css.x, css.y) : pt(x, y));
  switch (a.action) {
    case 'click':
      return `CLICK${a.button && a.button !== 'left' ? ` ${a.button}` : ''}${at(a.x, a.y)}${a.modifiers?.length ? ` with ${a.modifiers.join('+')}` : ''}`;
    case 'double_click':
      return `DOUBLE_CLICK${at(a.x, a.y)}`;
    case 'triple_click':
      return `TRIPLE_CLICK${at(a.x, a.y)}`;
    case 'right_click':
      return `RIGHT_CLICK${at(a.x, a.y)}`;
    case 'hover':
      return `HOVER${at(a.x, a.y)}`;
    case 'drag':
      return `DRAG${at(a.x, a.y)} -> (${round(a.to_x)}, ${round(a.to_y)})`;
    case 'type':
      return `TYPE ${JSON.stringify(a.text)}${at(a.x, a.y)}${a.clear ? ' (clear)' : ''}${a.submit ? ' + Enter' : ''}`;
    case 'key':
      return `KEY ${Array.isArray(a.keys) ? a.keys.join(', ') : a.keys}`;
    case 'scroll': {
      const dir = a.direction ? `${a.direction}${a.amount ? ` ${a.amount}` : ''}` : `dx=${a.dx ?? 0} dy=${a.dy ?? 0}`;
      return `SCROLL ${dir}${at(a.x, a.y)}`;
    }
    case 'goto':
      return `NAVIGATE -> ${a.url}`;
    case 'back':
      return 'GO_BACK';
    case 'forward':
      return 'GO_FORWARD';
    case 'reload':
      return 'RELOAD';
    case 'new_tab':
      return `NEW_TAB${a.url ? ` -> ${a.url}` : ''}`;
    case 'switch_tab':
      return `SWITCH_TAB ${a.index}`;
    case 'close_tab':
      return `CLOSE_TAB${a.index === undefined ? '' : ` ${a.index}`}`;
    case 'wait':
      return `WAIT${a.ms ? ` ${a.ms}ms` : ''}`;
    case 'click_label':
      return `CLICK [${a.label}]`;
    case 'type_label':
      return `TYPE ${JSON.stringify(a.text)} into [${a.label}]`;
    case 'answer':
      return `ANSWER: ${a.text}`;
    case 'terminate':
      return `TERMINATE${a.status ? ` ${a.status}` : ''}${a.reason ? `: ${a.reason}` : ''}`;
  }
}
