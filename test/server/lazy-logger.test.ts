// The request logger fastify gets from server/lazy-logger.ts: no pino child until a line is written through
// it, then one child with the request's bindings; and the app's per-request debug line only at debug level.
import { Writable } from 'node:stream';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { lazyChildLogger } from '../../server/lazy-logger.ts';
import { MemoryBackend } from '../sandbox/memory-backend.ts';

function sink(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({ write(c, _e, done) { chunks.push(String(c)); done(); } });
  return { stream, lines: () => chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
}

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => { for (const c of closers.splice(0)) await c(); });

describe('lazyChildLogger', () => {
  it('makes the child at the first line, once, with the bindings and options it was given', () => {
    const out = sink();
    // fastify's own pino logger, as the app has it.
    const parent: FastifyBaseLogger = Fastify({ logger: { level: 'info', stream: out.stream } }).log;
    const child = parent.child.bind(parent);
    let made = 0;
    parent.child = ((b, o) => { made++; return child(b, o); }) as FastifyBaseLogger['child'];
    const log = lazyChildLogger(parent, { reqId: 'req-7' }, { level: 'warn' });
    expect(made).toBe(0);
    log.info({ a: 1 }, 'below the child level');
    expect(made).toBe(1);
    log.warn({ a: 2 }, 'written');
    log.error('also written');
    expect(made).toBe(1);
    expect(log.level).toBe('warn');
    expect(out.lines().map((l) => [l.reqId, l.msg, l.a])).toEqual([['req-7', 'written', 2], ['req-7', 'also written', undefined]]);
  });
});

describe('the app with its logger on', () => {
  for (const [level, written] of [['debug', 1], ['info', 0]] as const) {
    it(`writes the per-request line at ${level}: ${written}`, async () => {
      const out = sink();
      const config = loadConfig({ env: {}, flags: { apiKey: 'k-lazy-logger-1', logLevel: level } });
      const app = await buildApp({ config, backend: new MemoryBackend(), logger: true, logStream: out.stream });
      closers.push(() => app.close());
      const res = await app.inject({ method: 'GET', url: '/sandboxes', headers: { 'x-api-key': 'k-lazy-logger-1' } });
      expect(res.statusCode).toBe(200);
      const lines = out.lines().filter((l) => l.msg === 'request');
      expect(lines).toHaveLength(written);
      if (written) expect(lines[0]).toMatchObject({ method: 'GET', url: '/sandboxes', status: 200 });
    });
  }
});
