// The tool responses and env message Orchard-GUI's env server gives (MSR-Orchard/slime examples/orchard_gui/env/
// web_env.py, read for what it reports, not copied): each call's outcome with the facts web_env computes — the
// element clicked or hovered and the field typed into (tag, type, explicit role, checked state, label), the text
// typed and the keys pressed, the seconds waited, tab indices, the CSS-px point, a navigation or a new tab — and
// the DOM-change line of the env message (elements that appeared or disappeared between the observations). The
// fixed forms (`Succeed: \`click\` … at (x, y) executed.`, tab indices, key lists) follow web_env because a model
// reads them; the notes are our wording of the same facts.
import type { FocusedElement, ResolvedAction, SomElement, Tab } from '../../protocol/observation.ts';
import { orchardNotes } from '../../vlm-client/formats/orchard-feedback.ts';
import { orchardKey } from '../../vlm-client/formats/orchard-keys.ts';

/** The page facts a tool response compares before and after a call. */
export interface PageFacts {
  url: string;
  tabs: Tab[];
  som?: SomElement[];
  focused?: FocusedElement | null;
}

export interface CallFacts {
  name: string;
  args: Record<string, unknown>;
  /** The call's points in CSS px, as web_env converts them (screen px / dpr, then off the model's grid). */
  css: Record<string, [number, number]>;
  before: PageFacts;
  after: PageFacts;
  resolved: ResolvedAction[];
}

/** Python's `f"{v:.0f}"`: the nearest integer, ties to even. */
export function py0f(v: number): string {
  const f = Math.floor(v);
  const r = v - f === 0.5 ? (f % 2 === 0 ? f : f + 1) : Math.round(v);
  return String(Object.is(r, -0) ? 0 : r);
}

/** Python's repr of a float (a converted point is always a float there). */
export function pyFloat(v: number): string {
  return Number.isInteger(v) ? `${v}.0` : String(v);
}

