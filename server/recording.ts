// Server-side episode recording for browser sandboxes created with `record: true` (and HAR record/replay).
//
// Why here and not in browser-env: browser-env may not import recording/ (scripts/check-imports.mjs), and only
// the step route knows the raw model output a step came from. The server wraps its browser environment
// (buildApp) in a RecordingBrowserEnvironment: for a sandbox that asked for recording it attaches a RecordingHook
// (recording/step-hook.ts) to the registry's step hooks, which writes `<recordingsDir>/<sandbox_id>/` through
// recording/recorder.ts: frame 0 once the start URL is open (the registry's ready), one steps.jsonl line + frame
// per step (the step route reports each step to the registry), and the episode end when the sandbox closes
// (every close path goes through the registry: DELETE, expiry, shutdown). The sandbox itself is not wrapped.
// HAR recording/replay reach the browser as ContextExtras (context options and a context hook), so browser-env
// never learns what a HAR is.
// Several servers sharing the sandboxes (kubernetes replicas, one recordings volume): the creating server records
// frame 0 and ends the episode, and every server that serves a step appends it to the same episode
// (recording/shared-steps.ts): a sandbox it adopts with `record: true` gets a hook that joins the recording. Any of
// them may end it (recording/shared-end.ts): the one that closes it, or the leader that expires it unheld.
import { mkdir, readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import type { ContextExtras, BrowserSandbox } from '../browser-env/types.ts';
import { GroveError } from '../protocol/errors.ts';
import type { BrowserCreateOptions } from '../protocol/sandbox.ts';
import { harPathFor, harRecordOptions, replayFromHar } from '../recording/har.ts';
import { EpisodeRecorder } from '../recording/recorder.ts';
import { JoinedRecording } from '../recording/joined-recording.ts';
import { RecordingHook, type InitialState } from '../recording/step-hook.ts';
import type { EnvironmentFactory } from '../sandbox/local-backend.ts';
import type { Logger } from '../sandbox/log.ts';
import type { StepHooks } from '../sandbox/step-hook.ts';
import type { Sandbox, SharedSandboxes } from '../sandbox/types.ts';
import { watchSharedRecordings } from './shared-recording.ts';

/** The episode directory of a sandbox. Registry ids are `sb_<hex>`; anything else is refused, not escaped. */
export function episodeDirFor(recordingsDir: string, sandboxId: string): string {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(sandboxId)) {
    throw new GroveError('invalid_request', `Sandbox id "${sandboxId}" cannot name a recording directory.`);
  }
  return join(resolve(recordingsDir), sandboxId);
}

/**
 * Checks the recording options of a create request: `record_har` needs `record`, and `replay_har` must name an
 * existing file inside the recordings directory (relative paths are taken relative to it). Returns the real
 * path of the HAR to replay. Throws invalid_request (400).
 */
export async function checkRecordingOptions(options: BrowserCreateOptions, recordingsDir: string): Promise<{ replayPath?: string }> {
  if (options.record_har && !options.record) {
    throw new GroveError('invalid_request', 'record_har needs record: true (the HAR is written into the episode directory).');
  }
  if (options.replay_har === undefined) return {};
  const root = resolve(recordingsDir);
  const given = isAbsolute(options.replay_har) ? resolve(options.replay_har) : resolve(root, options.replay_har);
  const outside = `replay_har must name a HAR file inside the server's recordings directory (${root}); got "${options.replay_har}".`;
  if (!inside(root, given)) throw new GroveError('invalid_request', outside);
  // Symlinks could point anywhere: compare real paths too.
  const real = await realpath(given).catch(() => null);
  const realRoot = await realpath(root).catch(() => root);
  if (real === null || !(await stat(real)).isFile()) {
    throw new GroveError('invalid_request', `replay_har: no HAR file at "${options.replay_har}" in the recordings directory.`);
  }
  if (!inside(realRoot, real)) throw new GroveError('invalid_request', outside);
  await checkHar(real, options.replay_har);
  return { replayPath: real };
}

/** Largest HAR accepted for replay (it is read whole, here and by Playwright). */
const MAX_HAR_BYTES = 512 * 1024 * 1024;

/** A replay HAR must be a HAR (JSON with `log.entries`): otherwise creation would fail only after `201`. */
async function checkHar(path: string, given: string): Promise<void> {
  const size = (await stat(path)).size;
  if (size > MAX_HAR_BYTES) throw new GroveError('invalid_request', `replay_har: "${given}" is larger than ${MAX_HAR_BYTES} bytes.`);
  let har: unknown;
  try {
    har = JSON.parse(await readFile(path, 'utf8'));
  } catch (e) {
    throw new GroveError('invalid_request', `replay_har: "${given}" is not valid JSON (${e instanceof Error ? e.message.slice(0, 200) : 'parse error'}).`);
  }
  const entries = (har as { log?: { entries?: unknown } } | null)?.log?.entries;
  if (!Array.isArray(entries)) throw new GroveError('invalid_request', `replay_har: "${given}" is not a HAR file (no log.entries array).`);
}

