// `grove proxy`: an OpenAI-compatible endpoint that forwards every model call to an upstream server and records
// it. Model calls: `/r/<rollout>/v1/...`, or `/v1/...` with an `x-grove-rollout` header or a per-rollout key.
// Admin routes (with the admin key): POST /rollouts (issue a per-rollout key), POST /rollouts/<id>/reward,
// GET /rollouts/<id>/calls. GET /health needs no key.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { timingSafeEqual } from 'node:crypto';
import type { Logger } from '../sandbox/log.ts';
import { silentLogger } from '../sandbox/log.ts';
import { forwardCall } from './forward.ts';
import { proxyError } from './errors.ts';
import { RolloutKeys, resolveCall, validRolloutId } from './rollout.ts';
import { RecordStore, readCalls } from './store.ts';
import type { ProxyOptions } from './types.ts';
import { readLimitedBody } from '../sandbox/http-body.ts';

const MAX_BODY = 64 * 1024 * 1024;

export interface RecordingProxy {
  /** Base URL of the proxy, e.g. `http://127.0.0.1:4010`. */
  url: string;
  /** The OpenAI base URL a harness of this rollout uses (`<url>/r/<rollout>/v1`). */
  baseUrlFor(rollout: string): string;
  /** A per-rollout API key (the harness then uses `<url>/v1` with it). */
  issueKey(rollout: string): string;
  store: RecordStore;
  close(): Promise<void>;
}

function sameKey(given: string | undefined, expected: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startProxy(opts: ProxyOptions & { host?: string; port?: number; logger?: Logger }): Promise<RecordingProxy> {
  const log = opts.logger ?? silentLogger;
  const store = new RecordStore(opts.dir);
  const keys = new RolloutKeys();
  const inflight = new Set<Promise<void>>();
  let url = '';

  const admin = async (req: http.IncomingMessage, res: http.ServerResponse, pathname: string, body: Buffer) => {
    const given = (req.headers['x-api-key'] as string | undefined) ?? (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
    if (!opts.adminKey) return proxyError(res, 'admin_disabled', 'start the proxy with an admin key to use /rollouts');
    if (!sameKey(given, opts.adminKey)) return proxyError(res, 'unauthorized', 'missing or wrong admin key');
    let parsed: Record<string, unknown> = {};
    if (body.length) {
      let value: unknown;
      try {
        value = JSON.parse(body.toString('utf8'));
      } catch {
        return proxyError(res, 'invalid_json', 'the body is not JSON');
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return proxyError(res, 'invalid_json', 'the body must be a JSON object');
      parsed = value as Record<string, unknown>;
    }
    if (req.method === 'POST' && pathname === '/rollouts') {
      const id = typeof parsed.rollout_id === 'string' ? parsed.rollout_id : `ro_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
      if (!validRolloutId(id)) return proxyError(res, 'invalid_rollout', 'rollout_id: letters, digits, . _ - (at most 128)');
      return json(res, 201, { rollout_id: id, api_key: keys.issue(id), base_url: `${url}/v1`, path_base_url: `${url}/r/${id}/v1` });
    }
    const m = pathname.match(/^\/rollouts\/([^/]+)\/(reward|calls)$/);
    if (m) {
      let id: string;
      try {
        id = decodeURIComponent(m[1]);
      } catch {
        return proxyError(res, 'invalid_path', `the rollout in the path is not valid percent-encoding: "${m[1].slice(0, 64)}"`);
      }
      if (!validRolloutId(id)) return proxyError(res, 'invalid_rollout', 'rollout ids: letters, digits, . _ - (at most 128)');
      m[1] = id;
      if (m[2] === 'calls' && req.method === 'GET') return json(res, 200, { calls: readCalls(opts.dir, m[1]) });
      if (m[2] === 'reward' && req.method === 'POST') {
        if (typeof parsed.reward !== 'number' || !Number.isFinite(parsed.reward)) return proxyError(res, 'invalid_reward', 'reward must be a finite number');
        writeReward(opts.dir, m[1], parsed.reward, parsed.info);
        return json(res, 200, { rollout_id: m[1], reward: parsed.reward });
      }
    }
    return proxyError(res, 'not_found', `no admin route ${req.method} ${pathname}`);
  };

  const server = http.createServer((req, res) => {
    const work = (async () => {
      const reqUrl = req.url ?? '/';
      const pathname = reqUrl.split('?')[0];
      if (req.method === 'GET' && pathname === '/health') return json(res, 200, { ok: true });
      // A declared length past the limit is refused before reading (the answer then reaches the client).
      if (Number(req.headers['content-length']) > MAX_BODY) {
        res.setHeader('connection', 'close');
        return proxyError(res, 'body_too_large', `request bodies are limited to ${MAX_BODY} bytes`);
      }
      const body = await readLimitedBody(req, MAX_BODY);
      if (body === null) return proxyError(res, 'body_too_large', `request bodies are limited to ${MAX_BODY} bytes`);
      if (pathname === '/rollouts' || pathname.startsWith('/rollouts/')) return admin(req, res, pathname, body);
      const call = resolveCall(reqUrl, req.headers, keys, opts.rolloutKeys ?? 'required');
      if ('error' in call) return proxyError(res, call.error, call.message);
      await forwardCall({ opts, store }, req, res, call, body);
    })().catch((err: unknown) => {
      log.error({ err }, 'proxy call failed');
      proxyError(res, 'proxy_error', 'the proxy failed on this call; it was not recorded');
    });
    inflight.add(work);
    void work.finally(() => inflight.delete(work));
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => ok());
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host && opts.host !== '0.0.0.0' && opts.host !== '::' ? opts.host : '127.0.0.1';
  url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  log.info({ url, upstream: opts.upstream, dir: opts.dir }, 'recording proxy listening');
  return {
    url,
    baseUrlFor: (rollout) => `${url}/r/${encodeURIComponent(rollout)}/v1`,
    issueKey: (rollout) => keys.issue(rollout),
    store,
    close: async () => {
      await new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeIdleConnections();
      });
      await Promise.allSettled([...inflight]);
      await store.close();
    },
  };
}

/** Attaches an episode's reward to a rollout (read by the sample export). */
export function writeReward(dir: string, rollout: string, reward: number, info?: unknown): void {
  const d = path.join(dir, 'rollouts', rollout);
  mkdirSync(d, { recursive: true });
  writeFileSync(path.join(d, 'reward.json'), JSON.stringify({ reward, info: info ?? null, at: new Date().toISOString() }));
}
