// PUT /sandboxes/{id}/files/stream?path=…&mode=…: a large file into a shell sandbox's workspace as raw bytes
// (application/octet-stream). The body is not parsed or buffered: it streams to the sandbox as it arrives, so the
// JSON body limit (bodyLimit, 10 MiB by default) does not apply; its own limit is shellMaxStreamBytes. A sandbox
// that cannot stream (a remote worker's) takes the file whole, within its per-file limit.
import type { FastifyInstance } from 'fastify';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { GroveError } from '../protocol/errors.ts';
import { shellSandbox, touching } from './routes/shell.ts';
import type { RouteContext } from './route.ts';
import { parseInput } from './validation.ts';

/** Bytes one streamed upload may carry (a repository bundle, a dataset): far above any JSON body. */
export const STREAM_UPLOAD_MAX_BYTES = 16 * 1024 * 1024 * 1024;

const Params = z.object({ id: z.string().min(1).max(200) });
const Query = z.object({
  path: z.string().min(1).max(4096),
  mode: z.string().regex(/^[0-7]{3,4}$/, 'mode is an octal file mode like 0644').optional(),
});

async function collect(body: Readable, max: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const chunk of body) {
    n += (chunk as Buffer).length;
    if (n > max) throw new GroveError('file_too_large', `This sandbox takes files of at most ${max} bytes.`);
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts);
}

export function registerStreamUpload(app: FastifyInstance, ctx: RouteContext): void {
  void app.register(async (scope) => {
    scope.addContentTypeParser('application/octet-stream', { bodyLimit: STREAM_UPLOAD_MAX_BYTES }, (_req, payload, done) => done(null, payload));
    scope.put('/sandboxes/:id/files/stream', { bodyLimit: STREAM_UPLOAD_MAX_BYTES }, async (request) => {
      const params = parseInput(Params, request.params, 'params');
      const query = parseInput(Query, request.query, 'query');
      const body = request.body as Readable | undefined;
      if (!body || typeof body.pipe !== 'function') throw new GroveError('invalid_request', 'Send the file as application/octet-stream.');
      const sb = shellSandbox(ctx, params.id);
      return touching(ctx, params.id, async () =>
        sb.writeFileStream
          ? sb.writeFileStream(query.path, body, STREAM_UPLOAD_MAX_BYTES, query.mode)
          : sb.writeFile(query.path, await collect(body, ctx.config.shellMaxFileBytes), query.mode),
      );
    });
  });
}
