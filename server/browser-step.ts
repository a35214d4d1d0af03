// One browser step, whatever carries it: the POST /sandboxes/{id}/step route, the step channel (a WebSocket,
// server/step-socket.ts), a sandbox's MCP server and OpenEnv's sessions (given as openenv/host.ts `browserStep`) all
// call runBrowserStep and differ only in how they put the answer on the wire and how the step is labelled.
import type { StepRequest } from '../protocol/api.ts';
import type { Action } from '../protocol/action.ts';
import { GroveError } from '../protocol/errors.ts';
import type { StepResult } from '../protocol/observation.ts';
import type { StepOptions } from '../browser-env/types.ts';
import { stepBudgetMs } from '../browser-env/step-budget.ts';
import { FORMAT_NAMES, getFormat, parseModelOutput } from '../vlm-client/formats/index.ts';
import type { StepSource } from '../sandbox/step-hook.ts';
import type { StepOutcome, StepTransport } from '../sandbox/step-count.ts';
import { missingCapture } from './capture-contract.ts';
import type { RouteContext } from './route.ts';
import { browserSandbox } from './routes/common.ts';

/** How a step is counted in grove_steps_total: the transport it came on (`grove` for the REST route and the step
 * channel), a report of its own (OpenEnv's sessions label theirs), or null where the caller counts (an MCP tool call). */
export type BrowserStepCount = StepTransport | ((seconds: number, outcome: StepOutcome) => void) | null;

/**
 * Runs a validated step request in sandbox `id` and returns the annotated result (terminated / truncated). `capture`
 * is what the sandbox captures ('base64' for every screenshot-carrying answer, 'none' for none). Throws GroveError:
 * 503 capture_timeout when a screenshot was wanted and none came (the step counted; server/capture-contract.ts).
 * Every protocol's browser step runs here: the REST route, the step channel, a sandbox's MCP server and OpenEnv's
 * sessions (openenv/host.ts `browserStep`).
 */
export async function runBrowserStep(ctx: RouteContext, id: string, body: StepRequest, capture: 'base64' | 'none' | undefined, count: BrowserStepCount = 'grove'): Promise<StepResult> {
  const counted = (seconds: number, outcome: StepOutcome) => {
    if (typeof count === 'function') count(seconds, outcome);
    else if (count !== null) ctx.metrics.countStep('browser', seconds, outcome, count);
  };
  // Aliases ("ui-tars", "Qwen3-VL") resolve to one canonical name, which is what the response reports.
  const fmt = body.model_output !== undefined ? getFormat(body.format ?? '') : undefined;
  if (body.model_output !== undefined && !fmt) {
    throw new GroveError('unknown_format', `Unknown policy output format "${body.format}"; known formats: ${FORMAT_NAMES.join(', ') || '(none)'}.`);
  }
  const sb = browserSandbox(ctx, id);
  const opts: StepOptions = { screenshot: capture, som: body.som, accessibility: body.accessibility, som_overlay: body.som_overlay };
  const finish = (r: StepResult): StepResult => {
    // terminated / truncated as the episode loop defines them (episodes/state.ts).
    const annotated = ctx.episodes.annotate(id, r, { model_output: body.model_output });
    // No screenshot where one was asked for: 503 capture_timeout (server/capture-contract.ts), the step counted.
    const missing = missingCapture(capture !== 'none', r.observation, r.actions.length ? r : undefined);
    if (missing) throw missing;
    return annotated;
  };
  const started = performance.now();
  // Every step (one that executed nothing included) goes to the sandbox's step hooks, e.g. its recording.
  const stepped = (r: StepResult, src: StepSource | undefined) =>
    ctx.registry.stepped({ sandboxId: id, source: src, actions: r.actions, observation: r.observation, done: r.done, answer: r.answer });
  let actions: Action[];
  let parse: StepResult['parse'];
  let source: StepSource | undefined;
  if (body.model_output !== undefined && fmt) {
    const format = fmt.name;
    // The parser sees what the model saw: the last SoM list (WebVoyager "Scroll [n]"), the screenshot size
    // (range checks of image_px formats) and the sandbox's rel1000 grid divisor.
    await sb.syncParseContext?.();
    const parsed = parseModelOutput(format, body.model_output, sb.parseContext());
    source = { model_output: body.model_output, format, ...(parsed.thought === undefined ? {} : { thought: parsed.thought }) };
    if (!parsed.ok) {
      try {
        const result: StepResult = { observation: await sb.observe(opts), actions: [], done: false, parse: { ok: false, format, error: parsed.error } };
        await stepped(result, { ...source, parse_error: parsed.error });
        counted((performance.now() - started) / 1000, 'parse_error');
        return finish(result);
      } finally {
        ctx.registry.touch(id);
      }
    }
    actions = parsed.actions;
    parse = { ok: true, format };
  } else {
    actions = body.actions ?? [body.action as Action];
  }
  try {
    // A model may legitimately answer with no action (e.g. only a thought): observe, execute nothing. That is
    // a step of the episode when it came from model output; an empty action list alone is only a look.
    const result: StepResult = actions.length === 0 ? { observation: await sb.observe(opts), actions: [], done: false } : await sb.step(actions, opts);
    if (actions.length > 0 || source) await stepped(result, source);
    const failed = result.actions.some((a) => a.error !== null);
    const ms = performance.now() - started;
    counted(ms / 1000, failed ? 'error' : 'ok');
    // Admission control measures what steps take against their deadline, and their captures.
    if (actions.length > 0) ctx.registry.admission?.observeStep(ms, stepBudgetMs(sb.options, actions, sb.options.settle), result.observation.timings.capture);
    return finish(parse ? { ...result, parse } : result);
  } catch (err) {
    // A missing capture is not the episode's failure: the step ran and was counted; the client observes again.
    // It is the server's: admission carries fewer sandboxes for a while (sandbox/admission.ts).
    if (err instanceof GroveError && err.code === 'capture_timeout') ctx.registry.admission?.observeCaptureMiss(ctx.registry.liveCount());
    else ctx.episodes.stepFailed(id, err);
    throw err;
  } finally {
    ctx.registry.touch(id);
  }
}
