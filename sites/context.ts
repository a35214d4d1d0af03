// What each site's route module receives from the server.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../sandbox/log.ts';
import type { SessionState, SessionStore } from './state.ts';

export interface SiteContext {
  store: SessionStore;
  log: Logger;
  /** Resolves after the simulated server delay for `key` (deterministic per key, within [min, max] ms). */
  delay(key: string): Promise<void>;
}

declare module 'fastify' {
  interface FastifyRequest {
    groveSession: SessionState;
  }
}

export function sendHtml(reply: FastifyReply, body: string, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(body);
}

/** Form bodies arrive as url-encoded strings; repeated keys (checkbox groups) become arrays. */
export type FormBody = Record<string, string | string[]>;

export function formBody(req: FastifyRequest): FormBody {
  return (req.body ?? {}) as FormBody;
}

export function str(v: string | string[] | undefined): string {
  return (Array.isArray(v) ? v[0] : v ?? '').trim();
}

export function list(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** Records a served download in the session (the judge checks it). */
export function recordDownload(req: FastifyRequest, filename: string): void {
  req.groveSession.downloads.push({ path: req.url.split('?')[0], filename, at: new Date().toISOString() });
}

/** Counts a page view of one site and returns the new count. */
export function countView(req: FastifyRequest, site: string): number {
  const s = req.groveSession;
  s.views[site] = (s.views[site] ?? 0) + 1;
  return s.views[site];
}
