// A scripted policy for the offline sites: follows the task's plan (extra.plan) and turns every step into
// the same coordinate actions a VLM would emit (click/type at CSS-px points, scroll, key, answer), finding
// targets in the observation's Set-of-Mark list. It closes the sites' popups first, waits for late content
// and scrolls (bounded) when a target is not on screen, and takes a plan step again when the page it acted on
// hung or crashed and was reopened (the action's effect is then unknown). Needs sandboxes created with `som: true`.
import { MAX_SCROLL_PX, type Action } from '../protocol/action.ts';
import type { Observation, SomElement } from '../protocol/observation.ts';
import type { Task } from '../protocol/task.ts';
import { Plan, type PlanStep, type Target } from '../sites/spec.ts';
import { qwen3vl } from '../vlm-client/formats/qwen3vl.ts';
import type { Policy, PolicyDecision, PolicyStepContext } from './policy.ts';

/** Button texts that close the offline sites' modals (cookie banner, newsletter, survey). */
const DEFAULT_DISMISS_TEXTS = ['Accept all cookies', 'No thanks', 'Maybe later'];

export interface ScriptedPolicyOptions {
  /** Texts of buttons that close popups; a task may add more in extra.dismiss. */
  dismissTexts?: string[];
  /** Wait used when a target is missing (late content), ms. */
  waitMs?: number;
  /** Scroll distance when searching for a target, CSS px. */
  scrollPx?: number;
  /** Scroll-downs tried before going back to the top. */
  maxScrolls?: number;
  /** Waits after the return to the top before giving up on a target (a loaded machine renders late). */
  patience?: number;
  /** Times one plan step is taken again after its page hung or crashed and was reopened. */
  maxRedos?: number;
}

/**
 * Action errors after which what the action did is unknown: the page was reopened on its last URL (hang, crash),
 * or the action or its settle ran out of time (a loaded machine: a type may have typed half its text).
 */
const UNCERTAIN = new Set(['page_unresponsive', 'page_crashed', 'timeout', 'action_failed']);
/** Of those, the errors after which the page was reopened on its last URL: what was typed and chosen there is gone. */
const REOPENED = new Set(['page_unresponsive', 'page_crashed']);

const norm = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim();

/** Finds the SoM element a target means: exact text matches win over prefixes, prefixes over substrings. */
export function findTarget(som: SomElement[], t: Target, defaultTags?: string[]): SomElement | undefined {
  const tags = t.tag ?? defaultTags;
  const want = norm(t.text);
  const pool = som.filter((e) => !tags || tags.includes(e.tag));
  const tiers = [
    pool.filter((e) => norm(e.text) === want),
    t.exact ? [] : pool.filter((e) => norm(e.text).startsWith(want)),
    t.exact ? [] : pool.filter((e) => norm(e.text).includes(want)),
  ];
  const tier = tiers.find((x) => x.length > 0);
  return tier?.[t.nth ?? 0];
}

const centre = (e: SomElement) => ({ x: Math.round(e.x + e.width / 2), y: Math.round(e.y + e.height / 2) });

/** The action with its CSS-px point expressed on the rel1000 grid (what Qwen3-VL would have written). */
function toRel1000(a: Action, vp: { width: number; height: number }): Action {
  const rel = (x: number, y: number) => ({ x: Math.round((x / vp.width) * 1000), y: Math.round((y / vp.height) * 1000), space: 'rel1000' as const });
  if ((a.action === 'click' || a.action === 'type' || a.action === 'scroll') && a.x !== undefined && a.y !== undefined) return { ...a, ...rel(a.x, a.y) };
  return a;
}

/** Readable output for the recording: Qwen3-VL computer_use tool calls; plain JSON for actions it cannot express. */
function outputText(thought: string, a: Action, vp: { width: number; height: number }): string {
  try {
    return qwen3vl.print([toRel1000(a, vp)], { thought });
  } catch {
    return `${thought}\n${JSON.stringify(a)}`;
  }
}

