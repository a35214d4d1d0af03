// One definition per canonical action: name, description, handler. Handlers throw ActionFailure for
// expected problems (bad coordinates, unknown label...); the sandbox turns every error into
// `last_action_error` — an action never fails the step itself.
import type { Page } from 'playwright-core';
import type { Action, ActionName, CoordinateSpace } from '../protocol/action.ts';
import type { ActionErrorCode } from '../protocol/errors.ts';
import type { SomElement } from '../protocol/observation.ts';
import type { PointInput } from './coords.ts';
import { normalizeKeys } from './keys.ts';
import type { Progress } from '../sandbox/progress.ts';
import { fieldValue, focusedEditable, typeText } from './typing.ts';
import { nextFrames, scrollProbe } from './scrolling.ts';

export class ActionFailure extends Error {
  readonly code: ActionErrorCode;
  constructor(code: ActionErrorCode, message: string) {
    super(message);
    this.name = 'ActionFailure';
    this.code = code;
  }
}

type XY = { x: number; y: number };

/** What an action reports about its coordinates and effect (see ResolvedAction in protocol/observation.ts). */
export interface ActionRecord {
  space?: CoordinateSpace;
  raw?: XY;
  css?: XY;
  to_css?: XY;
  scrolled?: { dx: number; dy: number };
  field_value?: string;
  inserted_chars?: number;
}

interface ActionResult {
  done?: boolean;
  answer?: string;
}

/** The sandbox services an action may use. */
export interface ActionHost {
  readonly page: Page;
  readonly viewport: { width: number; height: number };
  /** This action's slice of the step's progress: every wait of the action is bounded by it, and ends when it is aborted. */
  readonly progress: Progress;
  /** Resolves to CSS px or throws ActionFailure('invalid_coordinates'). */
  resolve(p: PointInput): { space: CoordinateSpace; raw: XY; css: XY };
  /** Element of the last SoM list, or undefined. `null` when no SoM list was produced yet. */
  somElement(label: number): SomElement | undefined | null;
  navigate(kind: 'goto' | 'back' | 'forward' | 'reload', url?: string): Promise<void>;
  newTab(url?: string): Promise<void>;
  switchTab(index: number): Promise<void>;
  closeTab(index?: number): Promise<void>;
}

export interface ActionDef<A extends Action = Action> {
  name: A['action'];
  description: string;
  run(host: ActionHost, action: A, rec: ActionRecord): Promise<ActionResult | void>;
}

type Defs = { [K in ActionName]: ActionDef<Extract<Action, { action: K }>> };

function at(host: ActionHost, p: PointInput, rec: ActionRecord): XY {
  const r = host.resolve(p);
  rec.space = r.space;
  rec.raw = r.raw;
  rec.css = r.css;
  return r.css;
}

async function withModifiers<T>(page: Page, mods: readonly string[] | undefined, fn: () => Promise<T>): Promise<T> {
  if (!mods?.length) return fn();
  for (const m of mods) await page.keyboard.down(m);
  try {
    return await fn();
  } finally {
    for (const m of [...mods].reverse()) await page.keyboard.up(m);
  }
}

/** Types a type / type_label action's text and records the field's value afterwards. */
async function typeAndRead(h: ActionHost, a: { text: string; clear?: boolean; submit?: boolean }, rec: ActionRecord): Promise<void> {
  const inserted = await typeText(h.page, a.text, a.clear, a.submit, h.progress);
  if (inserted > 0) rec.inserted_chars = inserted;
  const value = await fieldValue(h.page, h.progress);
  if (value !== undefined) rec.field_value = value;
}

function labelCenter(host: ActionHost, label: number, rec: ActionRecord): XY {
  const el = host.somElement(label);
  if (el === null) throw new ActionFailure('label_not_found', 'No Set-of-Mark list yet: request an observation with som enabled first.');
  if (!el) throw new ActionFailure('label_not_found', `Label ${label} is not in the last Set-of-Mark list.`);
  const c = { x: Math.round((el.x + el.width / 2) * 100) / 100, y: Math.round((el.y + el.height / 2) * 100) / 100 };
  rec.css = c;
  return c;
}

