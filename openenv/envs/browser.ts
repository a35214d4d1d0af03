// The browser environment: one browser sandbox per episode, created from a task of Grove's suites (or a start URL)
// on reset. A step takes Grove's own step body (a canonical `action`, `actions`, or a policy's raw `model_output`
// with its `format`); the observation carries the screenshot and the page facts. The terminal step's reward comes
// from the task's judge through the same path as POST /sandboxes/{id}/evaluate (EpisodeService.evaluate).
import { z } from 'zod';
import { StepRequest } from '../../protocol/api.ts';
import { Action } from '../../protocol/action.ts';
import { TaskSpec } from '../../protocol/episode.ts';
import { Observation, ResolvedAction, Screenshot, type StepResult } from '../../protocol/observation.ts';
import { BrowserCreateOptions } from '../../protocol/sandbox.ts';
import { GroveError } from '../../protocol/errors.ts';
import type { BrowserSandbox } from '../../browser-env/types.ts';
import { checkStartUrl } from '../../browser-env/url-policy.ts';
import type { OpenEnvHost } from '../host.ts';
import { OpenEnvError, type ResetArgs, type StepOut } from '../wire.ts';
import { parseOr, pick, SandboxSession } from './base.ts';
import { sandboxCall, sandboxTools, toolHost } from '../tools.ts';
import { type EnvSession, type McpTool, type OpenEnvAdapter, type StepReport, type TaskEntry, type ToolResult } from './types.ts';

/** Reset arguments a browser episode takes (others are ignored, as OpenEnv drops what reset() does not accept). */
const RESET_KEYS = ['start_url', 'viewport', 'coordinate_space', 'rel_divisor', 'som', 'accessibility', 'resize', 'screenshot_format', 'screenshot_quality', 'network', 'episode', 'record', 'locale', 'timezone'] as const;

/** `task`: "suite/id" (e.g. "offline/shop-cheapest-usb-c-cable"), {suite, id}, or a task given in full. */
const TaskArg = z.union([z.string().regex(/^[^/]+\/.+$/, 'a task is "suite/id"'), TaskSpec]);

export const BrowserObservation = Observation.omit({ timings: true, settle: true }).extend({
  screenshot: Screenshot.nullable().describe('null when the step asked for screenshot "none"'),
  goal: z.string().describe("the task's question (empty without a task)"),
  actions: z.array(ResolvedAction).describe('what the step executed, resolved'),
  parse: z.object({ ok: z.boolean(), format: z.string(), error: z.string().optional() }).optional(),
  answer: z.string().optional(),
  terminated: z.boolean(),
  truncated: z.boolean(),
  evaluation: z.record(z.string(), z.unknown()).optional().describe("the terminal step's evaluation (reward, verdict)"),
});

/** The capture contract on OpenEnv's wire: no observation without the screenshot it asked for. `what` says what was
 * missed (the step route's message up to its advice to REST clients); the advice here is OpenEnv's. */
function captureMissing(what: string, executed: boolean, retryAfterS = 2): OpenEnvError {
  const next = executed ? 'its actions ran: observe again with the step {"actions": []}, do not resend it' : 'reset again';
  return new OpenEnvError('EXECUTION_ERROR', `${what}; ${next}.`, undefined, { grove_code: 'capture_timeout', executed, retry_after: retryAfterS });
}

/** What a capture_timeout of the step route says was missed, without its advice to REST clients. */
function missedOf(err: GroveError): string {
  const at = err.message.lastIndexOf('); ');
  return at >= 0 ? err.message.slice(0, at + 1) : 'The screenshot could not be captured within the deadline';
}

function obsOut(o: StepResult['observation']): Record<string, unknown> {
  const { timings: _t, settle: _s, ...rest } = o;
  return { ...rest, screenshot: o.screenshot ?? null };
}

class BrowserSession extends SandboxSession {
  private goal = '';
  private hasTask = false;
  private som = false;

  async reset(args: ResetArgs): Promise<StepOut> {
    const raw: Record<string, unknown> = { type: 'browser', ...pick(args, RESET_KEYS), idle_timeout_seconds: this.idleTimeoutS };
    if (args.task !== undefined && args.task !== null) {
      const t = parseOr(TaskArg, args.task, ['task'], 'reset argument');
      raw.task = typeof t === 'string' ? { suite: t.slice(0, t.indexOf('/')), id: t.slice(t.indexOf('/') + 1) } : t;
    }
    const spec = parseOr(BrowserCreateOptions, raw, [], 'reset arguments');
    checkStartUrl(spec.start_url);
    const prepared = await this.host.episodes.prepare(spec);
    await this.start(prepared.body, args, (id) => this.host.episodes.attach(id, prepared.state));
    this.goal = prepared.state.resolved?.task.question ?? '';
    this.hasTask = prepared.state.resolved !== undefined;
    this.som = spec.som;
    const sb = this.sandbox<BrowserSandbox>();
    // A capture that missed its deadline (a loaded machine) gets a second look before the reset fails.
    let obs = await sb.observe({ screenshot: 'base64' });
    if (!obs.screenshot) obs = await sb.observe({ screenshot: 'base64' });
    this.touch();
    if (!obs.screenshot) {
      const why = obs.last_action_error?.code === 'capture_timeout' ? obs.last_action_error.message : 'no screenshot was captured';
      throw captureMissing(`The screenshot could not be captured within the deadline (${why})`, false);
    }
    return { observation: { ...obsOut(obs), goal: this.goal, actions: [], terminated: false, truncated: false }, reward: null, done: false };
  }