export class ScriptedPolicy implements Policy {
  readonly name = 'scripted';
  private plan: PlanStep[] = [];
  private index = 0;
  /** Observations in a row without the current target (reset when it is found). */
  private misses = 0;
  /** Failed observations in a row (no SoM list). */
  private blind = 0;
  /** Scroll-downs done for the current target; stops early at the bottom of the page. */
  private scrolls = 0;
  private atTop = false;
  private dismissals = 0;
  /** The plan step the last page action came from, while its effect is unconfirmed. */
  private acted: number | null = null;
  /** The failed step's page was reopened (its earlier inputs are gone). */
  private failedReopened = false;
  /** The URL each plan step last acted on: a different URL after a failed action means it took effect. */
  private actedAt = new Map<number, string>();
  /** Observations in which neither the failed step's target nor the next one's was on screen. */
  private looks = 0;
  private redos = new Map<number, number>();
  /** The plan step being typed again: its field is cleared first (it may hold half the text). */
  private retype: number | null = null;
  /** The plan step whose action failed with its effect unknown, until a popup-free page lets us judge it. */
  private failed: number | null = null;
  private dismissTexts: string[];
  private readonly waitMs: number;
  private readonly scrollPx: number;
  private readonly maxScrolls: number;
  private readonly patience: number;
  private readonly maxRedos: number;

  constructor(private readonly opts: ScriptedPolicyOptions = {}) {
    this.dismissTexts = opts.dismissTexts ?? DEFAULT_DISMISS_TEXTS;
    this.waitMs = opts.waitMs ?? 600;
    this.scrollPx = opts.scrollPx ?? 600;
    this.maxScrolls = opts.maxScrolls ?? 5;
    this.patience = opts.patience ?? 4;
    this.maxRedos = opts.maxRedos ?? 3;
  }

  start(task: Task): void {
    const parsed = Plan.safeParse(task.extra?.plan);
    if (!parsed.success) throw new Error(`ScriptedPolicy: task ${task.id} has no valid plan in extra.plan (${parsed.error.message})`);
    this.plan = parsed.data;
    this.index = 0;
    this.found();
    this.blind = 0;
    this.dismissals = 0;
    this.acted = null;
    this.retype = null;
    this.judged();
    this.redos.clear();
    this.actedAt.clear();
    const extraDismiss = Array.isArray(task.extra?.dismiss) ? (task.extra.dismiss as unknown[]).map(String) : [];
    this.dismissTexts = [...(this.opts.dismissTexts ?? DEFAULT_DISMISS_TEXTS), ...extraDismiss];
  }

  /** Plan steps done so far (tests and logs). */
  get progress(): { done: number; total: number } {
    return { done: this.index, total: this.plan.length };
  }

  private found(): void {
    this.misses = 0;
    this.scrolls = 0;
    this.atTop = false;
  }

  /** The step's target, for plan steps that act on an element. */
  private targetOf(step: PlanStep | undefined): { target: Target; tags?: string[] } | undefined {
    if (!step) return undefined;
    if ('type' in step) return { target: step.type, tags: ['input', 'textarea'] };
    if ('click' in step) return { target: step.click };
    return undefined;
  }

