// Orchard Env's public HTTP API (microsoft/Orchard: orchard_env/docs/api.md, orchestrator/api.py, and its SDK
// client/sandbox_client.py) served under a prefix (/orchard) on Grove's own core, so the SDK, unchanged, works with
// its base URL pointed here. No logic of its own: every route maps onto the registry and the shell sandbox.
// Differences from Orchard: errors are FastAPI-shaped ({"detail": ...}, 422 for invalid bodies) and also carry
// Grove's {"error": {code, message}}; sandboxes run locally (see docs/api.md for what `image` means here);
// service endpoints (/services, /s/{token}) are not served.
import os from 'node:os';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { ERROR_CATALOG, GroveError } from '../../protocol/errors.ts';
import type { SandboxInfo } from '../../protocol/sandbox.ts';
import type { JobInfo } from '../../protocol/shell.ts';
import type { RouteContext } from '../route.ts';
import { decodeBase64, shellSandbox, touching } from '../routes/shell.ts';
import { jobDoc, parseCpu, parseMemoryMb, sandboxDoc, type OrchardMeta } from './convert.ts';

export const ORCHARD_PREFIX = '/orchard';
/** Orchard's SDK sleeps Retry-After (+ up to 2 s) between its three tries: keep it short. */
const MAX_RETRY_AFTER_S = 5;
const KEEP_JOB_INDEX = 100_000;

const CreateBody = z.object({
  image: z.string().min(1).max(512),
  block_network: z.boolean().default(true),
  sandbox_id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'letters, digits, ".", "_", "-" (at most 100)').nullish(),
  cpu: z.string().max(32).nullish(),
  memory: z.string().max(32).nullish(),
  timeout: z.number().int().min(1).max(7 * 86400).nullish(),
});

const ExecBody = z.object({
  command: z.union([z.string().min(1), z.array(z.string()).min(1)]),
  timeout_seconds: z.number().positive().max(86_400).nullish(),
  cwd: z.string().min(1).max(4096).nullish(),
  env: z.record(z.string(), z.string()).nullish(),
  login_shell: z.boolean().default(false),
  wait: z.boolean().default(false),
});

const PatchBody = z.object({ patch: z.string().min(1), timeout_seconds: z.number().positive().max(3600).default(30) });
const UploadBody = z.object({ path: z.string().min(1).max(4096), content: z.string() });
const Id = z.object({ sandbox_id: z.string().min(1).max(100) });
const JobId = z.object({ job_id: z.string().min(1).max(100) });
const Timeout = (def: number) => z.object({ timeout: z.coerce.number().min(0).max(7 * 86400).default(def) });
const PathQuery = (def?: string) => z.object({ path: def === undefined ? z.string().min(1) : z.string().min(1).default(def) });

/** FastAPI's 422: detail is a list of {loc, msg, type}. */
class ValidationFailed extends Error {
  constructor(readonly detail: Array<{ loc: Array<string | number>; msg: string; type: string }>) {
    super('validation failed');
  }
}

function parse<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query' | 'path'): z.output<S> {
  const r = schema.safeParse(value ?? {});
  if (r.success) return r.data;
  throw new ValidationFailed(
    r.error.issues.map((i) => ({ loc: [where, ...i.path.map((p) => (typeof p === 'number' ? p : String(p)))], msg: i.message, type: i.code })),
  );
}

