// WebVoyager Set-of-Mark text actions. Based on the public MinorJerry/WebVoyager conventions: the screenshot
// carries numeric labels on interactive elements and the model replies `Thought: … Action: …` with one of
//   Click [n] | Type [n]; text | Scroll [WINDOW]; up|down | Scroll [n]; up|down | Wait | GoBack | Google | ANSWER; text
// Mapping: Click → click_label; Type → type_label with clear + submit (WebVoyager clears the field, types, presses
// Enter); Scroll [WINDOW] → a page scroll with only a direction (the executor's default distance); Scroll [n] → a
// scroll at the centre of element n (css_px), which needs the observation's SoM list in `opts.som`; Wait → 5 s;
// GoBack → back; Google → goto https://www.google.com/; ANSWER → answer.
// Exactly one action per reply (WebVoyager's protocol): a second `Action:` or a second action line is a failure.
import type { Action } from '../../protocol/action.ts';
import type { SomElement } from '../../protocol/observation.ts';
import { fail } from './failure.ts';
import { cleanThought, decodeOutput, parseWith } from './output.ts';
import { UnsupportedActionError, type FormatOptions, type ModelOutput, type ParseResult, type PolicyFormat } from './types.ts';

const NAME = 'webvoyager';
const WAIT_MS = 5000;
const GOOGLE = 'https://www.google.com/';
const ACTION_WORDS = /^(click|type|scroll|wait|goback|google|answer)\b/i;

/** The element list sent with the screenshot, one element per line: `[3] <button> "Search"`. */
export function somText(elements: SomElement[], maxText = 80): string {
  return elements
    .map((e) => {
      const text = e.text.replace(/\s+/g, ' ').trim();
      const shown = text.length > maxText ? `${text.slice(0, maxText)}…` : text;
      return `[${e.label}] <${e.tag}${e.role ? ` role=${e.role}` : ''}>${shown ? ` "${shown}"` : ''}`;
    })
    .join('\n');
}

function label(s: string, ctx: string): number {
  const n = Number(s);
  if (!Number.isInteger(n) || n < 0) fail(`${ctx}: the label must be a non-negative integer, got ${JSON.stringify(s)}.`);
  return n;
}

function toAction(line: string, rest: string, opts?: FormatOptions): Action {
  let m: RegExpExecArray | null;
  if ((m = /^click\s*\[?\s*(\S+?)\s*\]?\s*$/i.exec(line))) return { action: 'click_label', label: label(m[1], 'Click') };
  if ((m = /^type\s*\[?\s*(\d+)\s*\]?\s*[;,]\s?(.*)$/i.exec(line))) {
    let text = m[2];
    // The prompt shows "[Content]"; some models keep the brackets.
    if (/^\[[\s\S]*\]$/.test(text.trim())) text = text.trim().slice(1, -1);
    return { action: 'type_label', label: label(m[1], 'Type'), text, clear: true, submit: true };
  }
  if (/^type\b/i.test(line)) fail(`Malformed Type action ${JSON.stringify(line)}: expected "Type [n]; text".`);
  if ((m = /^scroll\s*\[?\s*(window|\d+)\s*\]?\s*[;,]?\s*\[?\s*(up|down)\s*\]?\s*$/i.exec(line))) {
    const direction = m[2].toLowerCase() as 'up' | 'down';
    if (m[1].toLowerCase() === 'window') return { action: 'scroll', direction };
    const n = label(m[1], 'Scroll');
    if (!opts?.som) fail(`Scroll [${n}] needs the element list of the observation (opts.som) to find element ${n}.`);
    const el = opts.som.find((e) => e.label === n);
    if (!el) fail(`Scroll [${n}]: no element with label ${n} in the observation.`);
    return { action: 'scroll', x: el.x + el.width / 2, y: el.y + el.height / 2, space: 'css_px', direction };
  }
  if (/^scroll\b/i.test(line)) fail(`Malformed Scroll action ${JSON.stringify(line)}: expected "Scroll [WINDOW]; down" or "Scroll [n]; up".`);
  if (/^wait\s*$/i.test(line)) return { action: 'wait', ms: WAIT_MS };
  if (/^go\s*back\s*$/i.test(line)) return { action: 'back' };
  if (/^google\s*$/i.test(line)) return { action: 'goto', url: GOOGLE };
  if ((m = /^answer\s*[;:,]\s?([\s\S]*)$/i.exec(line + rest))) {
    let text = m[1].trim();
    if (/^\[[\s\S]*\]$/.test(text)) text = text.slice(1, -1).trim();
    if (!text) fail('ANSWER without an answer text.');
    return { action: 'answer', text };
  }
  fail(`Unknown WebVoyager action ${JSON.stringify(line.slice(0, 60))}; expected Click, Type, Scroll, Wait, GoBack, Google or ANSWER.`);
}

