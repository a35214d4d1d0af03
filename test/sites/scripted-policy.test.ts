// ScriptedPolicy decisions on hand-built observations: popup first, target resolution, typing, tabs,
// late content (wait, then bounded scrolling, then giving up).
import { describe, expect, it } from 'vitest';
import { Action, MAX_SCROLL_PX } from '../../protocol/action.ts';
import type { Observation, SomElement } from '../../protocol/observation.ts';
import type { Task } from '../../protocol/task.ts';
import { ScriptedPolicy, findTarget } from '../../runner/scripted-policy.ts';
import { parseModelOutput } from '../../vlm-client/formats/index.ts';

const el = (label: number, tag: string, text: string, x = 100, y = 100, width = 80, height = 20): SomElement => ({ label, tag, text, x, y, width, height });
const obs = (som: SomElement[], tabs = 1): Observation => ({
  step: 0,
  url: 'http://x/',
  title: 't',
  tabs: Array.from({ length: tabs }, (_, i) => ({ index: i, url: 'http://x/', title: 't', active: i === 0 })),
  viewport: { width: 1280, height: 1000 },
  last_action_error: null,
  events: [],
  som,
  timings: { action: 0, settle: 0, capture: 0, encode: 0, total: 0 },
});
const task = (plan: unknown[]): Task => ({ id: 't', suite: 'offline', site: 'Shop', question: 'q', extra: { plan }, flags: [] });
const ctx = { task: task([]), step: 0 };

describe('findTarget', () => {
  const som = [el(0, 'a', 'Sonora Pulse Wireless Headphones'), el(1, 'a', 'Sonora'), el(2, 'input', 'Email me updates'), el(3, 'input', 'Email'), el(4, 'label', 'Email')];
  it('prefers exact matches, then prefixes, then substrings, with tag filters', () => {
    expect(findTarget(som, { text: 'sonora' })?.label).toBe(1);
    expect(findTarget(som, { text: 'Sonora Pulse' })?.label).toBe(0);
    expect(findTarget(som, { text: 'Email' }, ['input'])?.label).toBe(3);
    expect(findTarget(som, { text: 'Pulse Wireless', exact: true })).toBeUndefined();
    expect(findTarget(som, { text: 'Email', tag: ['input'], nth: 0 })?.label).toBe(3);
  });
});