/** Python's repr of a list of strings (`['Enter', "it's"]`). */
export function pyStrList(items: unknown[]): string {
  const one = (s: unknown): string => {
    if (typeof s !== 'string') return String(s);
    const q = s.includes("'") && !s.includes('"') ? '"' : "'";
    const body = s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
    return q + (q === "'" ? body.replace(/'/g, "\\'") : body) + q;
  };
  return `[${items.map(one).join(', ')}]`;
}

const IMPLICIT_ROLES: Record<string, string> = { a: 'link', button: 'button', summary: 'button', select: 'combobox', textarea: 'textbox' };

/** The role an element has without a role attribute (SoM reports implicit roles; web_env names explicit ones only). */
function implicitRole(tag: string, type: string | undefined): string | undefined {
  if (tag === 'input') {
    const t = (type ?? 'text').toLowerCase();
    if (t === 'checkbox' || t === 'radio') return t;
    if (['submit', 'button', 'reset', 'image'].includes(t)) return 'button';
    return 'textbox';
  }
  return IMPLICIT_ROLES[tag];
}

const short = (s: string) => (s.length > 30 ? `${s.slice(0, 30)}...` : s);

function describe(tag: string, type: string | undefined, role: string | undefined, label: string, checked?: boolean): string {
  let d = `<${tag}>`;
  if (type) d += ` type=${type}`;
  if (role && role !== implicitRole(tag, type)) d += ` role=${role}`;
  if (checked !== undefined && tag === 'input' && (type === 'checkbox' || type === 'radio')) d += checked ? ' checked' : ' unchecked';
  if (label.trim()) d += ` "${short(label.trim())}"`;
  return d;
}

/** The innermost element of the SoM list under a CSS point ('' when none). */
export function elementAt(som: SomElement[] | undefined, x: number, y: number): string {
  const hits = (som ?? []).filter((e) => x >= e.x && x <= e.x + e.width && y >= e.y && y <= e.y + e.height);
  if (!hits.length) return '';
  const e = hits.reduce((a, b) => (b.width * b.height < a.width * a.height ? b : a));
  return describe(e.tag, e.type, e.role, e.text, e.checked);
}

export function focusedDescription(f: FocusedElement | null | undefined): string {
  return f ? describe(f.tag, f.type, f.role, f.label) : '';
}

const activeIndex = (tabs: Tab[]) => Math.max(0, tabs.findIndex((t) => t.active));

/** What changed in the page's URL and tabs, as web_env appends it to click and other responses. */
function changes(f: CallFacts, noteUnchanged: boolean): string {
  let s = '';
  if (f.after.url !== f.before.url) s += ` Page navigated to ${f.after.url}.`;
  if (f.after.tabs.length > f.before.tabs.length) s += ` New tab opened (tab ${f.after.tabs.length - 1}).`;
  if (noteUnchanged && f.after.url === f.before.url && f.after.tabs.length === f.before.tabs.length) {
    s += ' Note: the click changed neither the URL nor the tabs.';
  }
  return s;
}

/** Checks web_env makes before running a call, answered without running it (null: run it). */
export function refuse(name: string, args: Record<string, unknown>, before: PageFacts): string | null {
  if (name === 'close_tab' && before.tabs.length <= 1) return 'Failed: `close_tab` cannot close the only tab left open; the page stays.';
  if (name === 'switch_tab' && typeof args.tab_index === 'number' && (args.tab_index < 0 || args.tab_index >= before.tabs.length)) {
    return `Failed: \`switch_tab\` tab_index ${args.tab_index} out of range (0-${before.tabs.length - 1}).`;
  }
  if (name === 'press_keys') {
    const keys = typeof args.keys === 'string' ? [args.keys] : args.keys;
    if (Array.isArray(keys) && keys.length && keys.every((k) => typeof k === 'string') && !keys.some((k) => orchardKey(k) !== undefined)) {
      return `Failed: no valid keys found in ${pyStrList(keys)}.`;
    }
  }
  return null;
}

/** A call that is not one of the tools (web_env answers it without a `Failed:` prefix). */
export function unknownTool(name: string): string {
  return `Error: Action ${name} is not supported by the environment!`;
}

/** The response to a call the tool-call parser rejected (a missing or malformed argument). */
export function invalidCall(name: string, error: string): string {
  return `Failed: \`${name}\` ${error}`;
}

/** The response to a call that ran. */
export function toolResponse(f: CallFacts): string {
  const err = f.resolved.find((r) => r.error !== null)?.error;
  const p = f.css.point_2d;
  const at = p ? ` at (${py0f(p[0])}, ${py0f(p[1])})` : '';
  if (err) return `Failed: \`${f.name}\`${f.name === 'click' ? at : ''} execution failed: ${err.message}`;
  const notes = f.resolved.map(orchardNotes).join('');
  switch (f.name) {
    case 'click': {
      const el = p ? elementAt(f.before.som, p[0], p[1]) : '';
      return `Succeed: \`click\`${el ? ` on ${el}` : ''}${at} executed.${changes(f, true)}`;
    }
    case 'hover': {
      const el = p ? elementAt(f.before.som, p[0], p[1]) : '';
      return `Succeed: \`hover\`${el ? ` on ${el}` : ''}${at} executed.`;
    }
    case 'write': {
      const into = focusedDescription(f.after.focused ?? f.before.focused);
      const moved = f.after.url !== f.before.url ? ` Page navigated to ${f.after.url}.` : '';
      return `Succeed: \`write\` typed "${String(f.args.message ?? '')}"${into ? ` into ${into}` : ''}.${moved}${notes}`;
    }
    case 'scroll': {
      const direction = typeof f.args.direction === 'string' ? f.args.direction : 'down';
      const amount = Math.max(0, Math.min(1, typeof f.args.amount === 'number' ? f.args.amount : 0.5));
      const point = p ? ` at (${pyFloat(p[0])}, ${pyFloat(p[1])})` : '';
      return `Succeed: \`scroll\` ${direction} by ${py0f(amount * 100)}%${point} executed.${notes}`;
    }
    case 'press_keys': {
      const keys = (typeof f.args.keys === 'string' ? [f.args.keys] : (f.args.keys as string[])).map(orchardKey).filter((k) => k !== undefined);
      const moved = f.after.url !== f.before.url ? ` Page navigated to ${f.after.url}.` : '';
      return `Succeed: \`press_keys\` ${pyStrList(keys)} executed.${moved}`;
    }
    case 'wait':
      return `Succeed: waited ${f.args.seconds ?? 3} seconds.`;
    case 'done':
      return `Succeed: task marked as done. Response: ${String(f.args.response ?? '')}`;
    case 'goto_url':
      return `Succeed: \`goto_url\` navigated to ${String(f.args.url)}.`;
    case 'new_tab':
      return `Succeed: \`new_tab\` opened blank tab (tab ${activeIndex(f.after.tabs)}).`;
    case 'switch_tab':
      return `Succeed: \`switch_tab\` switched to tab ${activeIndex(f.after.tabs)} (${f.after.url}).`;
    case 'close_tab':
      return `Succeed: \`close_tab\` closed tab ${activeIndex(f.before.tabs)}, now on tab ${activeIndex(f.after.tabs)}.`;
    default:
      return `Succeed: \`${f.name}\` executed.${notes}`;
  }
}

/** web_env's element signature for its DOM diff: tag, input type, label (first 30 characters). */
function signature(e: SomElement): string {
  return JSON.stringify([e.tag, e.type ?? '', e.text.trim().slice(0, 30)]);
}

function shown(sig: string): string {
  const [tag, type, text] = JSON.parse(sig) as [string, string, string];
  return `<${tag}>${type ? ` type=${type}` : ''}${text ? ` '${text}'` : ''}`;
}

function counted(list: string[], what: string): string {
  const more = list.length > 5 ? ` and ${list.length - 5} more` : '';
  return `${list.length} element(s) ${what} [${list.slice(0, 5).map(shown).join(', ')}]${more}`;
}

/** The elements that appeared and disappeared between two a11ytrees (as multisets of signatures); '' if none. */
export function domChanges(before: SomElement[], after: SomElement[]): string {
  const count = (l: SomElement[]) => {
    const m = new Map<string, number>();
    for (const e of l) m.set(signature(e), (m.get(signature(e)) ?? 0) + 1);
    return m;
  };
  const b = count(before);
  const a = count(after);
  const diff = (x: Map<string, number>, y: Map<string, number>) => [...x].flatMap(([k, n]) => Array<string>(Math.max(0, n - (y.get(k) ?? 0))).fill(k));
  const added = diff(a, b);
  const removed = diff(b, a);
  const parts = [...(added.length ? [counted(added, 'appeared')] : []), ...(removed.length ? [counted(removed, 'disappeared')] : [])];
  return parts.length ? `DOM changes: ${parts.join('; ')}.` : '';
}