const ACTIONS: Defs = {
  click: {
    name: 'click',
    description: 'Click at a point (button, modifiers).',
    async run(h, a, rec) {
      const p = at(h, a, rec);
      await withModifiers(h.page, a.modifiers, () => h.page.mouse.click(p.x, p.y, { button: a.button ?? 'left' }));
    },
  },
  double_click: {
    name: 'double_click',
    description: 'Double-click at a point.',
    async run(h, a, rec) {
      const p = at(h, a, rec);
      await h.page.mouse.dblclick(p.x, p.y);
    },
  },
  triple_click: {
    name: 'triple_click',
    description: 'Triple-click at a point (selects a paragraph or a field).',
    async run(h, a, rec) {
      const p = at(h, a, rec);
      await h.page.mouse.click(p.x, p.y, { clickCount: 3 });
    },
  },
  right_click: {
    name: 'right_click',
    description: 'Right-click at a point.',
    async run(h, a, rec) {
      const p = at(h, a, rec);
      await h.page.mouse.click(p.x, p.y, { button: 'right' });
    },
  },
  hover: {
    name: 'hover',
    description: 'Move the mouse to a point.',
    async run(h, a, rec) {
      const p = at(h, a, rec);
      await h.page.mouse.move(p.x, p.y);
    },
  },
  drag: {
    name: 'drag',
    description: 'Press at a point, move (through an optional path) to another, release.',
    async run(h, a, rec) {
      const from = at(h, a, rec);
      const base = { space: a.space, rel_divisor: a.rel_divisor };
      const via = (a.path ?? []).map((pt) => h.resolve({ ...base, x: pt.x, y: pt.y }).css);
      const to = h.resolve({ ...base, x: a.to_x, y: a.to_y }).css;
      rec.to_css = to;
      const m = h.page.mouse;
      await m.move(from.x, from.y);
      await m.down();
      for (const pt of via) await m.move(pt.x, pt.y, { steps: 5 });
      await m.move(to.x, to.y, { steps: 10 });
      await m.up();
    },
  },
  type: {
    name: 'type',
    description: 'Type text, optionally clicking a point first, clearing the field, pressing Enter after.',
    async run(h, a, rec) {
      if (a.x !== undefined && a.y !== undefined) {
        const p = at(h, { x: a.x, y: a.y, space: a.space, rel_divisor: a.rel_divisor }, rec);
        await h.page.mouse.click(p.x, p.y);
        if (!(await focusedEditable(h.page, h.progress))) {
          throw new ActionFailure('element_not_editable', `The element at (${a.x}, ${a.y}) does not take text input.`);
        }
      } else if (a.x !== undefined || a.y !== undefined) {
        throw new ActionFailure('invalid_coordinates', 'type needs both x and y, or neither.');
      }
      await typeAndRead(h, a, rec);
    },
  },
  key: {
    name: 'key',
    description: 'Press a key or combination ("Control+a"); a list is pressed in sequence.',
    async run(h, a) {
      const combos = normalizeKeys(a.keys);
      if (!combos.length) throw new ActionFailure('action_failed', 'No key given.');
      for (const c of combos) {
        try {
          await h.page.keyboard.press(c);
        } catch (e) {
          if (e instanceof Error && /Unknown key/i.test(e.message)) throw new ActionFailure('action_failed', `Unknown key "${c}".`);
          throw e;
        }
      }
    },
  },
  scroll: {
    name: 'scroll',
    description: 'Scroll at a point (default: viewport centre) by dx/dy px or direction+amount (notches of 100 px, px, or viewport fractions).',
    async run(h, a, rec) {
      let dx = a.dx ?? 0;
      let dy = a.dy ?? 0;
      if (a.dx === undefined && a.dy === undefined) {
        if (!a.direction) throw new ActionFailure('action_failed', 'scroll needs dx/dy or a direction.');
        const along = a.direction === 'up' || a.direction === 'down' ? h.viewport.height : h.viewport.width;
        const px = a.unit === 'px' ? (a.amount ?? 500) : a.unit === 'viewport' ? Math.round((a.amount ?? 0.5) * along) : (a.amount ?? 5) * 100;
        dx = a.direction === 'left' ? -px : a.direction === 'right' ? px : 0;
        dy = a.direction === 'up' ? -px : a.direction === 'down' ? px : 0;
      }
      let p: XY;
      if (a.x !== undefined && a.y !== undefined) p = at(h, { x: a.x, y: a.y, space: a.space, rel_divisor: a.rel_divisor }, rec);
      else {
        p = { x: h.viewport.width / 2, y: h.viewport.height / 2 };
        rec.css = p;
      }
      await h.page.mouse.move(p.x, p.y);
      const probe = await scrollProbe(h.page, h.progress, p);
      await h.page.mouse.wheel(dx, dy);
      await nextFrames(h.page, h.progress);
      const moved = await probe?.moved();
      if (moved) rec.scrolled = moved;
    },
  },
  goto: {
    name: 'goto',
    description: 'Open a URL in the active tab (a bare host gets a scheme).',
    async run(h, a) {
      await h.navigate('goto', a.url);
    },
  },
  back: { name: 'back', description: 'History back.', run: (h) => h.navigate('back') },
  forward: { name: 'forward', description: 'History forward.', run: (h) => h.navigate('forward') },
  reload: { name: 'reload', description: 'Reload the active tab.', run: (h) => h.navigate('reload') },
  new_tab: {
    name: 'new_tab',
    description: 'Open a new tab (optionally at a URL) and make it active.',
    run: (h, a) => h.newTab(a.url),
  },
  switch_tab: { name: 'switch_tab', description: 'Make tab `index` active.', run: (h, a) => h.switchTab(a.index) },
  close_tab: {
    name: 'close_tab',
    description: 'Close tab `index` (default: the active one); the last tab is replaced by a blank one.',
    run: (h, a) => h.closeTab(a.index),
  },
  wait: {
    name: 'wait',
    description: 'Wait (default 1 s, at most 60 s).',
    async run(h, a) {
      // The step's deadline counts the wait in full (step-budget.ts): it never ends as a timeout.
      await h.progress.sleep(a.ms ?? 1000);
    },
  },
  click_label: {
    name: 'click_label',
    description: 'Click the centre of a Set-of-Mark element from the last observation.',
    async run(h, a, rec) {
      const c = labelCenter(h, a.label, rec);
      await h.page.mouse.click(c.x, c.y);
    },
  },
  type_label: {
    name: 'type_label',
    description: 'Click a Set-of-Mark element and type into it.',
    async run(h, a, rec) {
      const c = labelCenter(h, a.label, rec);
      await h.page.mouse.click(c.x, c.y);
      if (!(await focusedEditable(h.page, h.progress))) {
        throw new ActionFailure('element_not_editable', `Label ${a.label} does not take text input.`);
      }
      await typeAndRead(h, a, rec);
    },
  },
  answer: {
    name: 'answer',
    description: 'Give the final answer; ends the episode without touching the page.',
    run: async (_h, a) => ({ done: true, answer: a.text }),
  },
  terminate: {
    name: 'terminate',
    description: 'End the episode (success/failure) without touching the page.',
    run: async () => ({ done: true }),
  },
};

/** Actions after which the page is not expected to change (no settle needed). */
export const NO_SETTLE: ReadonlySet<ActionName> = new Set(['wait', 'answer', 'terminate']);

export function actionDef(name: ActionName): ActionDef {
  return ACTIONS[name] as unknown as ActionDef;
}
