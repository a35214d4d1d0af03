// `grove view`: a fastify app serving the static viewer (viewer/static, no build step, no CDN) and a JSON API
// over a directory of runs. buildViewer() does not listen (tests use inject()); startViewer() does.
import { readdir, readFile } from 'node:fs/promises';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import sharp from 'sharp';
import { z } from 'zod';
import { silentLogger, type Logger } from '../sandbox/log.ts';
import { diffImage } from '../recording/diff.ts';
import { HAR_FILE, summariseHar } from '../recording/har.ts';
import { modelActions, stepErrorKind } from '../recording/reader.ts';
import { RunIndex, type ListQuery } from './index.ts';

const STATIC_DIR = join(dirname(fileURLToPath(import.meta.url)), 'static');

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.json': 'application/json; charset=utf-8',
  '.har': 'application/json; charset=utf-8',
};

export interface ViewerOptions {
  /** Directory of runs (or one episode directory, or a WebVoyager / Online-Mind2Web results folder). */
  root: string;
  logger?: Logger;
  /** Seconds between directory re-scans triggered by list requests (default 3). */
  rescanSeconds?: number;
  /**
   * Output folders of `grove judge --out` for episodes under root (WebVoyager and Online-Mind2Web results are judged
   * into one): their verdicts show with the episodes. Root itself (the default --out) is always looked in.
   */
  judged?: string[];
}

const ListParams = z.object({
  offset: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
  suite: z.string().optional(),
  site: z.string().optional(),
  level: z.string().optional(),
  success: z.enum(['true', 'false', 'unknown', '']).optional(),
  termination: z.string().optional(),
  verdict: z.string().optional(),
  status: z.string().optional(),
  run: z.string().optional(),
  layout: z.string().optional(),
  task: z.string().optional(),
  q: z.string().max(500).optional(),
  sort: z.enum(['id', 'started', 'steps', 'reward', 'noops', 'errors']).optional(),
  desc: z.enum(['1', '0', 'true', 'false']).optional(),
});

