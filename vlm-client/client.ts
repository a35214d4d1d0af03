// OpenAI-compatible chat-completions client for VLM policies and judges, over the official `openai` SDK (6.x):
// the SDK does the HTTP, timeouts and retries; this module builds the body, decodes the answer (chat-decode.ts,
// vLLM/SGLang extras from the raw body), counts attempts and maps errors onto one family (sdk-transport.ts,
// errors.ts). It re-exports the wire types and the errors, so callers import the client's whole surface from here.
import OpenAI from 'openai';
import type { Logger } from '../sandbox/log.ts';
import { silentLogger } from '../sandbox/log.ts';
import type { ChatClientOptions, ChatRequest, ChatResult, ClientStats, Sent } from './chat-types.ts';
import { APIError } from './errors.ts';
import { decodeChat, readStream } from './chat-decode.ts';
import { headerRecord, toGroveError, traced, tracingFetch, type CallTrace } from './sdk-transport.ts';

export * from './chat-types.ts';
export {
  APIError, BadRequestError, AuthenticationError, PermissionDeniedError, NotFoundError, ConflictError,
  UnprocessableEntityError, RateLimitError, InternalServerError, APIConnectionError, APITimeoutError, APIUserAbortError,
} from './errors.ts';

/**
 * The official OpenAI client sending the headers it is given and no others. Its constructor (openai 6.x) merges
 * OPENAI_CUSTOM_HEADERS from the host's environment into the default headers, with no option to turn that off;
 * the default headers are put back to the given ones right after (`_options` is the SDK's protected field).
 * test/vlm-client/env-headers.test.ts sets the variable and checks the requests.
 */
class OwnHeadersOpenAI extends OpenAI {
  constructor(opts: NonNullable<ConstructorParameters<typeof OpenAI>[0]>) {
    super(opts);
    this._options = { ...this._options, defaultHeaders: opts.defaultHeaders };
  }
}

export class ChatClient {
  readonly model: string;
  readonly baseURL: string;
  protected readonly apiKey: string | undefined;
  protected readonly timeoutMs: number;
  protected readonly maxRetries: number;
  protected readonly fetchImpl: typeof fetch;
  protected readonly defaultHeaders: Record<string, string>;
  protected readonly log: Logger;
  protected readonly maxRetryAfterMs: number;
  private openaiSdk: OpenAI | undefined;
  private readonly totals: ClientStats = {
    calls: 0,
    succeeded: 0,
    failed: 0,
    attempts: 0,
    retries: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    latency_ms_total: 0,
    latency_ms_max: 0,
  };

  constructor(opts: ChatClientOptions) {
    if (!opts.baseURL) throw new TypeError('ChatClient: baseURL is required (e.g. http://127.0.0.1:8000/v1)');
    if (!opts.model) throw new TypeError('ChatClient: model is required');
    this.baseURL = opts.baseURL.replace(/\/+$/, '');
    this.model = opts.model;
    this.apiKey = opts.apiKey;
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.maxRetries = Math.max(0, opts.maxRetries ?? 2);
    this.fetchImpl = opts.fetch ?? globalThis.fetch;
    this.defaultHeaders = opts.defaultHeaders ?? {};
    this.log = opts.log ?? silentLogger;
    this.maxRetryAfterMs = opts.maxRetryAfterMs ?? 60_000;
  }

  /** Cumulative accounting over every `complete` call of this client. */
  stats(): ClientStats {
    return { ...this.totals };
  }

  async complete(req: ChatRequest): Promise<ChatResult> {
    const started = performance.now();
    this.totals.calls++;
    const body = this.buildBody(req);
    const trace: CallTrace = { attempts: 0 };
    try {
      const out = await traced(trace, async () => {
        try {
          return await this.decode(await this.send(body, req), body);
        } catch (e) {
          throw toGroveError(e, trace, this.apiName());
        }
      });
      const res: ChatResult = { ...out, latency_ms: Math.round(performance.now() - started), attempts: trace.attempts };
      this.account(res, trace);
      return res;
    } catch (e) {
      this.totals.failed++;
      this.count(trace);
      this.totals.latency_ms_total += performance.now() - started;
      throw e;
    }
  }

