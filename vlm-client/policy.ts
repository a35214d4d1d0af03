// The VLM policy: builds the prompt (format's system prompt, task, history, current screenshot as a data URL),
// calls an OpenAI-compatible model and returns its raw output for the runner to parse with the same format.
import type { Observation } from '../protocol/observation.ts';
import type { Task } from '../protocol/task.ts';
import type { Policy, PolicyDecision, PolicyStepContext } from '../protocol/policy.ts';
import type { Logger } from '../sandbox/log.ts';
import { silentLogger } from '../sandbox/log.ts';
import type { ChatClient, ChatResult } from './client.ts';
import { ContextManager, type BuiltContext, type ContextOptions, type ImageRef } from './context.ts';
import { getFormat, FORMAT_NAMES, parseModelOutput, somText, type FormatOptions, type PolicyFormat } from './formats/index.ts';

export interface VlmPolicyOptions {
  client: ChatClient;
  /** Format name (see FORMAT_NAMES) or a format object. */
  format: string | PolicyFormat;
  name?: string;
  context?: ContextOptions;
  temperature?: number;
  max_tokens?: number;
  stream?: boolean;
  /**
   * Send the format's tools through the API (`tools`), for servers that parse tool calls themselves. Default: false,
   * the tools are described in the system prompt and the model writes them as text.
   */
  nativeTools?: boolean;
  /** Options for the format's prompt (rel_divisor, language). Screenshot size is filled in per step. */
  formatOptions?: FormatOptions;
  /** Replace the format's system prompt. */
  systemPrompt?: string;
  /** Include the SoM element list in the observation text (default: on for the webvoyager format). */
  somText?: boolean;
  /** Extra request body fields (top_p, seed, vendor options...). */
  extra?: Record<string, unknown>;
  signal?: AbortSignal;
  log?: Logger;
}

/** The observation text the model sees next to the screenshot. */
export function observationText(obs: Observation, opts: { som?: boolean; parseError?: string } = {}): string {
  const lines = [`URL: ${obs.url}`, `Title: ${obs.title}`];
  if (obs.tabs.length > 1) {
    lines.push(`Tabs: ${obs.tabs.map((t) => `[${t.index}${t.active ? '*' : ''}] ${t.title || t.url}`).join(' | ')}`);
  }
  if (obs.last_action_error) lines.push(`The last action failed (${obs.last_action_error.code}): ${obs.last_action_error.message}`);
  for (const e of obs.events) {
    if (e.type === 'dialog') lines.push(`${e.dialog_type === 'alert' ? 'An' : 'A'} ${e.dialog_type} dialog said "${e.message}" and was ${e.handled}.`);
    else if (e.type === 'download') lines.push(`Downloaded ${e.filename} (${e.size} bytes).`);
    else if (e.type === 'popup') lines.push(`A new tab opened: ${e.url}${e.switched ? ' (now active)' : ''}.`);
    else if (e.type === 'network_blocked') lines.push(`Blocked by policy: ${e.url}.`);
  }
  if (opts.parseError) lines.push(`Your previous reply could not be used: ${opts.parseError} Reply again in the required format.`);
  if (opts.som && obs.som?.length) lines.push('Labelled elements:', somText(obs.som));
  if (!obs.screenshot?.base64) lines.push('(No screenshot is available for this step.)');
  return lines.join('\n');
}

/** The model's answer as one string: plain text, or `{content, tool_calls}` JSON when it called tools. */
function outputString(r: ChatResult): string {
  if (!r.tool_calls.length) return r.text;
  return JSON.stringify({ content: r.text || null, tool_calls: r.tool_calls.map((t) => ({ id: t.id, name: t.name, arguments: t.arguments })) });
}

export class VlmPolicy implements Policy {
  readonly name: string;
  readonly format: PolicyFormat;
  private readonly ctx: ContextManager;
  private readonly log: Logger;
  private lastBuilt: BuiltContext | undefined;
  private firstStep = true;
  /** Conversation state of a stateful API (OpenAI Responses), one per episode. */
  private apiState: Record<string, unknown> = {};

