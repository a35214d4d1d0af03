// Claw-Eval's sandbox tools (Bash, Read, Write, Edit, Glob, Grep, BrowserScreenshot, ReadMedia, Download, as the
// checkout's runner/sandbox_tools.py defines them) over a Grove shell sandbox. Claw-Eval runs its sandbox server
// (src/claw_eval/sandbox/server.py) in a Docker container and posts each tool call to it; here the same server file,
// read from DIR, is put in the shell sandbox's /tmp and each call runs its endpoint function there through the
// shell-env API (exec as the sandbox's uid, /workspace as the working folder, no network). The call's path and
// payload are mapped as Claw-Eval's SandboxToolDispatcher maps them (its _PATH_MAP / _translate_payload), frames of
// media answers become images of the conversation, and after the loop the task's sandbox_grader_files are put in
// and its env snapshot is collected as its _collect_env_snapshot does (commands first, then files by glob or path).
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ExecInput, ExecResult } from '../../protocol/shell.ts';
import type { ClawEvalTask } from './checkout.ts';
import type { DispatchRecord } from './services.ts';
import type { ClawEvalSandboxCall } from '../../protocol/claw.ts';

/** What the sandbox tools need of a shell sandbox: the shell-env API's exec and upload (GroveClient or a ShellSandbox). */
export interface ClawEvalShell {
  exec(req: ExecInput): Promise<ExecResult>;
  upload(path: string, data: Uint8Array | string): Promise<unknown>;
}

export const SANDBOX_TOOL_PATHS: Record<string, string> = {
  Bash: '/exec',
  Read: '/read',
  Write: '/write',
  Edit: '/edit',
  Glob: '/glob',
  Grep: '/grep',
  BrowserScreenshot: '/screenshot',
  ReadMedia: '/read_media',
  Download: '/download',
};
/** Tools whose answers' frames become images (Read only when it answered frames). */
const MEDIA_TOOLS = new Set(['ReadMedia', 'BrowserScreenshot']);
/** Where the server's file goes inside the sandbox (its private /tmp, out of the agent's /workspace). */
const SERVER_DIR = '/tmp/.grove-claw-eval';
/** The container's address as Claw-Eval records it in endpoint_url (its sandbox server's port). */
const ENDPOINT_BASE = 'http://localhost:8080';

// Grove's shim inside the sandbox: loads the checkout's server.py, finds the POST route for argv[1], validates stdin's
// JSON into the route's request model and calls the endpoint; prints {"status", "body"} as its last stdout line.
const SHIM = String.raw`
import importlib.util, inspect, json, sys, typing
spec = importlib.util.spec_from_file_location("claw_eval_sandbox_server", sys.argv[2])
mod = importlib.util.module_from_spec(spec)
sys.modules["claw_eval_sandbox_server"] = mod
spec.loader.exec_module(mod)
route = next((r for r in mod.app.routes if getattr(r, "path", None) == sys.argv[1] and "POST" in getattr(r, "methods", ())), None)
out = {"status": 404, "body": {"detail": "Not Found"}}
if route is not None:
    fn = route.endpoint
    hints = typing.get_type_hints(fn, mod.__dict__)
    name = next(iter(inspect.signature(fn).parameters))
    try:
        req = hints[name].model_validate(json.loads(sys.stdin.read() or "{}"))
    except Exception as exc:
        errs = exc.errors() if hasattr(exc, "errors") else [{"msg": str(exc)}]
        out = {"status": 422, "body": {"detail": json.loads(json.dumps(errs, default=str))}}
    else:
        try:
            out = {"status": 200, "body": fn(req)}
        except Exception as exc:
            out = {"status": 500, "body": {"error": "%s: %s" % (type(exc).__name__, exc)}}
sys.stdout.write("\n" + json.dumps(out, ensure_ascii=False, default=str) + "\n")
`;

/** A sandbox tool call's record and what the model is shown (protocol/claw.ts). */
export type SandboxCallResult = ClawEvalSandboxCall;