  async step(action: Record<string, unknown>): Promise<StepOut> {
    const body = parseOr(StepRequest, action, ['body', 'action'], 'action');
    if (body.screenshot === 'binary') throw new OpenEnvError('VALIDATION_ERROR', 'screenshot "binary" has no OpenEnv form: use "base64" or "none".');
    this.sandbox<BrowserSandbox>();
    const id = this.id as string;
    // A step of the episode, as the REST route counts one: actions ran, or a policy's text was given (parsed or not).
    const counts = body.model_output !== undefined || (body.actions ?? [body.action]).length > 0;
    let result: StepResult;
    try {
      // The step route's own code (server/browser-step.ts, through the host): the policy format parsed on the
      // sandbox's parse context, step hooks (recording), admission, episode state, counted under this transport.
      result = await this.host.browserStep(id, body, body.screenshot === 'none' ? 'none' : 'base64', this.reporter('browser'));
    } catch (err) {
      if (!(err instanceof GroveError) || err.code !== 'capture_timeout') throw err;
      const executed = (err.clientDetails as { executed?: boolean } | undefined)?.executed === true;
      if (executed) this.steps++;
      throw captureMissing(missedOf(err), executed, err.retryAfter);
    }
    if (counts) this.steps++;
    const terminated = result.terminated ?? false;
    const truncated = result.truncated ?? false;
    const done = terminated || truncated;
    const observation: Record<string, unknown> = {
      ...obsOut(result.observation), goal: this.goal, actions: result.actions, terminated, truncated,
      ...(result.parse ? { parse: result.parse } : {}), ...(result.answer !== undefined ? { answer: result.answer } : {}),
    };
    let reward: number | null = null;
    if (done && !this.ended && this.hasTask) {
      const evaluation = await this.host.episodes.evaluate(id, {});
      reward = evaluation.reward;
      observation.evaluation = evaluation;
    }
    this.ended ||= done;
    return { observation, reward, done };
  }

  protected stateExtra(): Record<string, unknown> {
    return { goal: this.goal };
  }

  listTools(): McpTool[] {
    return this.id ? sandboxTools(this.tools(), this.id) : browserTools();
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    this.sandbox<BrowserSandbox>();
    return this.countedCall('browser', () => sandboxCall(this.tools(), this.id as string, name, args));
  }

  /** The mcp/ room's browser tools, each call a step of this episode through the step route's own code (hooks,
   * episode state) like an action step; the call itself is counted (callTool), its step is not counted again. */
  private tools() {
    return toolHost(this.host, async (actions) => {
      const r = await this.host.browserStep(this.id as string, { actions } as StepRequest, 'base64', null);
      if (actions.length) this.steps++;
      return r;
    });
  }
}

let tools: McpTool[] | undefined;
/** Before any episode: one tool per canonical action (its fields as the input schema). */
function browserTools(): McpTool[] {
  tools ??= Action.options.map((o) => {
    const name = (o.shape.action as z.ZodLiteral<string>).value;
    const schema = z.toJSONSchema(o as z.ZodType, { io: 'input', unrepresentable: 'any' }) as { $schema?: string; properties?: Record<string, unknown>; required?: string[] };
    delete schema.$schema;
    delete schema.properties?.action;
    if (schema.required) schema.required = schema.required.filter((r) => r !== 'action');
    return { name, description: `Grove browser action "${name}".`, inputSchema: schema };
  });
  return tools;
}

export const browserAdapter: OpenEnvAdapter = {
  name: 'browser',
  description: "Grove's browser environment: a headless Chromium page per episode, actions in Grove's canonical schema or a policy's raw output, observations with the screenshot and page facts.",
  action: StepRequest,
  observation: BrowserObservation,
  tools: browserTools,
  async tasks(host: OpenEnvHost): Promise<TaskEntry[]> {
    const out: TaskEntry[] = [];
    for (const suite of host.episodes.catalog.suites()) {
      const list = await host.episodes.catalog.list(suite).catch(() => []);
      for (const t of list) out.push({ task: `${suite}/${t.id}`, suite, id: t.id, question: t.question });
    }
    return out;
  },
  open(host: OpenEnvHost, idleTimeoutS: number, report?: StepReport): EnvSession {
    return new BrowserSession(host, idleTimeoutS, report);
  },
};