describe('ScriptedPolicy', () => {
  it('closes a popup first, then clicks and types at element centres, then answers', async () => {
    const p = new ScriptedPolicy();
    p.start(task([{ type: { text: 'Search products', value: 'lamp', submit: true, clear: true } }, { click: { text: 'Add to cart' } }, { answer: '$22.00' }]));
    const d0 = await p.next(obs([el(0, 'button', 'Reject optional'), el(1, 'button', 'Accept all cookies', 600, 500, 100, 40)]), ctx);
    expect(d0.actions).toEqual([{ action: 'click', x: 650, y: 520, space: 'css_px' }]);
    // The recorded output is Qwen3-VL computer_use text on the rel1000 grid, and parses back to the same point.
    expect(d0.output).toBe('A popup is open; close it with "Accept all cookies".\n<tool_call>\n{"name":"computer_use","arguments":{"action":"left_click","coordinate":[508,520]}}\n</tool_call>');
    const back = parseModelOutput('qwen3vl', d0.output);
    expect(back.ok && back.actions[0]).toMatchObject({ action: 'click', x: 508, y: 520, space: 'rel1000' });
    const d1 = await p.next(obs([el(0, 'button', 'Search'), el(1, 'input', 'Search products', 10, 20, 400, 30)]), ctx);
    expect(d1.actions).toEqual([{ action: 'type', text: 'lamp', x: 210, y: 35, space: 'css_px', clear: true, submit: true }]);
    const d2 = await p.next(obs([el(5, 'button', 'Add to cart', 300, 400, 100, 30)]), ctx);
    expect(d2.actions).toEqual([{ action: 'click', x: 350, y: 415, space: 'css_px' }]);
    const d3 = await p.next(obs([]), ctx);
    expect(d3.actions).toEqual([{ action: 'answer', text: '$22.00' }]);
    expect(p.progress).toEqual({ done: 3, total: 3 });
  });

  it('waits, scrolls a bounded number of times, returns to the top within the schema bound, waits, then gives up', async () => {
    const p = new ScriptedPolicy({ maxScrolls: 2, waitMs: 100, patience: 2 });
    p.start(task([{ click: { text: 'Next ›' } }, { answer: 'x' }]));
    const kinds: string[] = [];
    for (let i = 0; i < 8; i++) {
      const d = await p.next(obs([el(0, 'a', 'Home')]), ctx);
      // Every action the policy emits is one the step endpoint accepts (the schema bounds scroll distances).
      expect(Action.safeParse(d.actions![0]).success, JSON.stringify(d.actions)).toBe(true);
      const a = d.actions![0];
      kinds.push(a.action === 'scroll' ? `scroll ${a.dy}` : a.action === 'wait' ? `wait ${a.ms}` : a.action);
    }
    expect(kinds).toEqual(['wait 100', 'wait 400', 'scroll 600', 'scroll 600', `scroll -${MAX_SCROLL_PX}`, 'wait 500', 'wait 500', 'terminate']);
  });

  it('stops scrolling down at the bottom of the page (a scroll that moved nothing)', async () => {
    const p = new ScriptedPolicy({ maxScrolls: 5, waitMs: 100 });
    p.start(task([{ click: { text: 'Next ›' } }, { answer: 'x' }]));
    const page = obs([el(0, 'a', 'Home')]);
    await p.next(page, ctx);
    await p.next(page, ctx);
    const down = (await p.next(page, ctx)).actions![0];
    expect(down).toMatchObject({ action: 'scroll', dy: 600 });
    const moved0 = [{ action: down, scrolled: { dx: 0, dy: 0 }, error: null, ms: 1 }];
    expect((await p.next(page, { ...ctx, lastActions: moved0 })).actions![0]).toMatchObject({ action: 'scroll', dy: -MAX_SCROLL_PX });
  });

  it('finds a target that appears while it waits after the return to the top', async () => {
    const p = new ScriptedPolicy({ maxScrolls: 1, waitMs: 100, patience: 3 });
    p.start(task([{ click: { text: 'Late' } }, { answer: 'x' }]));
    for (let i = 0; i < 5; i++) await p.next(obs([]), ctx); // wait, wait, scroll, top, wait
    expect((await p.next(obs([el(1, 'button', 'Late')]), ctx)).actions![0]).toMatchObject({ action: 'click' });
    expect((await p.next(obs([]), ctx)).actions![0]).toEqual({ action: 'answer', text: 'x' });
  });

  it('takes a plan step again after its page hung and was reopened, unless the next target shows it took effect', async () => {
    const p = new ScriptedPolicy();
    p.start(task([{ click: { text: 'Go' } }, { click: { text: 'Done' } }, { answer: 'ok' }]));
    const hung = (som: SomElement[]): Observation => ({ ...obs(som), last_action_error: { code: 'page_unresponsive', message: 'The page stopped responding; it was reopened on its last URL.' } });
    expect((await p.next(obs([el(0, 'button', 'Go')]), ctx)).actions![0]).toMatchObject({ action: 'click' });
    // Reopened on the page with "Go": the click is taken again (not a wait for "Done", which never comes).
    expect((await p.next(hung([el(0, 'button', 'Go', 10, 10)]), ctx)).actions![0]).toEqual({ action: 'click', x: 50, y: 20, space: 'css_px' });
    expect(p.progress.done).toBe(1);
    // Hung again, but "Done" is on screen: the click took effect; go on.
    expect((await p.next(hung([el(1, 'button', 'Done', 200, 200)]), ctx)).actions![0]).toEqual({ action: 'click', x: 240, y: 210, space: 'css_px' });
    expect((await p.next(obs([]), ctx)).actions![0]).toEqual({ action: 'answer', text: 'ok' });
  });

  it('types again into the cleared field after a type timed out (half the text may be in it)', async () => {
    const p = new ScriptedPolicy();
    p.start(task([{ type: { text: 'Description', value: 'charged twice' } }, { click: { text: 'Submit' } }, { answer: 'ok' }]));
    const form = [el(0, 'textarea', 'Description', 10, 10, 200, 40), el(1, 'button', 'Submit', 10, 100)];
    const typed = (await p.next(obs(form), ctx)).actions![0];
    expect(typed).toEqual({ action: 'type', text: 'charged twice', x: 110, y: 30, space: 'css_px' });
    const timedOut = { ...obs(form), last_action_error: { code: 'timeout', message: 'action type did not finish within 7314 ms' } };
    const lastActions = [{ action: typed, error: timedOut.last_action_error, ms: 7400 }];
    // "Submit" is on screen, but a type that ran out of time is typed again, into the cleared field.
    expect((await p.next(timedOut, { ...ctx, lastActions })).actions![0]).toEqual({ ...typed, clear: true });
    expect((await p.next(obs(form), ctx)).actions![0]).toMatchObject({ action: 'click', x: 50, y: 110 });
  });

  it('judges a failed type once the popup that appeared after it is closed', async () => {
    const p = new ScriptedPolicy();
    p.start(task([{ type: { text: 'Search recipes', value: 'Chickpea Coconut Curry', submit: true } }, { click: { text: 'Chickpea Coconut Curry' } }, { answer: 'ok' }]));
    const search = el(0, 'input', 'Search recipes', 10, 10, 200, 40);
    const typed = (await p.next(obs([search]), ctx)).actions![0];
    const err = { code: 'timeout', message: 'action type did not finish within 7314 ms' };
    const popup = (await p.next({ ...obs([search, el(1, 'button', 'No thanks', 300, 300)]), last_action_error: err }, { ...ctx, lastActions: [{ action: typed, error: err, ms: 7400 }] })).actions![0];
    expect(popup).toMatchObject({ action: 'click', x: 340, y: 310 });
    expect((await p.next(obs([search]), { ...ctx, lastActions: [{ action: popup, error: null, ms: 10 }] })).actions![0]).toEqual({ ...typed, clear: true });
  });

  it('goes on after a click whose settle timed out when the next target shows it took effect', async () => {
    const p = new ScriptedPolicy();
    p.start(task([{ click: { text: 'Support' } }, { type: { text: 'Full name', value: 'Maria' } }, { answer: 'ok' }]));
    await p.next(obs([el(0, 'a', 'Support')]), ctx);
    const err = { code: 'timeout', message: 'settle after click did not finish within 3000 ms' };
    const d = await p.next({ ...obs([el(1, 'input', 'Full name')]), last_action_error: err }, ctx);
    expect(d.actions![0]).toMatchObject({ action: 'type', text: 'Maria' });
  });

  it('does not click again when the page moved on after a click whose effect was unknown (add to cart once)', async () => {
    const p = new ScriptedPolicy();
    p.start(task([{ click: { text: 'Add to cart' } }, { answer: 'ok' }]));
    await p.next({ ...obs([el(0, 'button', 'Add to cart')]), url: 'http://x/p/1' }, ctx);
    const err = { code: 'timeout', message: 'action click did not finish within 7000 ms' };
    // The button stays on the page; the URL says the add went through.
    const moved = await p.next({ ...obs([el(0, 'button', 'Add to cart')]), url: 'http://x/p/1?added=1', last_action_error: err }, ctx);
    expect(moved.actions![0]).toMatchObject({ action: 'answer' });
    // The same page with the same URL: the effect is unknown and the click is taken again.
    const q = new ScriptedPolicy();
    q.start(task([{ click: { text: 'Add to cart' } }, { answer: 'ok' }]));
    await q.next({ ...obs([el(0, 'button', 'Add to cart')]), url: 'http://x/p/1' }, ctx);
    const same = await q.next({ ...obs([el(0, 'button', 'Add to cart')]), url: 'http://x/p/1', last_action_error: err }, ctx);
    expect(same.actions![0]).toMatchObject({ action: 'click' });
  });

  it('waits for a reopened page still loading, then types again (search lost with the hung page)', async () => {
    const p = new ScriptedPolicy();
    p.start(task([{ type: { text: 'Search products', value: 'headphones', submit: true } }, { click: { text: 'Sonora' } }, { answer: 'ok' }]));
    const search = el(0, 'input', 'Search products');
    const typed = (await p.next(obs([search]), ctx)).actions![0];
    const err = { code: 'page_unresponsive', message: 'The page did not respond within 10000 ms (busy script?); it was reopened.' };
    // Reopened on its last URL and still parsing: nothing in the SoM list yet.
    const first = await p.next({ ...obs([]), last_action_error: err }, { ...ctx, lastActions: [{ action: typed, error: err, ms: 10_000 }] });
    expect(first.actions![0]).toMatchObject({ action: 'wait' });
    expect((await p.next(obs([]), ctx)).actions![0]).toMatchObject({ action: 'wait' });
    // Loaded: the search box is back, the results are not: type again into the cleared field.
    expect((await p.next(obs([search]), ctx)).actions![0]).toEqual({ ...typed, clear: true });
  });

  it('after a reopen, fills the form again from the first step taken on its URL (the reopen emptied it)', async () => {
    const p = new ScriptedPolicy();
    p.start(task([{ click: { text: 'Book a room' } }, { click: { text: 'Board room' } }, { type: { text: 'Date', value: '2026-12-09' } }, { type: { text: 'Duration', value: '2' } }, { answer: 'ok' }]));
    const form = [el(0, 'button', 'Board room'), el(1, 'input', 'Date'), el(2, 'input', 'Duration')];
    const at = (som: SomElement[], url: string, extra: Partial<Observation> = {}) => ({ ...obs(som), url, ...extra });
    await p.next(at([el(0, 'a', 'Book a room')], 'http://x/'), ctx);
    expect((await p.next(at(form, 'http://x/booking'), ctx)).actions![0]).toMatchObject({ action: 'click', x: 140, y: 110 });
    expect((await p.next(at(form, 'http://x/booking'), ctx)).actions![0]).toMatchObject({ action: 'type', text: '2026-12-09' });
    expect((await p.next(at(form, 'http://x/booking'), ctx)).actions![0]).toMatchObject({ action: 'type', text: '2' });
    const err = { code: 'page_unresponsive', message: 'The page did not respond; it was reopened.' };
    // Reopened on /booking: the room, the date and the duration are gone. Taken again in order, the failed type cleared first.
    const again = [];
    again.push((await p.next(at(form, 'http://x/booking', { last_action_error: err }), ctx)).actions![0]);
    for (let i = 0; i < 3; i++) again.push((await p.next(at(form, 'http://x/booking'), ctx)).actions![0]);
    expect(again.map((a) => a.action)).toEqual(['click', 'type', 'type', 'answer']);
    expect(again[2]).toMatchObject({ text: '2', clear: true });
    // A step before it whose target is gone after the reopen (its effect was kept: a list cleared) is not taken again.
    const r = new ScriptedPolicy();
    r.start(task([{ click: { text: 'Clear list' } }, { type: { text: 'Search', value: 'Shakshuka' } }, { answer: 'ok' }]));
    await r.next(at([el(0, 'button', 'Clear list'), el(1, 'input', 'Search')], 'http://x/list'), ctx);
    await r.next(at([el(1, 'input', 'Search')], 'http://x/list'), ctx);
    const only = (await r.next(at([el(1, 'input', 'Search')], 'http://x/list', { last_action_error: err }), ctx)).actions![0];
    expect(only).toMatchObject({ action: 'type', text: 'Shakshuka', clear: true });
    // A timeout (page kept) takes only the failed step again.
    const q = new ScriptedPolicy();
    q.start(task([{ click: { text: 'Board room' } }, { type: { text: 'Duration', value: '2' } }, { answer: 'ok' }]));
    await q.next(at(form, 'http://x/booking'), ctx);
    await q.next(at(form, 'http://x/booking'), ctx);
    const t = (await q.next(at(form, 'http://x/booking', { last_action_error: { code: 'timeout', message: 'slow' } }), ctx)).actions![0];
    expect(t).toMatchObject({ action: 'type', text: '2', clear: true });
  });

  it('clicks again when a popup that came right after the click took it (same URL, its target still there)', async () => {
    const p = new ScriptedPolicy();
    p.start(task([{ click: { text: 'Banana Bread' } }, { click: { text: 'Download recipe card' } }, { answer: 'ok' }]));
    const link = el(0, 'a', 'Banana Bread');
    const click = (await p.next({ ...obs([link]), url: 'http://x/browse' }, ctx)).actions![0];
    const dismiss = (await p.next({ ...obs([link, el(1, 'button', 'No thanks', 300, 300)]), url: 'http://x/browse' }, ctx)).actions![0];
    expect(dismiss).toMatchObject({ action: 'click', x: 340, y: 310 });
    expect((await p.next({ ...obs([link]), url: 'http://x/browse' }, ctx)).actions![0]).toEqual(click);
    // Had the click navigated before the popup, the next step goes on.
    const q = new ScriptedPolicy();
    q.start(task([{ click: { text: 'Banana Bread' } }, { click: { text: 'Download recipe card' } }, { answer: 'ok' }]));
    await q.next({ ...obs([link]), url: 'http://x/browse' }, ctx);
    await q.next({ ...obs([el(1, 'button', 'No thanks', 300, 300)]), url: 'http://x/r/banana-bread' }, ctx);
    expect((await q.next({ ...obs([el(2, 'a', 'Download recipe card (PDF)')]), url: 'http://x/r/banana-bread' }, ctx)).actions![0]).toMatchObject({ action: 'click' });
    expect(q.progress.done).toBe(2);
  });

  it('takes a step again at most maxRedos times', async () => {
    const p = new ScriptedPolicy({ maxRedos: 2 });
    p.start(task([{ click: { text: 'Go' } }, { click: { text: 'Done' } }, { answer: 'ok' }]));
    const hung: Observation = { ...obs([el(0, 'button', 'Go')]), last_action_error: { code: 'page_crashed', message: 'crashed' } };
    const clicks: number[] = [];
    await p.next(obs([el(0, 'button', 'Go')]), ctx);
    for (let i = 0; i < 4; i++) clicks.push(p.progress.done, ((await p.next(hung, ctx)).actions![0].action === 'click' ? 1 : 0));
    // Two redos (click again), then the missing "Done" is searched for as usual (a wait).
    expect(clicks).toEqual([1, 1, 1, 1, 1, 0, 1, 0]);
  });

  it('waits for the tab a click opened before switching to it (a loaded machine reports it late)', async () => {
    const p = new ScriptedPolicy({ waitMs: 100 });
    p.start(task([{ switch_tab: 'last' }, { close_tab: true }, { answer: 'x' }]));
    expect((await p.next(obs([], 1), ctx)).actions![0]).toEqual({ action: 'wait', ms: 100 });
    expect((await p.next(obs([], 1), ctx)).actions![0]).toEqual({ action: 'wait', ms: 200 });
    expect((await p.next(obs([], 2), ctx)).actions).toEqual([{ action: 'switch_tab', index: 1 }]);
  });

  it('finds a target after a miss and switches to the newest tab', async () => {
    const p = new ScriptedPolicy();
    p.start(task([{ click: { text: 'Specifications sheet' } }, { switch_tab: 'last' }, { close_tab: true }, { answer: '31 hours' }]));
    expect((await p.next(obs([]), ctx)).actions![0].action).toBe('wait');
    expect((await p.next(obs([el(3, 'a', 'Specifications sheet ↗')]), ctx)).actions![0]).toMatchObject({ action: 'click' });
    expect((await p.next(obs([], 2), ctx)).actions).toEqual([{ action: 'switch_tab', index: 1 }]);
    const close = await p.next(obs([], 2), ctx);
    expect(close.actions).toEqual([{ action: 'close_tab', index: 0 }]);
    expect(close.output).toBe('Close this tab.\n{"action":"close_tab","index":0}');
  });

  it('refuses tasks without a plan and observations without SoM', async () => {
    const p = new ScriptedPolicy();
    expect(() => p.start(task([]))).toThrow(/no valid plan/);
    p.start(task([{ answer: 'a' }]));
    await expect(p.next({ ...obs([]), som: undefined }, ctx)).rejects.toThrow(/som: true/);
    // A failed observation (no SoM because of an error) is waited out, not fatal.
    const failed = { ...obs([]), som: undefined, last_action_error: { code: 'action_failed', message: 'observation failed: SoM collection timed out' } };
    expect((await p.next(failed, ctx)).actions![0]).toMatchObject({ action: 'wait' });
  });
});