/** Claw-Eval's client-to-server parameter names (its _translate_payload). */
export function translatePayload(name: string, input: Record<string, unknown>): Record<string, unknown> {
  const p: Record<string, unknown> = { ...input };
  if (name === 'Bash') {
    if ('timeout' in p) {
      const ms = Number(p.timeout);
      delete p.timeout;
      p.timeout_seconds = Math.max(1, Math.floor((Number.isFinite(ms) ? ms : 0) / 1000));
    }
    delete p.description;
    delete p.run_in_background;
  } else if ((name === 'Read' || name === 'Write' || name === 'Edit') && 'file_path' in p) {
    p.path = p.file_path;
    delete p.file_path;
  }
  return p;
}

export class ClawEvalSandbox {
  private constructor(
    private readonly shell: ClawEvalShell,
    private readonly python: string,
  ) {}

  /** A shell sandbox where open() installed the server already (another orchestrator replica did). */
  static attach(shell: ClawEvalShell, python: string): ClawEvalSandbox {
    return new ClawEvalSandbox(shell, python);
  }

  /** Installs the checkout's sandbox server in the shell sandbox and puts the task's sandbox_files in /workspace. */
  static async open(shell: ClawEvalShell, o: { root: string; python: string; task: ClawEvalTask }): Promise<ClawEvalSandbox> {
    const server = readFileSync(path.join(o.root, 'src', 'claw_eval', 'sandbox', 'server.py'), 'utf8');
    const r = await shell.exec({ command: ['sh', '-c', `mkdir -p ${SERVER_DIR} && cat > ${SERVER_DIR}/server.py`], stdin: server, timeout_s: 60 });
    if (r.exit_code !== 0) throw new Error(`cannot install the sandbox server: ${r.stderr.slice(-300)}`);
    const sb = new ClawEvalSandbox(shell, o.python);
    await sb.inject(o.task.sandbox_files.length ? o.task.sandbox_files : o.task.fixtures, o.root, o.task);
    return sb;
  }

  /** Files of the task into /workspace/<rel> (under the task folder, else under DIR, as Claw-Eval resolves them). */
  async inject(files: string[], root: string, task: ClawEvalTask): Promise<number> {
    let n = 0;
    for (const rel of files) {
      const src = resolveTaskFile(root, task.dir, rel);
      if (!src) continue;
      await this.shell.upload(rel, readFileSync(src));
      n++;
    }
    return n;
  }

  /** One endpoint of the server, as an HTTP answer: status and JSON body. */
  async post(urlPath: string, payload: Record<string, unknown>, timeoutS = 30): Promise<{ status: number; body: unknown }> {
    // PATH: the sandbox Python's bin first, so that `python` is the interpreter the server runs on, as in Claw-Eval's
    // container (python:3.11-slim with the server's requirements)
    const env = { PATH: `${path.dirname(this.python)}:/usr/local/bin:/usr/bin:/bin` };
    const r = await this.shell.exec({ command: [this.python, '-c', SHIM, urlPath, `${SERVER_DIR}/server.py`], cwd: '/workspace', env, stdin: JSON.stringify(payload), timeout_s: timeoutS + 30, max_output_bytes: 64 * 1024 * 1024 });
    const last = r.stdout.trimEnd().split('\n').pop() ?? '';
    try {
      return JSON.parse(last) as { status: number; body: unknown };
    } catch {
      throw new Error(`the sandbox server answered no JSON (exit ${r.exit_code}${r.timed_out ? ', timed out' : ''}): ${r.stderr.slice(-400)}`);
    }
  }

