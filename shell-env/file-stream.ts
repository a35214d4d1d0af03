// Large files into a shell sandbox as a stream: the bytes go from the request straight to a command inside the
// sandbox (as its own uid) on stdin, never held whole in the server's memory, so a file's size is bounded by its
// own limit, not by a request body. Path checks as for every file (paths.ts); the file appears under its name only
// once complete (written to `<name>.grove-part`, then renamed); a cut-short upload is killed and its part removed.
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GroveError } from '../protocol/errors.ts';
import type { FileContext } from './files.ts';
import { checkOnHost, mapPath } from './paths.ts';

export async function writeSandboxFileStream(ctx: FileContext, input: string, body: Readable, maxBytes: number, mode?: string): Promise<{ path: string; size: number }> {
  const p = mapPath(input, ctx.workspace, ctx.hostWorkspace);
  if (p.rel === '') throw new GroveError('path_not_allowed', 'The workspace itself is a directory; name a file in it.');
  const kind = await checkOnHost(p, ctx.hostWorkspace);
  if (kind !== 'file' && kind !== 'missing') throw new GroveError('path_not_allowed', `"${p.inside}" exists and is not a regular file.`);
  const target = ctx.hostPaths ? p.host : p.inside;
  const part = `${target}.grove-part`;
  const sh = async (script: string, ...args: string[]) => (await ctx.run({ argv: ['/bin/sh', '-c', script, 'grove-upload', ...args] })).result;
  // Arguments ($1, $2), never spliced into the script. The part becomes the file only after the whole body arrived.
  const running = await ctx.run({ argv: ['/bin/sh', '-c', 'mkdir -p -- "$(dirname -- "$1")" && exec cat > "$1"', 'grove-upload', part], interactive: true, timeoutMs: 3_600_000 });
  let size = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length;
      if (size > maxBytes) return cb(new GroveError('file_too_large', `The upload is larger than this server accepts per streamed file (${maxBytes} bytes).`));
      cb(null, chunk);
    },
  });
  const stdin = running.child.stdin;
  if (!stdin) throw new GroveError('internal_error', 'The upload command has no stdin.');
  try {
    await pipeline(body, cap, stdin);
  } catch (err) {
    await running.kill();
    await running.result.catch(() => undefined);
    await sh('rm -f -- "$1"', part).catch(() => undefined);
    if (err instanceof GroveError) throw err;
    throw new GroveError('invalid_request', `The upload was cut short after ${size} bytes: ${(err as Error).message}`);
  }
  const r = await running.result;
  const done = r.exit_code === 0 ? await sh('{ [ -z "$3" ] || chmod "$3" -- "$1"; } && mv -f -- "$1" "$2"', part, target, mode ?? '') : r;
  if (done.exit_code !== 0) {
    await sh('rm -f -- "$1"', part).catch(() => undefined);
    const msg = done.stderr.trim().split('\n').slice(-3).join(' ') || `exit ${done.exit_code}`;
    throw new GroveError('path_not_allowed', `Writing ${p.inside} failed: ${msg}`);
  }
  return { path: p.inside, size };
}