export function orchardPlugin(ctx: RouteContext) {
  const meta = new Map<string, OrchardMeta>();
  const jobIndex = new Map<string, string>();

  function metaOf(info: SandboxInfo): OrchardMeta {
    const m = meta.get(info.sandbox_id);
    if (m) return m;
    const l = info.shell?.limits;
    return {
      image: info.shell?.image ?? '',
      block_network: info.shell?.network !== 'proxy',
      cpu: l?.cpu != null ? String(l.cpu) : '',
      memory: l?.memory_mb != null ? `${l.memory_mb}Mi` : '',
      timeout: 3600,
    };
  }

  /** A sandbox Orchard can see: live or creating (closed ones are "not found", as in Orchard). */
  function liveInfo(id: string): SandboxInfo {
    const info = ctx.registry.info(id);
    if (info.status === 'closed') throw new GroveError('sandbox_not_found', `Sandbox ${id} not found`);
    return info;
  }

  function jobSandbox(jobId: string): string {
    const sb = jobIndex.get(jobId);
    if (!sb) throw new GroveError('job_not_found', `Job ${jobId} not found`);
    return sb;
  }

  function remember(job: JobInfo): void {
    jobIndex.set(job.job_id, job.sandbox_id);
    if (jobIndex.size > KEEP_JOB_INDEX) jobIndex.delete(jobIndex.keys().next().value as string);
  }

  async function jobNow(jobId: string, waitMs: number): Promise<JobInfo> {
    const sbId = jobSandbox(jobId);
    return shellSandbox(ctx, sbId).job(jobId, waitMs);
  }

  return async function plugin(app: FastifyInstance): Promise<void> {
    app.setErrorHandler((err: FastifyError | GroveError | ValidationFailed | Error, request, reply: FastifyReply) => {
      if (err instanceof ValidationFailed) return reply.code(422).send({ detail: err.detail });
      if (err instanceof GroveError) {
        ctx.metrics.error(err.code);
        if (err.retryAfter !== undefined) reply.header('retry-after', String(Math.min(MAX_RETRY_AFTER_S, Math.max(1, err.retryAfter))));
        if (err.status >= 500 && err.status !== 503) ctx.log.error({ err, url: request.url }, 'orchard request failed');
        return reply.code(err.status).send({ detail: err.message, error: { code: err.code, message: err.message } });
      }
      const status = (err as FastifyError).statusCode;
      if (typeof status === 'number' && status >= 400 && status < 500) return reply.code(status).send({ detail: err.message });
      ctx.log.error({ err, url: request.url }, 'orchard internal error');
      return reply.code(500).send({ detail: ERROR_CATALOG.internal_error.message });
    });
    app.setNotFoundHandler((_req, reply) => reply.code(404).send({ detail: 'Not Found' }));

    app.get('/', { config: { auth: false } }, async () => ({ service: 'grove (Orchard Env API)', version: ctx.version, status: 'running' }));
    app.get('/health', { config: { auth: false } }, async (_req, reply) =>
      ctx.registry.isShuttingDown ? reply.code(503).send({ status: 'shutting_down' }) : { status: 'healthy' },
    );

    app.get('/resources', async () => {
      ctx.registry.syncAll();
      const live = ctx.registry.list();
      let cpu = 0;
      let mem = 0;
      for (const s of live) {
        cpu += s.shell?.limits.cpu ?? 0;
        mem += s.shell?.limits.memory_mb ?? 0;
      }
      return {
        status: 'ok',
        nodes: 1,
        sandboxes: { live: live.length, max: ctx.config.maxSandboxes },
        cpu: { capacity: os.cpus().length, requested: cpu },
        memory: { capacity: `${Math.floor(os.totalmem() / 1024 ** 2)}Mi`, requested: `${mem}Mi`, available: `${Math.floor(os.freemem() / 1024 ** 2)}Mi` },
      };
    });

    app.post('/sandboxes', async (request) => {
      const b = parse(CreateBody, request.body, 'body');
      const cpu = b.cpu ? parseCpu(b.cpu) : null;
      const memoryMb = b.memory ? parseMemoryMb(b.memory) : null;
      if (b.cpu && cpu === null) throw new ValidationFailed([{ loc: ['body', 'cpu'], msg: 'a Kubernetes CPU quantity ("4", "2000m")', type: 'value_error' }]);
      if (b.memory && memoryMb === null) throw new ValidationFailed([{ loc: ['body', 'memory'], msg: 'a Kubernetes memory quantity ("16Gi", "512Mi")', type: 'value_error' }]);
      const info = ctx.registry.create(
        {
          type: 'shell',
          image: b.image,
          block_network: b.block_network,
          ...(cpu === null ? {} : { cpu: Math.min(256, cpu) }),
          ...(memoryMb === null ? {} : { memory_mb: Math.max(16, memoryMb) }),
          labels: { api: 'orchard' },
        },
        b.sandbox_id ? { id: b.sandbox_id } : {},
      );
      const m: OrchardMeta = { image: b.image, block_network: b.block_network, cpu: b.cpu ?? String(ctx.config.shellCpu), memory: b.memory ?? `${ctx.config.shellMemoryMb}Mi`, timeout: b.timeout ?? 3600 };
      meta.set(info.sandbox_id, m);
      const doc = sandboxDoc(info, m);
      return { sandbox_id: doc.sandbox_id, namespace: doc.namespace, image: m.image, block_network: m.block_network, cpu: m.cpu, memory: m.memory, timeout: m.timeout, status: doc.status };
    });

    app.get('/sandboxes/:sandbox_id', async (request) => {
      const info = liveInfo(parse(Id, request.params, 'path').sandbox_id);
      return sandboxDoc(info, metaOf(info));
    });

    app.get('/sandboxes/:sandbox_id/wait', async (request) => {
      const { sandbox_id } = parse(Id, request.params, 'path');
      const { timeout } = parse(Timeout(3600), request.query, 'query');
      liveInfo(sandbox_id);
      const info = await ctx.registry.wait(sandbox_id, timeout * 1000);
      if (info.status === 'creating') throw new GroveError('wait_timeout', `Sandbox ${sandbox_id} did not become ready within ${timeout}s`);
      return sandboxDoc(info, metaOf(info));
    });

    app.post('/sandboxes/:sandbox_id/heartbeat', async (request) => {
      const { sandbox_id } = parse(Id, request.params, 'path');
      liveInfo(sandbox_id);
      ctx.registry.heartbeat(sandbox_id);
      return { status: 'ok', sandbox_id };
    });

    app.delete('/sandboxes/:sandbox_id', async (request) => {
      const { sandbox_id } = parse(Id, request.params, 'path');
      await ctx.registry.delete(sandbox_id);
      meta.delete(sandbox_id);
      return { status: 'deleted', sandbox_id };
    });

    app.post('/sandboxes/:sandbox_id/exec', async (request) => {
      const { sandbox_id } = parse(Id, request.params, 'path');
      const b = parse(ExecBody, request.body, 'body');
      const sb = shellSandbox(ctx, sandbox_id);
      const timeoutS = b.timeout_seconds ?? ctx.config.shellExecTimeoutS;
      const job = await sb.startJob({
        // Orchard's orchestrator joins a list with spaces and its agent runs the string with bash -c: same here.
        command: Array.isArray(b.command) ? b.command.join(' ') : b.command,
        cwd: b.cwd ?? undefined,
        env: b.env ?? undefined,
        timeout_s: timeoutS,
        login_shell: b.login_shell,
        merge_stderr: false,
        background: true,
      });
      remember(job);
      if (!b.wait) return { job_id: job.job_id, status: 'queued' };
      // Orchard waits the exec timeout + 30 s, then answers the job still running.
      const done = await touching(ctx, sandbox_id, () => sb.job(job.job_id, (timeoutS + 30) * 1000));
      return done.status === 'finished' ? jobDoc(done) : { job_id: job.job_id, status: 'running' };
    });

    app.get('/jobs/:job_id', async (request) => jobDoc(await jobNow(parse(JobId, request.params, 'path').job_id, 0)));

    app.get('/jobs/:job_id/wait', async (request) => {
      const { job_id } = parse(JobId, request.params, 'path');
      const { timeout } = parse(Timeout(300), request.query, 'query');
      return jobDoc(await jobNow(job_id, timeout * 1000));
    });

    app.post('/sandboxes/:sandbox_id/apply_patch', async (request) => {
      const { sandbox_id } = parse(Id, request.params, 'path');
      const b = parse(PatchBody, request.body, 'body');
      const sb = shellSandbox(ctx, sandbox_id);
      const r = await touching(ctx, sandbox_id, () => sb.applyPatch(b.patch, { timeoutMs: b.timeout_seconds * 1000 }));
      return { ...r, error: r.success ? null : r.stderr.trim() || `git apply exited with ${r.exit_code}` };
    });

    app.post('/sandboxes/:sandbox_id/files', async (request) => {
      const { sandbox_id } = parse(Id, request.params, 'path');
      const b = parse(UploadBody, request.body, 'body');
      const w = await shellSandbox(ctx, sandbox_id).writeFile(b.path, decodeBase64(b.content));
      return { success: true, path: b.path, size: w.size };
    });

    app.get('/sandboxes/:sandbox_id/files', async (request) => {
      const { sandbox_id } = parse(Id, request.params, 'path');
      const { path } = parse(PathQuery(), request.query, 'query');
      const f = await shellSandbox(ctx, sandbox_id).readFile(path);
      return { path, content: f.data.toString('base64'), size: f.data.length };
    });

    app.get('/sandboxes/:sandbox_id/files/list', async (request) => {
      const { sandbox_id } = parse(Id, request.params, 'path');
      const { path } = parse(PathQuery('/workspace'), request.query, 'query');
      const l = await shellSandbox(ctx, sandbox_id).listFiles(path);
      return {
        path,
        files: l.files.map((f) => ({ name: f.name, type: f.type === 'directory' ? 'directory' : 'file', size: f.size, modified: f.modified.replace(/\.\d+Z$/, '') })),
      };
    });
  };
}
