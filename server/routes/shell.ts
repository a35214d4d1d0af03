// Shell sandbox routes: exec (sync or job), jobs, files (upload, download, list), apply_patch.
// The interactive terminal is a WebSocket (server/pty-socket.ts), outside these JSON routes.
import { z } from 'zod';
import { SandboxIdParams } from '../../protocol/api.ts';
import { GroveError } from '../../protocol/errors.ts';
import {
  ApplyPatchRequest,
  ApplyPatchResult,
  ExecRequest,
  ExecResult,
  FileList,
  FilePathQuery,
  FileUpload,
  FileWritten,
  JobInfo,
  JobParams,
  JobWaitQuery,
} from '../../protocol/shell.ts';
import { isShellSandbox, type ShellSandbox } from '../../shell-env/index.ts';
import { countedStep } from '../../sandbox/step-count.ts';
import type { RouteContext } from '../route.ts';
import { defineRoute } from '../route.ts';
import { errorResponses } from './common.ts';

/** The ready shell sandbox with this id (marks it used). */
export function shellSandbox(ctx: RouteContext, id: string): ShellSandbox {
  const sb = ctx.registry.use(id);
  if (!isShellSandbox(sb)) {
    throw new GroveError('wrong_sandbox_type', `Sandbox ${id} is a ${sb.type} sandbox; this operation needs a shell sandbox.`);
  }
  return sb;
}

/** Runs `fn` and marks the sandbox used again when it ends (a long command counts as use). */
export async function touching<T>(ctx: RouteContext, id: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } finally {
    ctx.registry.touch(id);
  }
}

const exec = defineRoute({
  id: 'exec',
  method: 'POST',
  url: '/sandboxes/:id/exec',
  summary: 'Run a command in a shell sandbox',
  description:
    'A string command runs with `bash -c` (`-lc` with login_shell), an array is the argv. Answers when the command ' +
    'ended: a timeout kills the whole process tree and reports exit_code 124. Each stream keeps max_output_bytes ' +
    '(head and tail, a `[... N bytes truncated ...]` marker between). With `background: true` it answers 202 with a job ' +
    'at once; poll or wait for it with GET /sandboxes/{id}/jobs/{job_id}?wait=SECONDS.',
  tags: ['shell'],
  params: SandboxIdParams,
  body: ExecRequest,
  responses: {
    200: { description: 'The finished command', schema: ExecResult },
    202: { description: 'Started as a job (background: true)', schema: JobInfo },
    ...errorResponses(400, 401, 403, 404, 409, 410),
  },
  async handler({ params, body, reply, ctx }) {
    const sb = shellSandbox(ctx, params.id);
    if (body.background) {
      reply.code(202);
      return sb.startJob(body);
    }
    // A finished command is a step (grove_steps_total, as OpenEnv's shell steps and MCP exec calls): a timeout is its error.
    return touching(ctx, params.id, () => countedStep(ctx.metrics.countStep, 'shell', 'grove', () => sb.exec(body), (r) => (r.timed_out ? 'error' : 'ok')));
  },
});

const getJob = defineRoute({
  id: 'getJob',
  method: 'GET',
  url: '/sandboxes/:id/jobs/:job_id',
  summary: 'A job: status, and its result once finished',
  description: 'With `wait=SECONDS` the answer comes when the job finished or the time passed (status still `running`).',
  tags: ['shell'],
  params: JobParams,
  query: JobWaitQuery,
  responses: { 200: { description: 'Job', schema: JobInfo }, ...errorResponses(400, 401, 403, 404, 409, 410) },
  async handler({ params, query, ctx }) {
    const sb = shellSandbox(ctx, params.id);
    return touching(ctx, params.id, () => sb.job(params.job_id, query.wait * 1000));
  },
});

const uploadFile = defineRoute({
  id: 'uploadFile',
  method: 'POST',
  url: '/sandboxes/:id/files',
  summary: 'Write a file into the workspace',
  description:
    'The path is absolute under the workspace (/workspace/...) or relative to it; `..`, paths outside the workspace and ' +
    'paths that resolve outside it through a symlink answer 400 path_not_allowed. Parent directories are created.',
  tags: ['shell'],
  params: SandboxIdParams,
  body: FileUpload,
  responses: { 200: { description: 'Written', schema: FileWritten }, ...errorResponses(400, 401, 403, 404, 409, 410, 413) },
  async handler({ params, body, ctx }) {
    const sb = shellSandbox(ctx, params.id);
    const data = body.encoding === 'utf8' ? Buffer.from(body.content, 'utf8') : decodeBase64(body.content);
    return sb.writeFile(body.path, data, body.mode);
  },
});

/** Strict base64: Buffer.from silently skips invalid characters. */
export function decodeBase64(s: string): Buffer {
  const clean = s.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 === 1) {
    throw new GroveError('invalid_request', 'content is not valid base64 (use encoding "utf8" for text).');
  }
  return Buffer.from(clean, 'base64');
}

const downloadFile = defineRoute({
  id: 'downloadFile',
  method: 'GET',
  url: '/sandboxes/:id/files',
  summary: 'Read a file of the workspace (raw bytes)',
  tags: ['shell'],
  params: SandboxIdParams,
  query: FilePathQuery,
  responses: {
    200: { description: 'File bytes', contentType: 'application/octet-stream' },
    ...errorResponses(400, 401, 403, 404, 409, 410, 413),
  },
  async handler({ params, query, reply, ctx }) {
    const sb = shellSandbox(ctx, params.id);
    // A sandbox on a kubernetes worker streams the bytes through this process, never buffered whole.
    if (sb.openFile) {
      const f = await sb.openFile(query.path);
      reply.header('content-type', 'application/octet-stream');
      if (f.size !== null) reply.header('content-length', String(f.size));
      return reply.send(f.stream);
    }
    const { data } = await sb.readFile(query.path);
    return reply.header('content-type', 'application/octet-stream').send(data);
  },
});

const listFiles = defineRoute({
  id: 'listFiles',
  method: 'GET',
  url: '/sandboxes/:id/files/list',
  summary: 'List a directory of the workspace',
  tags: ['shell'],
  params: SandboxIdParams,
  query: z.object({ path: z.string().min(1).max(4096).default('/workspace') }),
  responses: { 200: { description: 'Entries', schema: FileList }, ...errorResponses(400, 401, 403, 404, 409, 410) },
  async handler({ params, query, ctx }) {
    return shellSandbox(ctx, params.id).listFiles(query.path);
  },
});

const applyPatch = defineRoute({
  id: 'applyPatch',
  method: 'POST',
  url: '/sandboxes/:id/apply_patch',
  summary: 'Apply a unified diff with git apply',
  description: 'The patch goes to `git apply` on stdin (never through a shell). A patch that does not apply answers 200 with success false and git\'s message.',
  tags: ['shell'],
  params: SandboxIdParams,
  body: ApplyPatchRequest,
  responses: { 200: { description: 'Result', schema: ApplyPatchResult }, ...errorResponses(400, 401, 403, 404, 409, 410) },
  async handler({ params, body, ctx }) {
    const sb = shellSandbox(ctx, params.id);
    return touching(ctx, params.id, () =>
      sb.applyPatch(body.patch, { cwd: body.cwd, timeoutMs: body.timeout_s === undefined ? undefined : body.timeout_s * 1000 }),
    );
  },
});

export const shellRoutes = [exec, getJob, uploadFile, downloadFile, listFiles, applyPatch];