function inside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/** The browser environment shape the wrapper needs (browser-env's LocalBrowserEnvironment fits). */
export interface BrowserEnvironmentLike extends EnvironmentFactory<BrowserCreateOptions> {
  create(id: string, options: BrowserCreateOptions, extras?: ContextExtras): Promise<Sandbox>;
}

/**
 * Frame 0 of a browser sandbox without taking an observation: the start URL's error and queued events stay for
 * the client's first observation.
 */
async function browserInitial(sandbox: Sandbox): Promise<InitialState> {
  const sb = sandbox as BrowserSandbox;
  const [shot, state] = await Promise.all([sb.screenshot(), sb.pageState()]);
  const { width, height } = sb.options.viewport;
  return {
    ...state,
    bytes: shot.bytes,
    screenshot: { mime: shot.mime, width: shot.width, height: shot.height, scale: shot.width / width, scale_x: shot.width / width, scale_y: shot.height / height },
  };
}

/** Wraps a browser environment so `record` / `record_har` / `replay_har` sandboxes get recorded or replayed. */
export class RecordingBrowserEnvironment implements EnvironmentFactory<BrowserCreateOptions> {
  private readonly shared: boolean;
  /** This server's name in the shared state (the writer marker names it: recording/writer.ts). */
  private readonly server?: string;

  constructor(
    private readonly inner: BrowserEnvironmentLike,
    private readonly recordingsDir: string,
    private readonly log: Logger,
    private readonly hooks: StepHooks,
    /** The sandboxes are shared with other servers on one recordings directory (the kubernetes backend). */
    private readonly sharedState?: SharedSandboxes,
  ) {
    const shared = sharedState !== undefined;
    this.shared = shared;
    this.server = sharedState?.serverId;
    if (shared) {
      watchSharedRecordings(sharedState, (id) => episodeDirFor(recordingsDir, id), log);
      hooks.onAdopted((id, a) => {
        try {
          if (a.recorded) this.join(id, a.sandbox);
        } catch (err) {
          // An id no episode directory can be named after: served, not recorded (adoption never fails for it).
          this.log.warn({ err: String(err), sandbox_id: id }, 'joining the recording of an adopted sandbox failed');
        }
      });
      // Expired by this server as the leader while no replica held it (its creator died): its episode ends here.
      hooks.onClosedUnheld((id, c) => {
        if (c.recorded) void this.endUnheld(id);
      });
    }
  }

  /** Ends the episode of a sandbox this server never held (shared-end.ts: unless another server ends it first). */
  private async endUnheld(id: string): Promise<void> {
    try {
      const joined = new JoinedRecording(episodeDirFor(this.recordingsDir, id), id, this.log, this.server);
      const hook = new RecordingHook(async () => joined);
      await hook.open();
      await hook.onEnd();
      this.log.info({ sandbox_id: id }, 'the recording of a sandbox closed while no replica held it was ended');
    } catch (err) {
      this.log.warn({ err: String(err), sandbox_id: id }, 'ending the recording of a sandbox closed while no replica held it failed');
    }
  }

  /** Appends the steps this server serves of a sandbox another server records (its episode must be on storage here). */
  private join(id: string, sandbox: Sandbox): void {
    const dir = episodeDirFor(this.recordingsDir, id);
    const joined = new JoinedRecording(dir, id, this.log, this.server);
    const hook = new RecordingHook(async () => joined);
    hook.open().catch(() => undefined);
    this.hooks.attach(id, hook);
    // A recorded HAR is on the worker until the sandbox closes: fetched by whichever server deletes it.
    (sandbox as { recordHarTo?(path: string): void }).recordHarTo?.(harPathFor(dir));
  }

  async create(id: string, options: BrowserCreateOptions): Promise<Sandbox> {
    if (!options.record && !options.replay_har) return this.inner.create(id, options);
    const { replayPath } = await checkRecordingOptions(options, this.recordingsDir);
    const dir = episodeDirFor(this.recordingsDir, id);
    const extras: ContextExtras = {};
    if (options.record_har) {
      // Playwright writes the HAR when the context closes; the directory must exist by then.
      await mkdir(dir, { recursive: true });
      extras.contextOptions = harRecordOptions(harPathFor(dir));
      extras.har = { recordPath: harPathFor(dir) };
    }
    if (replayPath) {
      extras.prepare = (ctx: BrowserContext) => replayFromHar(ctx, replayPath, { notFound: 'abort' });
      extras.har = { ...extras.har, replayPath };
    }
    const sb = await this.inner.create(id, options, extras);
    if (options.record) {
      // The registry runs it: frame 0 at ready (a failing recorder fails the creation), each step, the end at close.
      const open = () => EpisodeRecorder.create(dir, { episode_id: id, config: { ...options } }, { logger: this.log, shared: this.shared, server: this.server });
      this.hooks.attach(id, new RecordingHook(open, browserInitial));
    }
    return sb;
  }

  admit(options: BrowserCreateOptions): void {
    this.inner.admit?.(options);
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  stats(): Record<string, number> {
    return this.inner.stats();
  }
}
