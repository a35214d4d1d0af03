// A sandbox that lives on a worker pod. The orchestrator's routes call it exactly as they call a local browser
// sandbox (the shape of browser-env's BrowserSandbox, which k8s/ may not import); each call is one HTTP request to
// the worker at podIP:port with the pod's token — the Kubernetes API is never on this path. Download bytes and HAR
// files are streamed through by remote-files.ts (the replay HAR uploaded before the worker creates its sandbox, the
// recorded one fetched back into the episode directory after the worker closed it); this file is the relay of
// starts, steps, observations and closes.
import type { Readable } from 'node:stream';
import { GroveClient } from '../client/index.ts';
import type { Action } from '../protocol/action.ts';
import { ERROR_CATALOG, GroveError, type ErrorCode } from '../protocol/errors.ts';
import type { Observation, SomElement, StepResult, Tab } from '../protocol/observation.ts';
import type { BrowserCreateOptions, CreateSandboxBody, SandboxStatus } from '../protocol/sandbox.ts';
import type { ResetRequest } from '../protocol/api.ts';
import { silentLogger, type Logger } from '../sandbox/log.ts';
import type { Sandbox, SandboxDetails } from '../sandbox/types.ts';
import { startOnWorkerSites, startsOnSites, workerSiteState } from './beside.ts';
import { dropReplayHar, fetchRecordedHar, openWorkerDownload, uploadReplayHar, workerJson, type RemoteHar } from './remote-files.ts';
import { workerError, type Attach, type Placement, type PlacementDriver } from './remote-placement.ts';
import type { WorkerEndpoint } from './worker-http.ts';

/** The shape of browser-env's ParseContext (which k8s/ may not import). */
export interface ParseContextCopy {
  som?: SomElement[];
  width?: number;
  height?: number;
  rel_divisor?: 1000 | 999;
  pointer?: { x: number; y: number; space: 'css_px' };
}

export interface RemoteStepOptions {
  screenshot?: 'base64' | 'none';
  som?: boolean;
  accessibility?: boolean;
  settle?: boolean;
  som_overlay?: boolean;
}

export interface DownloadInfo {
  id: string;
  filename: string;
  size: number;
  url: string;
  created_at: string;
  failure?: string;
}

export interface RemoteSandboxExtras {
  har?: RemoteHar;
  log?: Logger;
  /** Adopted, not created: the sandbox exists on a worker already (another replica created it). */
  attach?: Attach;
}

export class RemoteSandbox implements Sandbox {
  readonly type: CreateSandboxBody['type'];
  private state: SandboxStatus = 'creating';
  private placement: Placement | null = null;
  private client: GroveClient | null = null;
  private workerId: string | null = null;
  private readonly starting: Promise<void>;
  private closing: Promise<void> | null = null;
  protected inFlight = 0;
  private last: ParseContextCopy = {};
  private downloadList: DownloadInfo[] = [];
  private detailsOf: SandboxDetails = {};
  /** The replay HAR's name on the worker, once uploaded (removed again on close). */
  private replayName: string | null = null;
  private readonly har: RemoteHar;
  private readonly attach: Attach | undefined;
  protected readonly log: Logger;
  steps = 0;
  startError: { code: string; message: string } | null = null;
  /** Aborted by close(): a placement still waiting for a pod gives up. */
  readonly aborted = new AbortController();
  /** Set when the pod went away under a live sandbox. */
  lostReason: string | null = null;

  constructor(
    readonly id: string,
    readonly spec: CreateSandboxBody,
    readonly templateName: string,
    private readonly driver: PlacementDriver,
    extras: RemoteSandboxExtras = {},
  ) {
    this.type = spec.type;
    this.har = extras.har ?? {};
    this.log = extras.log ?? silentLogger;
    this.attach = extras.attach;
    this.starting = this.start();
    // Creation failures surface through ready(); this copy only keeps the rejection from being unhandled.
    this.starting.catch(() => undefined);
  }