  /**
   * The last action failed in a way that leaves its effect unknown (a hang or crash reopened the page on its last
   * URL; the action or its settle ran out of time). A type is typed again into its cleared field (typing again
   * is idempotent). Otherwise, when the next step's target is on screen the action took effect; else, when the
   * acted-on step's target is back (or it had none: a key, a tab switch), that step is taken again. Neither on
   * screen, on the same URL: a reopened page may still be loading, so look again (true: wait), a bounded number
   * of times, before going on as if it took effect. Redos are bounded too.
   */
  private redoAfterFailure(som: SomElement[], url: string): boolean {
    const from = this.failed;
    if (from === null) return false;
    // The page moved on since the action (a link followed, a form submitted, "?added=1"): it took effect, and
    // taking it again would do it twice (an "Add to cart" whose button stays on the page).
    if (url !== this.actedAt.get(from)) return this.judged();
    const step = this.plan[from];
    const prev = this.targetOf(step);
    const typed = step !== undefined && 'type' in step;
    const next = this.targetOf(this.plan[this.index]);
    if (!typed && next && findTarget(som, next.target, next.tags)) return this.judged();
    if (prev && !findTarget(som, prev.target, prev.tags)) {
      this.looks += 1;
      return this.looks <= this.patience ? true : this.judged();
    }
    this.judged();
    const n = (this.redos.get(from) ?? 0) + 1;
    if (n > this.maxRedos) return false;
    this.redos.set(from, n);
    // A reopened page lost what the steps before it typed and chose on this URL (a form half filled): take them
    // again too, back along the run of steps that acted on it while their targets are on screen again. A step whose
    // target is gone stops it: its effect outlived the reopen ("Clear list" on an emptied list).
    let first = from;
    const onScreen = (i: number) => {
      const t = this.targetOf(this.plan[i]);
      return t !== undefined && findTarget(som, t.target, t.tags) !== undefined;
    };
    while (this.failedReopened && first > 0 && this.actedAt.get(first - 1) === url && onScreen(first - 1)) first -= 1;
    this.index = first;
    if (typed) this.retype = from;
    this.found();
    return false;
  }

  /** The last page action's effect is unknown (`reopened`: its page was reopened): judged at the next look. */
  private suspect(reopened: boolean): void {
    if (this.acted === null) return;
    this.failed = this.acted;
    this.failedReopened = reopened;
  }

  /** The failed step is judged: no more looks for it. */
  private judged(): false {
    this.failed = null;
    this.looks = 0;
    return false;
  }

  async next(obs: Observation, ctx: PolicyStepContext): Promise<PolicyDecision> {
    const decide = (thought: string, action: Action): PolicyDecision => ({ output: outputText(thought, action, obs.viewport), actions: [action], thought });
    if (!obs.som) {
      // An observation that failed (e.g. SoM collection timed out on a busy machine) carries an error: wait
      // and look again, a bounded number of times. Without an error, SoM is simply off.
      if (!obs.last_action_error) throw new Error('ScriptedPolicy needs observations with a Set-of-Mark list: create the sandbox with som: true');
      this.blind += 1;
      if (this.blind > 6 + this.maxScrolls) return decide('The page keeps failing to be observed; giving up.', { action: 'terminate', status: 'failure', reason: obs.last_action_error.message });
      return decide(`The observation failed (${obs.last_action_error.code}); wait and look again.`, { action: 'wait', ms: this.waitMs * 2 });
    }
    this.blind = 0;
    const som = obs.som;
    const err = ctx.lastActions?.find((a) => a.error)?.error ?? obs.last_action_error;
    if (err && UNCERTAIN.has(err.code)) this.suspect(REOPENED.has(err.code));

    // Popups first: a modal covers the page, so its targets are not in the SoM list anyway (a failed step is
    // judged once the popup is closed).
    const popup = som.find((e) => e.tag === 'button' && this.dismissTexts.some((d) => norm(d) === norm(e.text)));
    if (popup && this.dismissals < 5) {
      // A popup right after a page action may have taken it (a modal parsed after the SoM list was read, under the
      // click's point): the action's effect is unknown, judged once the popup is closed.
      if (this.failed === null) this.suspect(false);
      this.dismissals += 1;
      return decide(`A popup is open; close it with "${popup.text}".`, { action: 'click', ...centre(popup), space: 'css_px' });
    }
    this.dismissals = 0;
    if (this.redoAfterFailure(som, obs.url)) {
      return decide('The page after the last action is not shown yet; wait for it.', { action: 'wait', ms: this.waitMs * Math.min(this.looks * 2, 5) });
    }

    const step = this.plan[this.index];
    // Page actions stay unconfirmed until the next observation comes back without a hang or crash.
    const act = (thought: string, action: Action): PolicyDecision => {
      this.acted = this.index;
      this.actedAt.set(this.index, obs.url);
      this.index += 1;
      this.found();
      return decide(thought, action);
    };
    this.acted = null;
    if (!step) return decide('The plan is complete.', { action: 'terminate', status: 'success' });

    if ('answer' in step) {
      this.index += 1;
      return decide('I have what the task asks for.', { action: 'answer', text: step.answer });
    }
    if ('wait' in step) {
      this.index += 1;
      return decide('Wait for the page.', { action: 'wait', ms: step.wait });
    }
    if ('key' in step) return act(`Press ${step.key}.`, { action: 'key', keys: step.key });
    if ('switch_tab' in step) {
      // The tab the last click opened may not be reported yet on a loaded machine: wait for it (bounded) rather
      // than "switch" to the only tab there is (and close the wrong one next).
      const want = step.switch_tab === 'last' ? 1 : step.switch_tab;
      if (obs.tabs.length <= want && this.misses < 2 + this.patience) {
        this.misses += 1;
        return decide(`The new tab is not open yet; wait for it.`, { action: 'wait', ms: this.waitMs * Math.min(this.misses, 5) });
      }
      const to = step.switch_tab === 'last' ? Math.max(0, obs.tabs.length - 1) : step.switch_tab;
      return act(`Switch to tab ${to}.`, { action: 'switch_tab', index: to });
    }
    if ('close_tab' in step) {
      const active = obs.tabs.find((t) => t.active)?.index;
      return act('Close this tab.', active === undefined ? { action: 'close_tab' } : { action: 'close_tab', index: active });
    }

    const isType = 'type' in step;
    const target = isType ? step.type : step.click;
    const el = findTarget(som, target, isType ? ['input', 'textarea'] : undefined);
    if (el) {
      const p = centre(el);
      if (isType) {
        const t = step.type;
        const clear = t.clear || this.retype === this.index;
        if (this.retype === this.index) this.retype = null;
        return act(`Type "${t.value}" into "${el.text}" (label ${el.label}).`, {
          action: 'type', text: t.value, x: p.x, y: p.y, space: 'css_px', ...(clear ? { clear: true } : {}), ...(t.submit ? { submit: true } : {}),
        });
      }
      return act(`Click "${el.text}" (label ${el.label}).`, { action: 'click', x: p.x, y: p.y, space: 'css_px' });
    }
    return this.search(obs, ctx, `"${target.text}"`, decide);
  }

