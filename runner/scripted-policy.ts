// A scripted policy for the offline sites: follows the task's plan (extra.plan) and turns every step into
// the same coordinate actions a VLM would emit (click/type at CSS-px points, scroll, key, answer), finding
// targets in the observation's Set-of-Mark list. It closes the sites' popups first, waits for late content
// and scrolls (bounded) when a target is not on screen. Needs sandboxes created with `som: true`.
import type { Action } from '../protocol/action.ts';
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
}

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
  private misses = 0;
  private dismissals = 0;
  private dismissTexts: string[];
  private readonly waitMs: number;
  private readonly scrollPx: number;
  private readonly maxScrolls: number;

  constructor(private readonly opts: ScriptedPolicyOptions = {}) {
    this.dismissTexts = opts.dismissTexts ?? DEFAULT_DISMISS_TEXTS;
    this.waitMs = opts.waitMs ?? 600;
    this.scrollPx = opts.scrollPx ?? 600;
    this.maxScrolls = opts.maxScrolls ?? 5;
  }

  start(task: Task): void {
    const parsed = Plan.safeParse(task.extra?.plan);
    if (!parsed.success) throw new Error(`ScriptedPolicy: task ${task.id} has no valid plan in extra.plan (${parsed.error.message})`);
    this.plan = parsed.data;
    this.index = 0;
    this.misses = 0;
    this.dismissals = 0;
    const extraDismiss = Array.isArray(task.extra?.dismiss) ? (task.extra.dismiss as unknown[]).map(String) : [];
    this.dismissTexts = [...(this.opts.dismissTexts ?? DEFAULT_DISMISS_TEXTS), ...extraDismiss];
  }

  /** Plan steps done so far (tests and logs). */
  get progress(): { done: number; total: number } {
    return { done: this.index, total: this.plan.length };
  }

  async next(obs: Observation, _ctx: PolicyStepContext): Promise<PolicyDecision> {
    const decide = (thought: string, action: Action): PolicyDecision => ({ output: outputText(thought, action, obs.viewport), actions: [action], thought });
    if (!obs.som) {
      // An observation that failed (e.g. SoM collection timed out on a busy machine) carries an error: wait
      // and look again, within the same budget as a missing target. Without an error, SoM is simply off.
      if (!obs.last_action_error) throw new Error('ScriptedPolicy needs observations with a Set-of-Mark list: create the sandbox with som: true');
      this.misses += 1;
      if (this.misses > 6 + this.maxScrolls) return decide('The page keeps failing to be observed; giving up.', { action: 'terminate', status: 'failure', reason: obs.last_action_error.message });
      return decide(`The observation failed (${obs.last_action_error.code}); wait and look again.`, { action: 'wait', ms: this.waitMs * 2 });
    }
    const som = obs.som;

    // Popups first: a modal covers the page, so its targets are not in the SoM list anyway.
    const popup = som.find((e) => e.tag === 'button' && this.dismissTexts.some((d) => norm(d) === norm(e.text)));
    if (popup && this.dismissals < 5) {
      this.dismissals += 1;
      return decide(`A popup is open; close it with "${popup.text}".`, { action: 'click', ...centre(popup), space: 'css_px' });
    }
    this.dismissals = 0;

    const step = this.plan[this.index];
    if (!step) return decide('The plan is complete.', { action: 'terminate', status: 'success' });

    if ('answer' in step) {
      this.index += 1;
      return decide('I have what the task asks for.', { action: 'answer', text: step.answer });
    }
    if ('wait' in step) {
      this.index += 1;
      return decide('Wait for the page.', { action: 'wait', ms: step.wait });
    }
    if ('key' in step) {
      this.index += 1;
      return decide(`Press ${step.key}.`, { action: 'key', keys: step.key });
    }
    if ('switch_tab' in step) {
      this.index += 1;
      const to = step.switch_tab === 'last' ? Math.max(0, obs.tabs.length - 1) : step.switch_tab;
      return decide(`Switch to tab ${to}.`, { action: 'switch_tab', index: to });
    }
    if ('close_tab' in step) {
      this.index += 1;
      const active = obs.tabs.find((t) => t.active)?.index;
      return decide('Close this tab.', active === undefined ? { action: 'close_tab' } : { action: 'close_tab', index: active });
    }

    const isType = 'type' in step;
    const target = isType ? step.type : step.click;
    const el = findTarget(som, target, isType ? ['input', 'textarea'] : undefined);
    if (el) {
      this.index += 1;
      this.misses = 0;
      const p = centre(el);
      if (isType) {
        const t = step.type;
        return decide(`Type "${t.value}" into "${el.text}" (label ${el.label}).`, {
          action: 'type', text: t.value, x: p.x, y: p.y, space: 'css_px', ...(t.clear ? { clear: true } : {}), ...(t.submit ? { submit: true } : {}),
        });
      }
      return decide(`Click "${el.text}" (label ${el.label}).`, { action: 'click', x: p.x, y: p.y, space: 'css_px' });
    }

    // Not on screen: wait once for late content, then scroll down, then back to the top and wait, then give up.
    this.misses += 1;
    const mid = { x: Math.round(obs.viewport.width / 2), y: Math.round(obs.viewport.height / 2) };
    const what = `"${target.text}"`;
    const m = this.misses;
    if (m <= 2) return decide(`${what} is not visible yet; wait for the page to load.`, { action: 'wait', ms: this.waitMs * m * m });
    if (m <= 2 + this.maxScrolls) return decide(`${what} is not visible; scroll down.`, { action: 'scroll', ...mid, space: 'css_px', dy: this.scrollPx });
    if (m === 3 + this.maxScrolls) return decide(`${what} is not below; go back to the top.`, { action: 'scroll', ...mid, space: 'css_px', dy: -100_000 });
    if (m === 4 + this.maxScrolls) return decide(`${what} is still missing; wait longer.`, { action: 'wait', ms: this.waitMs * 5 });
    return decide(`Could not find ${what}; giving up.`, { action: 'terminate', status: 'failure', reason: `target ${what} not found at plan step ${this.index + 1}` });
  }
}