  constructor(private readonly opts: VlmPolicyOptions) {
    const f = typeof opts.format === 'string' ? getFormat(opts.format) : opts.format;
    if (!f) throw new TypeError(`Unknown policy output format "${String(opts.format)}"; known formats: ${FORMAT_NAMES.join(', ')}.`);
    this.format = f;
    this.name = opts.name ?? `vlm:${opts.client.model}:${f.name}`;
    this.ctx = new ContextManager(opts.context);
    this.log = opts.log ?? silentLogger;
  }

  /** The context of the last call (messages sent, token estimate), for tests and debugging. */
  get lastContext(): BuiltContext | undefined {
    return this.lastBuilt;
  }

  private formatOptions(obs?: Observation): FormatOptions {
    const o: FormatOptions = { ...(this.opts.formatOptions ?? {}), native_tools: !!this.opts.nativeTools };
    if (obs?.screenshot) {
      o.width = obs.screenshot.width;
      o.height = obs.screenshot.height;
    }
    if (obs?.som) o.som = obs.som;
    return o;
  }

  start(task: Task): void {
    const system = this.opts.systemPrompt ?? this.format.systemPrompt(this.formatOptions());
    this.ctx.start(system, task.question);
    this.firstStep = true;
    this.apiState = {};
  }

  async next(obs: Observation, step: PolicyStepContext): Promise<PolicyDecision> {
    const fopts = this.formatOptions(obs);
    // Image-pixel formats state the screenshot size in their prompt; refresh it once it is known.
    if (this.firstStep && !this.opts.systemPrompt && this.format.space === 'image_px' && obs.screenshot) {
      this.ctx.start(this.format.systemPrompt(fopts), step.task.question);
    }
    this.firstStep = false;
    const showSom = this.opts.somText ?? this.format.name === 'webvoyager';
    const text = this.format.observationText
      ? this.format.observationText(obs, { parseError: step.lastParseError, lastActions: step.lastActions })
      : observationText(obs, { som: showSom, parseError: step.lastParseError });
    const image: ImageRef | undefined = obs.screenshot?.base64
      ? { url: `data:${obs.screenshot.mime};base64,${obs.screenshot.base64}`, width: obs.screenshot.width, height: obs.screenshot.height }
      : undefined;
    const built = this.ctx.build({ step: step.step, text, image });
    this.lastBuilt = built;
    if (built.overBudget) this.log.warn({ tokens: built.estimatedTokens, step: step.step }, 'prompt above the token budget');

    const res = await this.opts.client.complete({
      messages: built.messages,
      tools: this.opts.nativeTools ? this.format.tools?.(fopts) : undefined,
      temperature: this.opts.temperature,
      max_tokens: this.opts.max_tokens,
      stream: this.opts.stream,
      signal: this.opts.signal,
      extra: this.opts.extra,
      // APIs with a built-in computer tool declare the screenshot size as the display (chat completions ignore it).
      ...(obs.screenshot ? { computer: { width: obs.screenshot.width, height: obs.screenshot.height } } : {}),
      state: this.apiState,
    });
    const output = outputString(res);
    // Parsed here only for the thought and the history text; the runner does the authoritative parse.
    const parsed = parseModelOutput(this.format.name, output, fopts);
    const thought = parsed.thought;
    this.ctx.record({
      step: step.step,
      observation: text,
      image,
      output,
      thought,
      action: parsed.ok ? parsed.actions.map((a) => JSON.stringify(a)).join('; ') : undefined,
      ...(res.tool_calls.length
        ? {
            tool_calls: {
              turn_text: res.text || null,
              calls: res.tool_calls.map((t) => ({ id: t.id, type: 'function' as const, function: { name: t.name, arguments: t.arguments } })),
            },
          }
        : {}),
      // A parse failure is reported to the model by the runner's next `lastParseError` (see observationText).
    });
    const decision: PolicyDecision = { output, format: this.format.name, latency_ms: res.latency_ms };
    if (thought) decision.thought = thought;
    if (res.usage) {
      decision.prompt_tokens = res.usage.prompt_tokens;
      decision.completion_tokens = res.usage.completion_tokens;
    }
    return decision;
  }
}