  /**
   * The target is not on screen: wait twice for late content, scroll down (bounded, stopping at the bottom),
   * go back to the top, then wait a bounded number of times (a loaded machine renders late), then give up.
   */
  private search(obs: Observation, ctx: PolicyStepContext, what: string, decide: (thought: string, a: Action) => PolicyDecision): PolicyDecision {
    this.misses += 1;
    const mid = { x: Math.round(obs.viewport.width / 2), y: Math.round(obs.viewport.height / 2) };
    const m = this.misses;
    if (m <= 2) return decide(`${what} is not visible yet; wait for the page to load.`, { action: 'wait', ms: this.waitMs * m * m });
    const last = ctx.lastActions?.[0];
    // A scroll that moved nothing reached the bottom: no use scrolling further.
    const atBottom = last?.action.action === 'scroll' && last.scrolled !== undefined && last.scrolled.dy === 0 && (last.action.dy ?? 0) > 0;
    if (!this.atTop && this.scrolls < this.maxScrolls && !atBottom) {
      this.scrolls += 1;
      return decide(`${what} is not visible; scroll down.`, { action: 'scroll', ...mid, space: 'css_px', dy: this.scrollPx });
    }
    if (!this.atTop) {
      this.atTop = true;
      // The schema's own bound, far more than the bounded scroll-downs above moved.
      return decide(`${what} is not below; go back to the top.`, { action: 'scroll', ...mid, space: 'css_px', dy: -MAX_SCROLL_PX });
    }
    // Decisions so far: two waits, the scroll-downs, the return to the top, then the waits counted here.
    const waited = m - 4 - this.scrolls;
    if (waited < this.patience) return decide(`${what} is still missing; wait longer.`, { action: 'wait', ms: this.waitMs * 5 });
    return decide(`Could not find ${what}; giving up.`, { action: 'terminate', status: 'failure', reason: `target ${what} not found at plan step ${this.index + 1}` });
  }
}