function toQuery(p: z.infer<typeof ListParams>): ListQuery {
  const { desc, success, ...rest } = p;
  return { ...rest, success: success || undefined, desc: desc === '1' || desc === 'true' };
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Resolves `rel` inside `dir`, refusing anything that escapes it. */
function inside(dir: string, rel: string): string {
  const abs = resolve(dir, rel);
  const r = relative(resolve(dir), abs);
  if (!r || r.startsWith('..') || r.split(sep).includes('..') || resolve(r) === r) {
    throw new HttpError(400, 'bad_path', `path "${rel}" is not inside the episode directory`);
  }
  return abs;
}

export async function buildViewer(opts: ViewerOptions): Promise<FastifyInstance & { index: RunIndex }> {
  const log = opts.logger ?? silentLogger;
  const root = resolve(opts.root);
  const judgeDirs = [...new Set([root, ...(opts.judged ?? []).map((d) => resolve(d))])];
  const index = new RunIndex(root, { logger: log, rescanMs: (opts.rescanSeconds ?? 3) * 1000, judgeDirs });
  const staticFiles = new Set(await readdir(STATIC_DIR));
  const thumbs = new Map<string, Buffer>();
  const app = Fastify({ logger: false }) as unknown as FastifyInstance & { index: RunIndex };
  app.decorate('index', index);

  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    if (err instanceof HttpError) return reply.code(err.status).send({ error: { code: err.code, message: err.message } });
    if (err instanceof z.ZodError) {
      return reply.code(400).send({ error: { code: 'invalid_request', message: z.prettifyError(err) } });
    }
    if (err.statusCode && err.statusCode < 500) return reply.code(err.statusCode).send({ error: { code: 'invalid_request', message: err.message } });
    log.error({ err }, 'viewer request failed');
    return reply.code(500).send({ error: { code: 'internal', message: 'Internal Server Error' } });
  });

  const episodeDir = async (id: unknown) => {
    if (typeof id !== 'string' || !id) throw new HttpError(400, 'missing_id', 'query parameter "id" (episode id) is required');
    await index.refresh();
    // An episode that appeared since the last scan: look again before answering 404.
    if (!index.dirOf(id)) await index.refresh(true);
    const dir = index.dirOf(id);
    if (!dir) throw new HttpError(404, 'episode_not_found', `no episode "${id}" under ${index.root}`);
    return dir;
  };

  app.get('/', async (_req, reply) => reply.type(MIME['.html']).send(await readFile(join(STATIC_DIR, 'index.html'))));
  // A run's report.html (runner/report.ts) served beside the viewer, so its "view" links (./#/episode?id=…) open
  // the episodes here when DIR is the run directory.
  app.get('/report.html', async (_req, reply) => {
    const html = await readFile(join(index.root, 'report.html')).catch(() => undefined);
    if (!html) throw new HttpError(404, 'report_not_found', `no report.html in ${index.root} (grove view the run directory to see its report)`);
    return reply.type(MIME['.html']).send(html);
  });
  app.get('/static/:name', async (req, reply) => {
    const { name } = req.params as { name: string };
    // Only files that exist in viewer/static at startup are served: no path handling at all.
    if (!staticFiles.has(name)) throw new HttpError(404, 'not_found', `no static file ${name}`);
    return reply
      .type(MIME[extname(name)] ?? 'application/octet-stream')
      .header('cache-control', 'no-cache')
      .send(await readFile(join(STATIC_DIR, name)));
  });

  app.get('/api/facets', async () => {
    await index.refresh();
    return { root: index.root, total: index.size, facets: index.facets(), errors: [...index.errors].map(([id, error]) => ({ id, error })) };
  });

  app.get('/api/episodes', async (req) => {
    await index.refresh();
    return index.list(toQuery(ListParams.parse(req.query)));
  });

  app.get('/api/neighbours', async (req) => {
    const q = req.query as Record<string, string>;
    await episodeDir(q.id);
    return index.neighbours(q.id, toQuery(ListParams.parse({ ...q, id: undefined })));
  });

  app.get('/api/episode', async (req) => {
    const { id } = req.query as { id?: string };
    await episodeDir(id);
    const view = await index.view(id!);
    if (!view) throw new HttpError(404, 'episode_not_found', `no episode "${id}"`);
    // Other episodes of the same task, for side-by-side comparison.
    const siblings = index
      .filter({ task: view.task.id })
      .filter((s) => s.id !== view.id)
      .slice(0, 50)
      .map((s) => ({ id: s.id, run_id: s.run_id, success: s.success, steps: s.steps, termination: s.termination }));
    // A network recording beside the episode (recording/har.ts), summarised for the episode page.
    const har = await summariseHar(join(view.dir, HAR_FILE)).catch(() => undefined);
    // Per step: whose error it shows (the timeline marks action errors and environment problems apart) and the
    // actions as the model wrote them, in its format's space, beside the executed ones.
    const steps = view.steps.map((s) => ({ ...s, error_kind: stepErrorKind(s, view.layout), model_actions: modelActions(s) }));
    return { ...view, steps, summary: index.summary(view.id), siblings, har: har && { file: HAR_FILE, ...har, urls: har.urls.slice(0, 200) } };
  });

  app.get('/api/file', async (req, reply) => {
    const { id, path } = req.query as { id?: string; path?: string };
    const dir = await episodeDir(id);
    if (!path) throw new HttpError(400, 'missing_path', 'query parameter "path" is required');
    const abs = inside(dir, path);
    const type = MIME[extname(abs).toLowerCase()];
    if (!type) throw new HttpError(400, 'bad_path', `only images and JSON files are served, not ${path}`);
    const bytes = await readFile(abs).catch(() => {
      throw new HttpError(404, 'file_not_found', `no file ${path} in episode ${id}`);
    });
    return reply.type(type).header('cache-control', 'max-age=300').send(bytes);
  });

  app.get('/api/thumb', async (req, reply) => {
    const { id, path, w } = req.query as { id?: string; path?: string; w?: string };
    const dir = await episodeDir(id);
    if (!path) throw new HttpError(400, 'missing_path', 'query parameter "path" is required');
    const width = Math.min(Math.max(Number(w) || 160, 32), 640);
    const key = `${id}|${path}|${width}`;
    let out = thumbs.get(key);
    if (!out) {
      const bytes = await readFile(inside(dir, path)).catch(() => {
        throw new HttpError(404, 'file_not_found', `no file ${path} in episode ${id}`);
      });
      out = await sharp(bytes).resize({ width }).jpeg({ quality: 70 }).toBuffer();
      thumbs.set(key, out);
      if (thumbs.size > 2000) thumbs.delete(thumbs.keys().next().value as string);
    }
    return reply.type('image/jpeg').header('cache-control', 'max-age=300').send(out);
  });

  app.get('/api/diff', async (req, reply) => {
    const { id, step } = req.query as { id?: string; step?: string };
    const dir = await episodeDir(id);
    const view = await index.view(id!);
    const s = view?.steps.find((x) => x.step === Number(step));
    if (!s) throw new HttpError(404, 'step_not_found', `episode ${id} has no step ${step}`);
    if (!s.before_frame || !s.frame) throw new HttpError(404, 'no_frames', `step ${step} lacks a before or after frame`);
    const [a, b] = await Promise.all([readFile(inside(dir, s.before_frame)), readFile(inside(dir, s.frame))]);
    const { png, share } = await diffImage(a, b);
    return reply.type('image/png').header('x-changed-share', String(share)).header('cache-control', 'max-age=300').send(png);
  });

  await index.refresh(true);
  return app;
}

export async function startViewer(opts: ViewerOptions & { port?: number; host?: string }): Promise<{ url: string; app: FastifyInstance & { index: RunIndex }; close(): Promise<void> }> {
  const app = await buildViewer(opts);
  const host = opts.host ?? '127.0.0.1';
  await app.listen({ port: opts.port ?? 0, host });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  return { url: `http://${host}:${port}/`, app, close: () => app.close() };
}