  private count(trace: CallTrace): void {
    this.totals.attempts += trace.attempts;
    this.totals.retries += Math.max(0, trace.attempts - 1);
  }

  private account(res: ChatResult, trace: CallTrace): void {
    this.count(trace);
    this.totals.succeeded++;
    this.totals.latency_ms_total += res.latency_ms;
    this.totals.latency_ms_max = Math.max(this.totals.latency_ms_max, res.latency_ms);
    if (res.usage) {
      this.totals.prompt_tokens += res.usage.prompt_tokens;
      this.totals.completion_tokens += res.usage.completion_tokens;
      this.totals.total_tokens += res.usage.total_tokens;
    }
  }

  /** The API's name in error messages. */
  protected apiName(): string {
    return 'chat-completions';
  }

  /** Path of the API call under baseURL; other OpenAI APIs (Responses) override it. */
  protected endpoint(): string {
    return '/chat/completions';
  }

  /**
   * The official OpenAI client, made once. Everything it would take from the environment (key, organization,
   * project, admin key, webhook secret, log level, custom headers) is given here: a policy talks to the server it
   * was configured for with the key and headers it was given.
   */
  private client(): OpenAI {
    this.openaiSdk ??= new OwnHeadersOpenAI({
      baseURL: this.baseURL,
      // Without a key no Authorization header goes out (a local vLLM); the SDK itself insists on one.
      apiKey: this.apiKey ?? 'none',
      adminAPIKey: null,
      organization: null,
      project: null,
      webhookSecret: null,
      logLevel: 'off',
      timeout: this.timeoutMs,
      maxRetries: this.maxRetries,
      fetch: tracingFetch(this.fetchImpl, this.log, this.apiName(), this.maxRetryAfterMs),
      defaultHeaders: { ...(this.apiKey ? {} : { Authorization: null }), ...this.defaultHeaders },
    });
    return this.openaiSdk;
  }

  /** Sends the body through the SDK (its timeouts and retries); a stream comes back as the raw response. */
  protected async send(body: Record<string, unknown>, req: ChatRequest): Promise<Sent> {
    const call = this.client().post<unknown>(this.endpoint(), { body, signal: req.signal, stream: body.stream === true });
    if (body.stream === true) {
      const response = await call.asResponse();
      return { data: response, status: response.status, headers: headerRecord(response.headers) };
    }
    const { data, response } = await call.withResponse();
    return { data, status: response.status, headers: headerRecord(response.headers) };
  }

  protected buildBody(req: ChatRequest): Record<string, unknown> {
    const body: Record<string, unknown> = { model: this.model, messages: req.messages };
    if (req.tools?.length) body.tools = req.tools;
    if (req.tool_choice !== undefined) body.tool_choice = req.tool_choice;
    if (req.temperature !== undefined) body.temperature = req.temperature;
    if (req.max_tokens !== undefined) body.max_tokens = req.max_tokens;
    if (req.stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    return { ...body, ...(req.extra ?? {}) };
  }

  /** Reads a successful answer into a ChatResult (chat completions: a JSON body, or an SSE stream). */
  protected async decode(sent: Sent, body: Record<string, unknown>): Promise<Omit<ChatResult, 'latency_ms' | 'attempts'>> {
    if (sent.data instanceof Response) {
      if (body.stream === true && (sent.headers['content-type'] ?? '').includes('text/event-stream')) return readStream(sent.data, sent.headers);
      // Asked to stream, answered with one JSON body.
      return decodeChat({ ...sent, data: await sent.data.text() });
    }
    return decodeChat(sent);
  }
}

/** The JSON object of a successful answer, or a readable APIError naming the API. */
export function bodyObject(sent: Sent, api: string): Record<string, unknown> {
  const v = sent.data;
  if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  throw new APIError(sent.status, undefined, `The ${api} response is not a JSON object.`, sent.headers);
}