  get options(): BrowserCreateOptions {
    return this.spec as BrowserCreateOptions;
  }

  get status(): SandboxStatus {
    if (this.state === 'ready' && this.inFlight > 0) return 'busy';
    return this.state;
  }

  get pod(): string | null {
    return this.placement?.pod ?? null;
  }

  ready(): Promise<void> {
    return this.starting;
  }

  private async start(): Promise<void> {
    if (this.attach) {
      // Known already: ready before the constructor returns (no await on this path).
      const a = typeof this.attach === 'function' ? await this.attach(this.aborted.signal) : this.attach;
      this.placement = a.placement;
      this.client = new GroveClient({ baseUrl: a.placement.url, apiKey: a.placement.token });
      this.workerId = a.workerId;
      await this.started(this.client, a.workerId);
      this.state = 'ready';
      return;
    }
    const placement = await this.driver.place(this);
    this.placement = placement;
    if (this.closing) throw new GroveError('sandbox_closed', `Sandbox ${this.id} was closed while starting.`);
    this.client = new GroveClient({ baseUrl: placement.url, apiKey: placement.token });
    // Episodes are recorded on the orchestrator (where the model output is known); only the HAR is recorded on the
    // worker (it needs the browser), to be fetched back on close. The worker keeps the TTL as a safety net.
    // Idleness is the orchestrator's to judge (heartbeats reach only it): its registry closes an idle sandbox, and
    // with it the worker's, so the worker's own idle reaper must not fire first.
    const body = { ...this.spec, idle_timeout_seconds: 86_400, labels: { ...(this.spec.labels ?? {}), orchestrator_sandbox: this.id } } as Record<string, unknown>;
    if (body.type === 'browser') {
      body.record = this.har.recordPath !== undefined;
      body.record_har = this.har.recordPath !== undefined;
      delete body.replay_har;
      // The episode (its task, step flags and judge) is the orchestrator's; a paired Claw sandbox's origin and login
      // URL are in the body already (server/routes/claw.ts), valid on this pod, where its apps run (placement).
      delete body.task;
      delete body.episode;
      delete body.claw_sandbox;
    }
    // A paired shell: its worker runs in the claw sandbox's pod (k8s/paired-shell.ts), whose loopback serves the apps
    // (CLAW_ORIGIN, CLAW_TOKEN are in its env); its network is that pod's NetworkPolicy, as for any shell pod.
    if (body.type === 'shell' && body.claw_sandbox !== undefined) {
      delete body.claw_sandbox;
      delete body.allow;
      body.block_network = this.driver.podNetwork !== 'internet';
    }
    // A shell sandbox's image is its pod's image (k8s/pod-image.ts): the worker runs on it, it has nothing to look up.
    const podImage = body.type === 'shell' && typeof body.image === 'string' ? body.image : null;
    if (podImage) delete body.image;
    try {
      if (this.har.replayPath) {
        body.replay_har = await uploadReplayHar(placement, this.id, this.har.replayPath, this.aborted.signal);
        this.replayName = this.id;
      }
      // An offline task starts on the sites the worker serves on its own loopback (k8s/beside.ts).
      if (body.type === 'browser' && startsOnSites(body)) await startOnWorkerSites(this.client, body);
      const info = await this.client.createSandbox(body as Parameters<GroveClient['createSandbox']>[0]);
      this.workerId = info.sandbox_id;
      for (;;) {
        const left = this.driver.readyDeadline();
        if (left <= 0) throw new GroveError('pod_start_timeout', `The worker did not start sandbox ${this.id} in time.`);
        const w = await this.client.waitSandboxInfo(info.sandbox_id, Math.max(1, Math.min(30, Math.ceil(left / 1000))));
        if (w.status === 'creating') continue;
        if (w.status === 'ready' || w.status === 'busy') {
          this.startError = w.error;
          // A claw sandbox's origin and token: the worker's loopback, for a browser paired onto the same pod.
          if (w.claw) this.detailsOf = { claw: w.claw };
          if (w.shell) {
            this.detailsOf = {
              shell: podImage
                ? { ...w.shell, image: podImage, rootfs: 'image', notes: [...w.shell.notes, `image "${podImage}" is the pod's image: commands run on its file system`] }
                : w.shell,
            };
            if (this.spec.type === 'shell' && this.spec.claw_sandbox !== undefined) {
              const note = `paired with claw sandbox ${this.spec.claw_sandbox}: runs in an ephemeral container of its pod, whose loopback serves its apps (CLAW_ORIGIN, CLAW_TOKEN); the pod's own network otherwise`;
              this.detailsOf = { shell: { ...this.detailsOf.shell!, notes: [...this.detailsOf.shell!.notes, note] } };
            }
          }
          break;
        }
        const code = w.error && w.error.code in ERROR_CATALOG ? (w.error.code as ErrorCode) : 'internal_error';
        throw new GroveError(code, `The worker could not start the sandbox: ${w.error?.message ?? w.status}.`);
      }
      await this.driver.started?.(this, info.sandbox_id);
    } catch (err) {
      throw workerError(err, placement.pod);
    }
    if (this.closing) throw new GroveError('sandbox_closed', `Sandbox ${this.id} was closed while starting.`);
    if (this.lostReason) throw new GroveError('worker_lost', `Sandbox ${this.id} was lost while starting: ${this.lostReason}`);
    await this.started(this.client, this.workerId!).catch((err: unknown) => {
      throw workerError(err, placement.pod);
    });
    this.state = 'ready';
  }

