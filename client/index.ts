// Typed client for the Grove REST API. Imports only protocol/ (and zod types), so it can ship alone.
// Non-2xx answers throw GroveApiError with the server's stable error code.
import type { DownloadInfo, Health, ResetRequest, SandboxList } from '../protocol/api.ts';
import type { StepRequest } from '../protocol/api.ts';
import type { Observation, StepResult } from '../protocol/observation.ts';
import type { BrowserCreateInput, CreateSandboxBody, SandboxInfo } from '../protocol/sandbox.ts';
import type { z } from 'zod';
import type { ShellCreateOptions } from '../protocol/sandbox.ts';
import type { ApplyPatchResult, ExecInput, ExecResult, FileList, JobInfo } from '../protocol/shell.ts';
import type { TaskList, TaskSummary } from '../protocol/episode.ts';
import type { McpAccess } from '../protocol/mcp.ts';
import { SCREENSHOT_SPAN_HEADER } from '../protocol/headers.ts';
import { parseAnswer } from './answer.ts';
import { creationErrorStatus, GroveApiError, withScreenshot } from './errors.ts';
import { parseMultipart, type BinaryAnswer } from './multipart.ts';
import { nodeFetch, type FetchLike, type HttpAnswer } from './http.ts';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';

export type ShellCreateInput = z.input<typeof ShellCreateOptions>;
export type CreateSandboxInput = BrowserCreateInput | ShellCreateInput;
export type StepInput = z.input<typeof StepRequest>;
export interface ObservationOptions {
  screenshot?: 'base64' | 'none';
  som?: boolean;
  accessibility?: boolean;
  /** Draw the SoM labels onto the screenshot. */
  som_overlay?: boolean;
}
export { GroveApiError, parseMultipart, type BinaryAnswer };
export type { McpAccess, DownloadInfo, Health, Observation, SandboxInfo, StepResult, CreateSandboxBody, ExecInput, ExecResult, JobInfo, FileList, ApplyPatchResult };

export interface GroveClientOptions {
  /** e.g. http://127.0.0.1:8321 */
  baseUrl: string;
  apiKey?: string;
  /** Injectable fetch (tests, proxies); by default node:http with keep-alive (client/http.ts). */
  fetch?: FetchLike;
  /** Per-request timeout in ms (long-polls add their own wait time). Default 120 s. */
  timeoutMs?: number;
}

type Method = 'GET' | 'POST' | 'DELETE';

export class GroveClient {
  private readonly baseUrl: string;
  private readonly apiKey?: string;
  private readonly fetchImpl: FetchLike;
  private readonly ownTransport?: ReturnType<typeof nodeFetch>;
  private readonly timeoutMs: number;

  constructor(opts: GroveClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.apiKey = opts.apiKey;
    if (opts.fetch) this.fetchImpl = opts.fetch;
    else this.fetchImpl = this.ownTransport = nodeFetch();
    this.timeoutMs = opts.timeoutMs ?? 120_000;
  }

  /** Frees the kept-alive sockets of the default transport (idle ones never keep the process alive). */
  close(): void {
    this.ownTransport?.close();
  }

  /** Low-level call: returns the answer of a 2xx (fully received), throws GroveApiError otherwise. */
  async request(method: Method, path: string, body?: unknown, extraTimeoutMs = 0): Promise<HttpAnswer> {
    const headers: Record<string, string> = {};
    if (this.apiKey) headers['x-api-key'] = this.apiKey;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
    const ms = this.timeoutMs + extraTimeoutMs;
    let res: HttpAnswer;
    try {
      // The default transport keeps the deadline as a timer it clears; an injected fetch gets a signal.
      res = await (this.ownTransport ? this.ownTransport(this.baseUrl + path, { ...init, timeoutMs: ms }) : this.fetchImpl(this.baseUrl + path, { ...init, signal: AbortSignal.timeout(ms) }));
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      throw new GroveApiError(0, timedOut ? 'timeout' : 'network_error', `${method} ${path}: ${(err as Error).message}`, { cause: err });
    }
    if (res.ok) return res;
    const text = await res.text();
    let code = 'http_error';
    let message = text.slice(0, 500) || res.statusText;
    let details: Record<string, unknown> | undefined;
    try {
      const parsed = JSON.parse(text) as { error?: { code?: string; message?: string; details?: unknown } };
      if (parsed.error?.code) code = parsed.error.code;
      if (parsed.error?.message) message = parsed.error.message;
      const d = parsed.error?.details;
      if (d && typeof d === 'object' && !Array.isArray(d)) details = d as Record<string, unknown>;
    } catch {
      // not JSON (a proxy in between): keep the text
    }
    const ra = res.headers.get('retry-after');
    throw new GroveApiError(res.status, code, message, { retryAfter: ra && /^\d+$/.test(ra) ? Number(ra) : undefined, details });
  }

