// Routes only a worker (`grove worker`) serves, for its orchestrator: the HAR files of record_har / replay_har
// sandboxes, which must sit beside the browser. Not part of the public API (not in docs/openapi.json): the
// orchestrator calls them with the pod's token (k8s/remote-sandbox.ts), clients never see them.
//   PUT    /worker/har/{name}                 the HAR to replay (raw bytes, streamed to disk) → {replay_har, size}
//   DELETE /worker/har/{name}                 forget it (the sandbox that replayed it closed)
//   GET    /worker/recordings/{sandbox}/har   the HAR a closed record_har sandbox wrote; its episode directory
//                                             (the worker's own frames) is removed once it was sent
//   GET    /worker/sandboxes/{sandbox}/parse-context   what a model's output is parsed against (the last SoM list,
//                                             screenshot size, grid divisor, pointer): the browser's own, so any
//                                             orchestrator replica parses as the one that served the observation
//   /worker/sites...                         the offline sites on the pod's loopback (server/worker-sites.ts)
//   /worker/claw-eval/...                    a Claw-Eval episode's conversation and trace (server/worker-claw-eval.ts)
//   POST   /worker/exit                      a paired shell's worker only (k8s/paired-shell.ts): ends this worker
//                                             (its ephemeral container cannot be removed, so it stops instead)
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance } from 'fastify';
import { GroveError } from '../protocol/errors.ts';
import { harPathFor } from '../recording/har.ts';
import { episodeDirFor } from './recording.ts';
import { registerWorkerSites } from './worker-sites.ts';
import { registerWorkerClawEval } from './worker-claw-eval.ts';
import { browserSandbox } from './routes/common.ts';

/** Largest HAR accepted (the same bound a replay HAR has on the orchestrator). */
const MAX_HAR_BYTES = 512 * 1024 * 1024;
const REPLAY_DIR = 'replay';
const NAME = /^[A-Za-z0-9_-]{1,100}$/;

function checkName(name: string): string {
  if (!NAME.test(name)) throw new GroveError('invalid_request', `"${name.slice(0, 100)}" is not a HAR name (letters, digits, _ and -).`);
  return name;
}

export function registerWorkerRoutes(app: FastifyInstance, recordingsDir: string, exit?: () => void): void {
  const root = path.resolve(recordingsDir);
  void app.register(async (scope) => {
    if (exit) {
      scope.post('/worker/exit', async (_request, reply) => {
        reply.raw.once('finish', exit);
        return reply.code(202).send({ exiting: true });
      });
    }
    // The body reaches the handler as the raw request stream: a HAR is written to disk as it arrives.
    scope.addContentTypeParser('application/octet-stream', (_req, payload, done) => done(null, payload));
    registerWorkerSites(scope, app);
    registerWorkerClawEval(scope, app);

    scope.put<{ Params: { name: string } }>('/worker/har/:name', async (request) => {
      const name = checkName(request.params.name);
      const body = request.body;
      if (!body || typeof (body as NodeJS.ReadableStream).pipe !== 'function') {
        throw new GroveError('invalid_request', 'Send the HAR as application/octet-stream.');
      }
      const dir = path.join(root, REPLAY_DIR);
      await mkdir(dir, { recursive: true });
      const file = path.join(dir, `${name}.har`);
      const part = `${file}.part`;
      let size = 0;
      const cap = new Transform({
        transform(chunk: Buffer, _enc, cb) {
          size += chunk.length;
          if (size > MAX_HAR_BYTES) return cb(new GroveError('payload_too_large', `A HAR may have at most ${MAX_HAR_BYTES} bytes.`));
          cb(null, chunk);
        },
      });
      try {
        await pipeline(body as NodeJS.ReadableStream, cap, createWriteStream(part));
        await rename(part, file);
      } catch (err) {
        await rm(part, { force: true });
        throw err;
      }
      return { replay_har: `${REPLAY_DIR}/${name}.har`, size };
    });

    scope.get<{ Params: { sandbox: string } }>('/worker/sandboxes/:sandbox/parse-context', async (request) =>
      browserSandbox(app.grove, request.params.sandbox).parseContext(),
    );

    scope.delete<{ Params: { name: string } }>('/worker/har/:name', async (request, reply) => {
      await rm(path.join(root, REPLAY_DIR, `${checkName(request.params.name)}.har`), { force: true });
      return reply.code(204).send();
    });

    scope.get<{ Params: { sandbox: string } }>('/worker/recordings/:sandbox/har', async (request, reply) => {
      const dir = episodeDirFor(root, request.params.sandbox);
      const file = harPathFor(dir);
      const st = await stat(file).catch(() => null);
      if (!st?.isFile()) throw new GroveError('not_found', `No recorded HAR for sandbox ${request.params.sandbox} on this worker.`);
      // The episode's other files (the worker's own frames) were never wanted: gone once the HAR is sent.
      reply.raw.once('finish', () => void rm(dir, { recursive: true, force: true }).catch(() => undefined));
      reply.header('content-type', 'application/json').header('content-length', String(st.size));
      return reply.send(createReadStream(file));
    });
  });
}