  /** What a kind of remote sandbox reads from its worker before it counts as ready (nothing here). */
  protected async started(_client: GroveClient, _wid: string): Promise<void> {}

  details(): SandboxDetails {
    return this.detailsOf;
  }

  /** What a kind of remote sandbox learnt from its worker for details() (an adopted one: read in started()). */
  protected setDetails(d: SandboxDetails): void {
    this.detailsOf = d;
  }

  /** The worker this sandbox runs on, for the streamed routes (throws like any call when it is not live). */
  protected endpoint(): WorkerEndpoint & { wid: string } {
    const { wid } = this.live();
    return { ...this.placement!, wid };
  }

  /** Adopted from the replica recording it (server/recording.ts): where the worker's HAR goes when this replica is
   * the one that deletes the sandbox (the recordings volume every replica mounts). */
  recordHarTo(path: string): void {
    if (this.attach && this.options.record_har) this.har.recordPath = path;
  }

  /** Tells the worker of a heartbeat received by the orchestrator (its last-use time is what the leader checks
   * before expiring an idle sandbox, k8s/sandbox-expiry.ts). */
  async heartbeatWorker(): Promise<void> {
    await this.remote((c, wid) => c.heartbeat(wid));
  }

  /** The pod under this sandbox went away: later calls answer sandbox_closed. */
  markLost(reason: string): boolean {
    if (this.state === 'closed') return false;
    this.lostReason = reason;
    this.state = 'closed';
    return true;
  }

  private live(): { client: GroveClient; wid: string } {
    if (this.lostReason) throw new GroveError('sandbox_closed', `Sandbox ${this.id} was lost: ${this.lostReason}`);
    if (!this.client || !this.workerId || this.state !== 'ready') throw new GroveError('sandbox_not_ready');
    return { client: this.client, wid: this.workerId };
  }

  protected async remote<T>(fn: (c: GroveClient, wid: string) => Promise<T>): Promise<T> {
    const { client, wid } = this.live();
    this.inFlight++;
    try {
      return await fn(client, wid);
    } catch (err) {
      throw workerError(err, this.placement?.pod ?? '?');
    } finally {
      this.inFlight--;
    }
  }

  private remember(obs: Observation): Observation {
    this.last = { som: obs.som ?? undefined, width: obs.screenshot?.width, height: obs.screenshot?.height };
    return obs;
  }

