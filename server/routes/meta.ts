// Service routes: health (no auth), Prometheus metrics, the OpenAPI document.
import { z } from 'zod';
import { Health } from '../../protocol/api.ts';
import { defineRoute } from '../route.ts';
import { errorResponses } from './common.ts';

const health = defineRoute({
  id: 'health',
  method: 'GET',
  url: '/health',
  summary: 'Liveness (no API key needed)',
  tags: ['service'],
  auth: false,
  responses: { 200: { description: 'Serving', schema: Health }, 503: { description: 'Shutting down', schema: Health } },
  async handler({ reply, ctx }) {
    const down = ctx.registry.isShuttingDown;
    reply.code(down ? 503 : 200);
    return {
      status: down ? 'shutting_down' : 'ok',
      version: ctx.version,
      uptime_s: Math.round((Date.now() - ctx.startedAt) / 1000),
      sandboxes: ctx.registry.liveCount(),
    } satisfies Health;
  },
});

const metrics = defineRoute({
  id: 'metrics',
  method: 'GET',
  url: '/metrics',
  summary: 'Prometheus metrics',
  tags: ['service'],
  responses: { 200: { description: 'Prometheus text format 0.0.4', contentType: 'text/plain' }, ...errorResponses(401, 403) },
  async handler({ reply, ctx }) {
    reply.header('content-type', 'text/plain; version=0.0.4; charset=utf-8');
    return ctx.metrics.render(ctx.registry, ctx.registry.backend);
  },
});

const openapi = defineRoute({
  id: 'openapi',
  method: 'GET',
  url: '/openapi.json',
  summary: 'This OpenAPI 3.1 document',
  tags: ['service'],
  responses: { 200: { description: 'OpenAPI document', schema: z.record(z.string(), z.unknown()) }, ...errorResponses(401, 403) },
  async handler({ ctx }) {
    return ctx.openapi();
  },
});

export const metaRoutes = [health, metrics, openapi];
