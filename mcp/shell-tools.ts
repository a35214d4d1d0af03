// A shell sandbox's tools over MCP: exec, read/write/list files, apply a patch. Each runs through the sandbox's
// own interface (shell-env/types.ts), so paths are checked exactly as the REST routes check them (relative to
// /workspace; `..`, absolute paths outside it and symlinks out of it answer path_not_allowed) and commands run
// with the sandbox's limits and network rules. Outputs are capped for a model's context.
import { z } from 'zod';
import { ApplyPatchRequest, ExecRequest, FileUpload } from '../protocol/shell.ts';
import type { Logger } from '../sandbox/log.ts';
import type { ShellSandbox } from '../shell-env/types.ts';
import { defineTool, listing, runTool, type AnyToolDef } from './define.ts';
import { errorResult, textResult, type McpTool, type ToolResult, type ToolSource } from './types.ts';

/** Bytes of a file or of each output stream a model gets back. */
export const MAX_TOOL_OUTPUT = 256 * 1024;

const exec = defineTool({
  name: 'exec',
  description:
    'Run a shell command in the sandbox (bash -c, working directory /workspace unless cwd is given) and return its exit ' +
    `code, stdout and stderr (each cut to ${MAX_TOOL_OUTPUT} bytes, head and tail kept). A timeout kills the whole process tree (exit code 124).`,
  input: z.strictObject({
    command: z.string().min(1).max(1_000_000).describe('the command line, run with bash -c'),
    cwd: z.string().min(1).max(4096).optional().describe('working directory: absolute, or relative to /workspace'),
    timeout_s: z.number().positive().max(3600).default(120).describe('seconds before the command is killed (default 120)'),
    env: z.record(z.string(), z.string()).optional().describe('extra environment variables'),
  }),
  annotations: { destructiveHint: true, openWorldHint: true },
  async handler(sb: ShellSandbox, a) {
    const req = ExecRequest.safeParse({ command: a.command, cwd: a.cwd, env: a.env, timeout_s: a.timeout_s, max_output_bytes: MAX_TOOL_OUTPUT });
    if (!req.success) return errorResult('invalid_arguments', `Invalid arguments for exec: ${req.error.issues[0]?.path.join('.')}: ${req.error.issues[0]?.message}`);
    const r = await sb.exec(req.data);
    const text = `exit_code: ${r.exit_code}${r.timed_out ? ' (timed out)' : ''}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
    return textResult(text, false, { exit_code: r.exit_code, timed_out: r.timed_out, stdout: r.stdout, stderr: r.stderr });
  },
});

/** Text when the bytes are UTF-8, else base64 (said in the answer). */
function fileText(data: Buffer): { text: string; encoding: 'utf8' | 'base64' } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(data), encoding: 'utf8' };
  } catch {
    return { text: data.toString('base64'), encoding: 'base64' };
  }
}

const readFile = defineTool({
  name: 'read_file',
  description: `Read a file of the workspace (a path under /workspace, or relative to it). Text comes back as is; other bytes as base64. At most ${MAX_TOOL_OUTPUT} bytes.`,
  input: z.strictObject({ path: z.string().min(1).max(4096) }),
  annotations: { readOnlyHint: true },
  async handler(sb: ShellSandbox, a) {
    const { path, data } = await sb.readFile(a.path);
    if (data.length > MAX_TOOL_OUTPUT) return errorResult('file_too_large', `${path} is ${data.length} bytes; this tool returns at most ${MAX_TOOL_OUTPUT}. Read a part with exec (head -c, sed -n).`);
    const f = fileText(data);
    return textResult(f.text, false, { path, size: data.length, encoding: f.encoding });
  },
});

const writeFile = defineTool({
  name: 'write_file',
  description: 'Write a file into the workspace (parent folders are created; an existing file is replaced). content is text unless encoding is "base64".',
  input: z.strictObject({
    path: z.string().min(1).max(4096),
    content: z.string().max(8 * 1024 * 1024),
    encoding: z.enum(['utf8', 'base64']).default('utf8'),
    mode: z.string().regex(/^[0-7]{3,4}$/).optional().describe('octal mode, e.g. "755"'),
  }),
  annotations: { destructiveHint: true },
  async handler(sb: ShellSandbox, a) {
    const up = FileUpload.parse({ path: a.path, content: a.content, encoding: a.encoding, mode: a.mode });
    const clean = up.content.replace(/\s+/g, '');
    if (up.encoding === 'base64' && (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 === 1)) return errorResult('invalid_arguments', 'content is not valid base64 (use encoding "utf8" for text).');
    const w = await sb.writeFile(up.path, up.encoding === 'utf8' ? Buffer.from(up.content, 'utf8') : Buffer.from(clean, 'base64'), up.mode);
    return textResult(`wrote ${w.size} bytes to ${w.path}`, false, w);
  },
});

const listFiles = defineTool({
  name: 'list_files',
  description: 'List a folder of the workspace (default /workspace): name, type, size, modified time.',
  input: z.strictObject({ path: z.string().min(1).max(4096).default('/workspace') }),
  annotations: { readOnlyHint: true },
  async handler(sb: ShellSandbox, a) {
    const l = await sb.listFiles(a.path);
    const lines = l.files.map((f) => `${f.type === 'directory' ? 'd' : f.type === 'symlink' ? 'l' : '-'} ${String(f.size).padStart(10)} ${f.name}`);
    return textResult(`${l.path}\n${lines.join('\n')}`, false, l);
  },
});

const applyPatch = defineTool({
  name: 'apply_patch',
  description: 'Apply a unified diff (git format) with git apply, in /workspace unless cwd is given. A patch that does not apply is an error with git\'s message.',
  input: z.strictObject({ patch: z.string().min(1).max(16 * 1024 * 1024), cwd: z.string().min(1).max(4096).optional() }),
  annotations: { destructiveHint: true },
  async handler(sb: ShellSandbox, a) {
    const req = ApplyPatchRequest.parse({ patch: a.patch, cwd: a.cwd });
    const r = await sb.applyPatch(req.patch, { cwd: req.cwd, timeoutMs: 60_000 });
    return textResult(r.success ? `applied${r.stdout ? `\n${r.stdout}` : ''}` : `git apply failed (exit ${r.exit_code}):\n${r.stderr || r.stdout}`, !r.success, r);
  },
});

export const SHELL_TOOLS: readonly AnyToolDef<ShellSandbox>[] = [exec, readFile, writeFile, listFiles, applyPatch];

export class ShellTools implements ToolSource {
  readonly kind = 'grove-shell';
  constructor(
    private readonly sandbox: ShellSandbox,
    private readonly touched: () => void = () => undefined,
    private readonly log?: Logger,
  ) {}

  tools(): McpTool[] {
    return SHELL_TOOLS.map(listing);
  }

  async call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult> {
    try {
      return await runTool(SHELL_TOOLS, this.sandbox, name, args, signal, this.log);
    } finally {
      this.touched();
    }
  }
}