  private async json<T>(method: Method, path: string, body?: unknown, extraTimeoutMs = 0): Promise<T> {
    const res = await this.request(method, path, body, extraTimeoutMs);
    try {
      const span = res.headers.get(SCREENSHOT_SPAN_HEADER);
      if (span === null) return JSON.parse(await res.text()) as T;
      const bytes = res.bytes ? await res.bytes() : new Uint8Array(await res.arrayBuffer());
      return parseAnswer<T>(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), span);
    } catch (err) {
      throw new GroveApiError(res.status, 'bad_response', `${method} ${path}: response is not JSON`, { cause: err });
    }
  }

  private static id(id: string): string {
    return encodeURIComponent(id);
  }

  health(): Promise<Health> {
    return this.json('GET', '/health');
  }

  /** Starts creating a sandbox (status `creating`); see waitSandbox / createAndWait. */
  createSandbox(body: CreateSandboxInput): Promise<SandboxInfo> {
    return this.json('POST', '/sandboxes', body);
  }

  async listSandboxes(): Promise<SandboxInfo[]> {
    return (await this.json<SandboxList>('GET', '/sandboxes')).sandboxes;
  }

  /** GET /tasks?suite=: the tasks a sandbox can be created with (`task: {suite, id}`), without their answers. */
  async tasks(suite: string): Promise<TaskSummary[]> {
    return (await this.json<TaskList>('GET', `/tasks?suite=${encodeURIComponent(suite)}`)).tasks;
  }

  getSandbox(id: string): Promise<SandboxInfo> {
    return this.json('GET', `/sandboxes/${GroveClient.id(id)}`);
  }

  /** The raw long-poll: info after the sandbox left `creating` or `timeoutSec` passed (no status check). */
  waitSandboxInfo(id: string, timeoutSec = 30): Promise<SandboxInfo> {
    return this.json('GET', `/sandboxes/${GroveClient.id(id)}/wait?timeout=${timeoutSec}`, undefined, timeoutSec * 1000);
  }

  /**
   * Resolves with the info once the sandbox is ready; throws GroveApiError with the creation error's code, and the
   * HTTP status the server's catalog gives that code (`browser_start_timeout`: 503, retry later), when it failed;
   * code `timeout` (status 0: nothing was answered with an error) when it is still creating after `timeoutSec`.
   */
  async waitSandbox(id: string, timeoutSec = 30): Promise<SandboxInfo> {
    const info = await this.waitSandboxInfo(id, timeoutSec);
    if (info.status === 'ready' || info.status === 'busy') return info;
    if (info.status === 'creating') throw new GroveApiError(0, 'timeout', `Sandbox ${id} is still creating after ${timeoutSec} s.`);
    if (info.error) throw new GroveApiError(creationErrorStatus(info.error.code), info.error.code, `Sandbox ${id} failed to start: ${info.error.message}`);
    throw new GroveApiError(0, 'sandbox_closed', `Sandbox ${id} is ${info.status}.`);
  }

  /** create + waitSandbox; deletes the sandbox when it did not become ready. */
  async createAndWait(body: CreateSandboxInput, timeoutSec = 60): Promise<SandboxInfo> {
    const created = await this.createSandbox(body);
    if (created.status === 'ready') return created;
    try {
      return await this.waitSandbox(created.sandbox_id, timeoutSec);
    } catch (err) {
      await this.deleteSandbox(created.sandbox_id).catch(() => undefined);
      throw err;
    }
  }

  /** Idempotent on the server: an already-closed sandbox answers 204 too. */
  async deleteSandbox(id: string): Promise<void> {
    await this.request('DELETE', `/sandboxes/${GroveClient.id(id)}`);
  }

  /** Episode reset of a browser sandbox: fresh context, new start URL / network rules; resolves once the page is open. */
  resetSandbox(id: string, body: ResetRequest = {}): Promise<SandboxInfo> {
    return this.json('POST', `/sandboxes/${GroveClient.id(id)}/reset`, body);
  }

  heartbeat(id: string): Promise<SandboxInfo> {
    return this.json('POST', `/sandboxes/${GroveClient.id(id)}/heartbeat`);
  }

  /**
   * One of `action`, `actions` or `model_output` + `format`. A screenshot that could not be captured raises
   * GroveApiError 503 `capture_timeout` (its actions ran: see `details`; observe again, do not resend).
   */
  async step(id: string, body: Omit<StepInput, 'screenshot'> & { screenshot?: 'base64' | 'none' }): Promise<StepResult> {
    const path = `/sandboxes/${GroveClient.id(id)}/step`;
    const r = await this.json<StepResult>('POST', path, body);
    withScreenshot(r.observation, body.screenshot !== 'none', `POST ${path}`);
    return r;
  }

  /**
   * A step whose screenshot comes as raw bytes (`screenshot: "binary"`, a multipart/mixed answer): `image` is
   * the encoded image and `result.observation.screenshot` has no base64. No capture raises 503 capture_timeout.
   */
  async stepBinary(id: string, body: Omit<StepInput, 'screenshot'>): Promise<BinaryAnswer<StepResult>> {
    const path = `/sandboxes/${GroveClient.id(id)}/step`;
    return this.binary<StepResult>(await this.request('POST', path, { ...body, screenshot: 'binary' }), `POST ${path}`);
  }

  /** The observation with its screenshot as raw bytes (see stepBinary). */
  async observationBinary(id: string, opts: Omit<ObservationOptions, 'screenshot'> = {}): Promise<BinaryAnswer<Observation>> {
    const path = GroveClient.observationPath(id, { ...opts, screenshot: 'binary' });
    return this.binary<Observation>(await this.request('GET', path), `GET ${path}`);
  }

  private async binary<T>(res: HttpAnswer, what: string): Promise<BinaryAnswer<T>> {
    const type = res.headers.get('content-type') ?? '';
    const bytes = new Uint8Array(await res.arrayBuffer());
    let plain: T;
    try {
      if (type.startsWith('multipart/')) {
        const [json, image] = parseMultipart(bytes, type);
        if (!json || !image) throw new Error(`expected 2 parts`);
        return { result: JSON.parse(new TextDecoder().decode(json.body)) as T, image: { mime: image.type, bytes: image.body } };
      }
      plain = JSON.parse(new TextDecoder().decode(bytes)) as T;
    } catch (err) {
      throw new GroveApiError(res.status, 'bad_response', `${what}: unreadable answer (${(err as Error).message})`, { cause: err });
    }
    // A screenshot was asked for and none came (a server older than the capture contract): raised, never null.
    throw new GroveApiError(503, 'capture_timeout', `${what}: the answer has no screenshot`, { details: { executed: what.startsWith('POST'), result: plain } });
  }

  /** The observation; a screenshot that could not be captured raises GroveApiError 503 `capture_timeout`. */
  async observation(id: string, opts: ObservationOptions = {}): Promise<Observation> {
    const path = GroveClient.observationPath(id, opts);
    return withScreenshot(await this.json<Observation>('GET', path), opts.screenshot !== 'none', `GET ${path}`);
  }

  private static observationPath(id: string, opts: Omit<ObservationOptions, 'screenshot'> & { screenshot?: string }): string {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(opts)) if (v !== undefined) q.set(k, String(v));
    const qs = q.toString();
    return `/sandboxes/${GroveClient.id(id)}/observation${qs ? `?${qs}` : ''}`;
  }

  /** Current screenshot bytes in the sandbox's image format. */
  async screenshot(id: string): Promise<{ mime: string; bytes: Uint8Array; width: number; height: number }> {
    const res = await this.request('GET', `/sandboxes/${GroveClient.id(id)}/screenshot`);
    return {
      mime: res.headers.get('content-type') ?? 'application/octet-stream',
      bytes: new Uint8Array(await res.arrayBuffer()),
      width: Number(res.headers.get('x-image-width') ?? 0),
      height: Number(res.headers.get('x-image-height') ?? 0),
    };
  }

  async downloads(id: string): Promise<DownloadInfo[]> {
    return (await this.json<{ downloads: DownloadInfo[] }>('GET', `/sandboxes/${GroveClient.id(id)}/downloads`)).downloads;
  }

  async download(id: string, downloadId: string): Promise<Uint8Array> {
    const res = await this.request('GET', `/sandboxes/${GroveClient.id(id)}/downloads/${encodeURIComponent(downloadId)}`);
    return new Uint8Array(await res.arrayBuffer());
  }

  /** Runs a command in a shell sandbox and answers when it ended (the HTTP timeout allows for its own). */
  exec(id: string, body: Omit<ExecInput, 'background'>): Promise<ExecResult> {
    return this.json('POST', `/sandboxes/${GroveClient.id(id)}/exec`, body, (body.timeout_s ?? 300) * 1000);
  }

  /** Starts a command as a job (202); follow it with job(). */
  startJob(id: string, body: Omit<ExecInput, 'background'>): Promise<JobInfo> {
    return this.json('POST', `/sandboxes/${GroveClient.id(id)}/exec`, { ...body, background: true });
  }

  /** A job's info; with waitSec, once it finished or waitSec passed. */
  job(id: string, jobId: string, waitSec = 0): Promise<JobInfo> {
    return this.json('GET', `/sandboxes/${GroveClient.id(id)}/jobs/${encodeURIComponent(jobId)}?wait=${waitSec}`, undefined, waitSec * 1000);
  }

  uploadFile(id: string, path: string, data: Uint8Array | string, mode?: string): Promise<{ path: string; size: number }> {
    const content = typeof data === 'string' ? data : Buffer.from(data).toString('base64');
    return this.json('POST', `/sandboxes/${GroveClient.id(id)}/files`, { path, content, encoding: typeof data === 'string' ? 'utf8' : 'base64', ...(mode ? { mode } : {}) });
  }

  /**
   * Writes a large file (a host file, streamed from disk) into the workspace as raw bytes: PUT …/files/stream,
   * outside the server's JSON body limit. The deadline is the client's timeout plus one second per MiB.
   */
  async uploadFileStream(id: string, path: string, hostFile: string, mode?: string): Promise<{ path: string; size: number }> {
    const size = (await stat(hostFile)).size;
    const headers: Record<string, string> = { 'content-type': 'application/octet-stream', 'content-length': String(size) };
    if (this.apiKey) headers['x-api-key'] = this.apiKey;
    const q = `path=${encodeURIComponent(path)}${mode ? `&mode=${encodeURIComponent(mode)}` : ''}`;
    const url = `${this.baseUrl}/sandboxes/${GroveClient.id(id)}/files/stream?${q}`;
    const ms = this.timeoutMs + Math.ceil(size / (1024 * 1024)) * 1000;
    let res: Response;
    try {
      const body = Readable.toWeb(createReadStream(hostFile)) as ReadableStream<Uint8Array>;
      res = await fetch(url, { method: 'PUT', headers, body, duplex: 'half', signal: AbortSignal.timeout(ms) } as RequestInit);
    } catch (err) {
      throw new GroveApiError(0, 'network_error', `PUT ${url}: ${(err as Error).message}`, { cause: err });
    }
    const text = await res.text();
    if (!res.ok) {
      let code = 'http_error';
      let message = text.slice(0, 500) || res.statusText;
      try {
        const parsed = JSON.parse(text) as { error?: { code?: string; message?: string } };
        code = parsed.error?.code ?? code;
        message = parsed.error?.message ?? message;
      } catch {
        // not JSON: keep the text
      }
      throw new GroveApiError(res.status, code, message);
    }
    return JSON.parse(text) as { path: string; size: number };
  }

  async downloadFile(id: string, path: string): Promise<Uint8Array> {
    const res = await this.request('GET', `/sandboxes/${GroveClient.id(id)}/files?path=${encodeURIComponent(path)}`);
    return new Uint8Array(await res.arrayBuffer());
  }

  listFiles(id: string, path = '/workspace'): Promise<FileList> {
    return this.json('GET', `/sandboxes/${GroveClient.id(id)}/files/list?path=${encodeURIComponent(path)}`);
  }

  applyPatch(id: string, patch: string, cwd?: string): Promise<ApplyPatchResult> {
    return this.json('POST', `/sandboxes/${GroveClient.id(id)}/apply_patch`, { patch, ...(cwd ? { cwd } : {}) });
  }

  /**
   * The sandbox's MCP endpoint (`path`, Streamable HTTP) and its own bearer token, which opens that endpoint only
   * (not Grove's API): what an MCP client inside the sandbox or a harness is given instead of Grove's key.
   */
  mcpToken(id: string): Promise<McpAccess> {
    return this.json('GET', `/sandboxes/${GroveClient.id(id)}/mcp/token`);
  }

  async metrics(): Promise<string> {
    return (await this.request('GET', '/metrics')).text();
  }

  openapi(): Promise<Record<string, unknown>> {
    return this.json('GET', '/openapi.json');
  }
}