function parse(output: ModelOutput, opts?: FormatOptions): ParseResult {
  let thought: string | undefined;
  return parseWith(
    () => {
      const text = decodeOutput(output).content;
      if (!text.trim()) fail('Empty output: expected "Thought: … Action: …".');
      const labels = [...text.matchAll(/(?:^|\n)[ \t*]*Action[ \t*]*:/gi)];
      if (labels.length === 0) fail('No "Action:" in the output.');
      if (labels.length > 1) fail(`Expected exactly one action, found ${labels.length} "Action:" lines.`);
      const at = labels[0].index! + labels[0][0].length;
      const before = text.slice(0, labels[0].index);
      const t = /Thought[ \t*]*:/i.exec(before);
      thought = cleanThought(t ? before.slice(t.index + t[0].length) : before);
      const body = text.slice(at).replace(/^[ \t*]+/, '');
      const nl = body.indexOf('\n');
      const line = (nl < 0 ? body : body.slice(0, nl)).trim().replace(/\*+$/, '').trim();
      const rest = nl < 0 ? '' : body.slice(nl);
      if (!line) fail('The "Action:" line is empty.');
      const a = toAction(line, rest, opts);
      if (a.action !== 'answer') {
        const extra = rest.split('\n').map((l) => l.trim()).filter(Boolean);
        if (extra.some((l) => ACTION_WORDS.test(l))) fail('Expected exactly one action; found another action line after the first.');
      }
      return { actions: [a], thought };
    },
    () => thought,
  );
}

function printAction(a: Action, opts?: FormatOptions): string {
  switch (a.action) {
    case 'click_label':
      return `Click [${a.label}]`;
    case 'type_label':
      return `Type [${a.label}]; ${a.text}`;
    case 'scroll': {
      const dir = a.direction ?? (a.dy !== undefined ? (a.dy > 0 ? 'down' : 'up') : 'down');
      if (dir !== 'up' && dir !== 'down') throw new UnsupportedActionError(NAME, 'scroll', 'only up and down');
      if (a.x === undefined || a.y === undefined) return `Scroll [WINDOW]; ${dir}`;
      const x = a.x;
      const y = a.y;
      const el = opts?.som?.find((e) => x >= e.x && x <= e.x + e.width && y >= e.y && y <= e.y + e.height);
      if (!el || (a.space && a.space !== 'css_px')) throw new UnsupportedActionError(NAME, 'scroll', 'a scroll at a point needs a SoM element (css_px) under it');
      return `Scroll [${el.label}]; ${dir}`;
    }
    case 'wait':
      return 'Wait';
    case 'back':
      return 'GoBack';
    case 'goto':
      if (/^https?:\/\/(www\.)?google\.com\/?$/i.test(a.url)) return 'Google';
      throw new UnsupportedActionError(NAME, 'goto', 'only the Google start page');
    case 'answer':
      return `ANSWER; ${a.text}`;
    default:
      throw new UnsupportedActionError(NAME, a.action, 'WebVoyager acts on numbered labels only');
  }
}

function print(actions: Action[], opts?: FormatOptions & { thought?: string }): string {
  if (actions.length !== 1) throw new UnsupportedActionError(NAME, `${actions.length} actions`, 'one action per reply');
  return `Thought: ${opts?.thought?.trim() || '…'}\nAction: ${printAction(actions[0], opts)}`;
}

function systemPrompt(): string {
  return [
    'You are browsing the web to complete a task, one step at a time. Each turn you get a screenshot in which the',
    'interactive elements carry numeric labels at their top-left corner, plus a text list of those elements.',
    'Pick the label of the element you want and reply with exactly one action:',
    '',
    'Click [n]             click element n',
    'Type [n]; text        clear the text box n, type text, then press Enter',
    'Scroll [WINDOW]; down scroll the page (or: up); use Scroll [n]; down to scroll inside element n',
    'Wait                  wait 5 seconds for the page',
    'GoBack                go back to the previous page',
    'Google                open the Google start page',
    'ANSWER; text          finish the task, giving the final answer',
    '',
    'Rules: one action per reply; do not repeat an action that did not change the page; type into text boxes only;',
    'answer only once everything the task asks for is known.',
    '',
    'Reply format:',
    'Thought: <a short reasoning about the screenshot and your next step>',
    'Action: <one action>',
  ].join('\n');
}

export const webvoyager: PolicyFormat = {
  name: NAME,
  description: 'WebVoyager Set-of-Mark text actions ("Thought: … Action: Click [5]"), label actions.',
  space: 'label',
  actions: ['click_label', 'type_label', 'scroll', 'wait', 'back', 'goto', 'answer'],
  systemPrompt,
  parse,
  print,
};