  async step(actions: Action[], opts: RemoteStepOptions = {}): Promise<StepResult> {
    const r = await this.remote((c, wid) =>
      c.step(wid, { actions, screenshot: opts.screenshot, som: opts.som, accessibility: opts.accessibility, som_overlay: opts.som_overlay }),
    );
    this.steps++;
    this.remember(r.observation);
    return r;
  }

  async observe(opts: RemoteStepOptions = {}): Promise<Observation> {
    const obs = await this.remote((c, wid) =>
      c.observation(wid, { screenshot: opts.screenshot, som: opts.som, accessibility: opts.accessibility, som_overlay: opts.som_overlay }),
    );
    return this.remember(obs);
  }

  async screenshot(): Promise<{ mime: string; bytes: Buffer; width: number; height: number }> {
    const s = await this.remote((c, wid) => c.screenshot(wid));
    return { ...s, bytes: Buffer.from(s.bytes.buffer, s.bytes.byteOffset, s.bytes.byteLength) };
  }

  async reset(input: ResetRequest = {}): Promise<void> {
    await this.remote((c, wid) => c.resetSandbox(wid, input));
    this.steps = 0;
    this.last = {};
    this.downloadList = [];
  }

  /** The copy syncDownloads() fetched from the worker (the routes sync first). */
  downloads(): DownloadInfo[] {
    return this.downloadList;
  }

  async syncDownloads(): Promise<void> {
    this.downloadList = await this.remote((c, wid) => c.downloads(wid));
  }

  /** Download bytes stay on the worker (no shared filesystem with the orchestrator): see openDownload. */
  downloadPath(_id: string): string | undefined {
    return undefined;
  }

  /** The worker's file as a stream (its Content-Length kept); undefined when the worker has no saved file. */
  async openDownload(id: string): Promise<{ stream: Readable; size: number | null } | undefined> {
    const w = this.endpoint();
    return openWorkerDownload(w, w.wid, id);
  }

  parseContext(): ParseContextCopy {
    return this.last;
  }

  /** The browser's own parse context (server/worker-routes.ts): whichever replica served the last observation, the
   * SoM list and pointer the model saw are the worker's. One request over the pod IP, before a model output is parsed. */
  async syncParseContext(): Promise<void> {
    const w = this.endpoint();
    try {
      this.last = await workerJson<ParseContextCopy>(w, `/worker/sandboxes/${encodeURIComponent(w.wid)}/parse-context`);
    } catch (err) {
      // A worker that cannot answer (an older image, gone): the copy this replica saw is parsed against; the step
      // that follows reports a worker that is gone.
      this.log.warn({ err: String(err), sandbox_id: this.id }, 'reading the parse context from the worker failed');
    }
  }

  /** The state of this sandbox's offline-sites session, read from its worker (the rule judge's input). */
  async siteState(session: string): Promise<unknown> {
    return this.remote((c) => workerSiteState(c, session));
  }

  async pageState(): Promise<{ url: string; title: string; tabs: Tab[] }> {
    const obs = await this.observe({ screenshot: 'none' });
    return { url: obs.url, title: obs.title, tabs: obs.tabs };
  }

  /** Idempotent: deletes the worker's sandbox and gives the worker back. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      this.aborted.abort();
      await this.starting.catch(() => undefined);
      if (this.client && this.workerId && !this.lostReason) {
        const deleted = await this.client.deleteSandbox(this.workerId).then(() => true, () => false);
        if (deleted && this.har.recordPath && this.placement) {
          await fetchRecordedHar(this.placement, this.workerId, this.har.recordPath).catch((err: unknown) =>
            this.log.warn({ err: String(err), sandbox_id: this.id }, 'fetching the recorded HAR from the worker failed'),
          );
        }
      }
      if (this.replayName && this.placement && !this.lostReason) await dropReplayHar(this.placement, this.replayName);
      this.client?.close();
      this.state = 'closed';
      await this.driver.release(this, this.placement);
    })());
  }
}