  /** One sandbox tool call, recorded as Claw-Eval's dispatcher records it (remote mode). */
  async call(id: string, name: string, input: Record<string, unknown>): Promise<SandboxCallResult> {
    const started = performance.now();
    const urlPath = SANDBOX_TOOL_PATHS[name];
    const base = { tool_use_id: id, tool_name: name, request_body: input };
    const fail = (msg: string, status: number, url: string): SandboxCallResult => ({
      dispatch: { ...base, endpoint_url: url, response_status: status, response_body: { error: msg }, latency_ms: performance.now() - started },
      text: `Error: ${msg}`,
      is_error: true,
      images: [],
    });
    if (!urlPath) return fail(`Unknown sandbox tool: ${name}`, 404, `local://sandbox/${name}`);
    const url = `${ENDPOINT_BASE}${urlPath}`;
    const payload = translatePayload(name, input);
    let reply: { status: number; body: unknown };
    try {
      reply = await this.post(urlPath, payload, name === 'Bash' && typeof payload.timeout_seconds === 'number' ? payload.timeout_seconds : 30);
    } catch (err) {
      return fail((err as Error).message, 500, url);
    }
    const body = reply.body as Record<string, unknown>;
    const isError = reply.status >= 400;
    const dispatch: DispatchRecord = { ...base, endpoint_url: url, response_status: reply.status, response_body: reply.body, latency_ms: performance.now() - started };
    const frames = body && typeof body === 'object' && Array.isArray(body.frames) ? (body.frames as { image_b64?: string; mime_type?: string }[]) : undefined;
    if (!isError && (MEDIA_TOOLS.has(name) || (name === 'Read' && frames))) {
      const valid = (frames ?? []).filter((f) => typeof f.image_b64 === 'string');
      const budget = 64;
      const selected = valid.length <= budget ? valid : Array.from({ length: budget }, (_, i) => valid[Math.floor((i * valid.length) / budget)]!);
      const { frames: _f, ...summary } = body;
      const text = JSON.stringify({ ...summary, frame_count: valid.length, frames_shown: selected.length, ...(valid.length > selected.length ? { sampling: `uniform (${selected.length} of ${valid.length})` } : {}) });
      return { dispatch, text, is_error: false, images: selected.map((f) => ({ data: f.image_b64!, mime_type: f.mime_type ?? 'image/png' })) };
    }
    return { dispatch, text: JSON.stringify(reply.body), is_error: isError, images: [] };
  }

  /** After the loop: sandbox_grader_files in, then the env snapshot (Claw-Eval's _collect_env_snapshot). */
  async snapshot(root: string, task: ClawEvalTask): Promise<Record<string, unknown>> {
    await this.inject(task.sandbox_grader_files, root, task);
    const snap: Record<string, unknown> = {};
    const t = task.env_snapshot_timeout;
    for (const cmd of task.env_snapshot_commands) {
      try {
        snap[`cmd:${cmd}`] = (await this.post('/exec', { command: cmd, timeout_seconds: t }, t)).body;
      } catch (err) {
        snap[`cmd:${cmd}`] = { error: (err as Error).message };
      }
    }
    const read = async (p: string) => normalizeRead((await this.post('/read', { path: p })).body as Record<string, unknown>);
    for (const pattern of task.env_snapshot_files) {
      try {
        if (pattern.includes('*') || pattern.includes('?')) {
          const files = (((await this.post('/glob', { pattern, max_files: 50 })).body as { files?: { path: string }[] }).files ?? []);
          for (const f of files) {
            try {
              snap[`file:${f.path}`] = await read(f.path);
            } catch (err) {
              snap[`file:${f.path}`] = { error: (err as Error).message };
            }
          }
        } else snap[`file:${pattern}`] = await read(pattern);
      } catch (err) {
        snap[`file:${pattern}`] = { error: (err as Error).message };
      }
    }
    return snap;
  }
}

/** A /read answer of an image (frames) as the {encoding, content} graders expect (Claw-Eval's _normalize_read_response). */
function normalizeRead(data: Record<string, unknown>): Record<string, unknown> {
  const frames = data.frames as { image_b64?: string; mime_type?: string }[] | undefined;
  if (frames && frames.length && !data.encoding && frames[0]!.image_b64) return { content: frames[0]!.image_b64, encoding: 'base64', mime_type: frames[0]!.mime_type ?? 'image/png' };
  return data;
}

/** A task's file: under its folder, else under DIR (cross-task references such as tasks/T021…/fixtures/…), inside DIR. */
export function resolveTaskFile(root: string, taskDir: string, rel: string): string | undefined {
  for (const base of [taskDir, root]) {
    const p = path.resolve(base, rel);
    if (p !== root && !p.startsWith(root + path.sep)) continue;
    if (existsSync(p) && statSync(p).isFile()) return p;
  }
  return undefined;
}

/** local_grader_files: read from the host's task folder for the grader (never shown to the agent). */
export function localGraderFiles(task: ClawEvalTask): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const rel of task.local_grader_files) {
    const p = path.resolve(task.dir, rel);
    try {
      out[`local_file:${rel}`] = { encoding: 'base64', content: readFileSync(p).toString('base64') };
    } catch {
      out[`local_file:${rel}`] = { error: `not found: ${p}` };
    }
  }
  return out;
}
