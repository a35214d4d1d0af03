// Files of a shell sandbox. Paths are checked on the host first (lexically and through symlinks, see paths.ts:
// 400 for anything outside the workspace, devices, FIFOs), then the bytes move through a command run inside the
// sandbox as its own uid: a path swapped for a symlink between check and use reaches only what the sandbox
// itself may read or write.
import { stat } from 'node:fs/promises';
import { GroveError } from '../protocol/errors.ts';
import type { FileEntry } from '../protocol/shell.ts';
import type { RunningExec, RunOptions } from './exec.ts';
import { checkOnHost, mapPath } from './paths.ts';

export interface FileContext {
  run(opts: Partial<RunOptions> & { argv: string[] }): Promise<RunningExec>;
  workspace: string;
  hostWorkspace: string;
  maxFileBytes: number;
  /** Commands name files by their host path (a pod-isolated sandbox, which shares the host's view), not inside. */
  hostPaths?: boolean;
}

/** The path a command in the sandbox opens. */
const at = (ctx: FileContext, p: { inside: string; host: string }) => (ctx.hostPaths ? p.host : p.inside);

function failed(what: string, stderr: string): GroveError {
  const msg = stderr.trim().split('\n').slice(-3).join(' ') || 'failed';
  return new GroveError('path_not_allowed', `${what}: ${msg}`);
}

export async function writeSandboxFile(ctx: FileContext, input: string, data: Buffer, mode?: string): Promise<{ path: string; size: number }> {
  const p = mapPath(input, ctx.workspace, ctx.hostWorkspace);
  if (p.rel === '') throw new GroveError('path_not_allowed', 'The workspace itself is a directory; name a file in it.');
  const kind = await checkOnHost(p, ctx.hostWorkspace);
  if (kind !== 'file' && kind !== 'missing') throw new GroveError('path_not_allowed', `"${p.inside}" exists and is not a regular file.`);
  if (data.length > ctx.maxFileBytes) {
    throw new GroveError('file_too_large', `${data.length} bytes is more than this server accepts per file (${ctx.maxFileBytes}).`);
  }
  const script = 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1" && { [ -z "$2" ] || chmod "$2" -- "$1"; }';
  const r = await (await ctx.run({ argv: ['/bin/sh', '-c', script, 'grove-upload', at(ctx, p), mode ?? ''], stdin: data })).result;
  if (r.exit_code !== 0) throw failed(`Writing ${p.inside} failed`, r.stderr);
  return { path: p.inside, size: data.length };
}

export async function readSandboxFile(ctx: FileContext, input: string): Promise<{ path: string; data: Buffer }> {
  const p = mapPath(input, ctx.workspace, ctx.hostWorkspace);
  const kind = await checkOnHost(p, ctx.hostWorkspace);
  if (kind === 'missing') throw new GroveError('file_not_found', `No file "${p.inside}" in the sandbox.`);
  if (kind !== 'file') throw new GroveError('path_not_allowed', `"${p.inside}" is not a regular file.`);
  const size = (await stat(p.host)).size;
  if (size > ctx.maxFileBytes) throw new GroveError('file_too_large', `"${p.inside}" has ${size} bytes; this server answers at most ${ctx.maxFileBytes}.`);
  // One byte more than the limit: a file that grew meanwhile is refused rather than cut.
  const running = await ctx.run({ argv: ['cat', '--', at(ctx, p)], maxOutputBytes: ctx.maxFileBytes + 2 });
  const r = await running.result;
  if (r.exit_code !== 0) throw failed(`Reading ${p.inside} failed`, r.stderr);
  if (r.stdout_bytes > ctx.maxFileBytes) throw new GroveError('file_too_large', `"${p.inside}" is larger than ${ctx.maxFileBytes} bytes.`);
  return { path: p.inside, data: running.stdoutBytes() };
}

const TYPES: Record<string, FileEntry['type']> = { f: 'file', d: 'directory', l: 'symlink' };

export async function listFiles(ctx: FileContext, input: string): Promise<{ path: string; files: FileEntry[] }> {
  const p = mapPath(input, ctx.workspace, ctx.hostWorkspace);
  const kind = await checkOnHost(p, ctx.hostWorkspace);
  if (kind === 'missing') throw new GroveError('file_not_found', `No directory "${p.inside}" in the sandbox.`);
  if (kind !== 'directory') throw new GroveError('path_not_allowed', `"${p.inside}" is not a directory.`);
  // NUL-terminated records: any byte but NUL may be in a name.
  const running = await ctx.run({
    argv: ['find', `${at(ctx, p)}/`, '-mindepth', '1', '-maxdepth', '1', '-printf', '%y\\t%s\\t%T@\\t%f\\0'],
    maxOutputBytes: 16 * 1024 * 1024,
  });
  const r = await running.result;
  if (r.exit_code !== 0) throw failed(`Listing ${p.inside} failed`, r.stderr);
  const files: FileEntry[] = [];
  for (const rec of running.stdoutBytes().toString('utf8').split('\0')) {
    if (!rec) continue;
    const [y, size, mtime, ...rest] = rec.split('\t');
    const name = rest.join('\t');
    files.push({
      name,
      path: `${p.inside}/${name}`,
      type: TYPES[y] ?? 'other',
      size: Number(size),
      modified: new Date(Number(mtime) * 1000).toISOString(),
    });
  }
  files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { path: p.inside, files };
}
