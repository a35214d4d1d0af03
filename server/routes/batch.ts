// Batch create: many sandboxes in one request, every id answered at once (an RL trainer starting a group).
import { z } from 'zod';
import { GroveError } from '../../protocol/errors.ts';
import { CreateSandboxBody, SandboxInfo } from '../../protocol/sandbox.ts';
import { defineRoute } from '../route.ts';
import { errorResponses } from './common.ts';
import { createOne } from './sandboxes.ts';

const BatchCreateBody = z
  .object({
    count: z.number().int().min(1).max(256).optional().describe('how many sandboxes like `sandbox` to create'),
    sandbox: CreateSandboxBody.optional().describe('the options of every sandbox (with `count`)'),
    sandboxes: z.array(CreateSandboxBody).min(1).max(256).optional().describe('one options object per sandbox (instead of count + sandbox)'),
  })
  .strict()
  .superRefine((b, ctx) => {
    const list = b.sandboxes !== undefined;
    const counted = b.count !== undefined || b.sandbox !== undefined;
    if (list === counted) ctx.addIssue({ code: 'custom', path: [], message: 'give either "count" with "sandbox", or "sandboxes" (a list)' });
    else if (counted && (b.count === undefined || b.sandbox === undefined)) {
      ctx.addIssue({ code: 'custom', path: [b.count === undefined ? 'count' : 'sandbox'], message: '"count" and "sandbox" go together' });
    }
  });

const BatchCreateResult = z.object({ sandboxes: z.array(SandboxInfo) });

export const createSandboxes = defineRoute({
  id: 'createSandboxes',
  method: 'POST',
  url: '/sandboxes/batch',
  summary: 'Create several sandboxes at once',
  description:
    'Creates `count` sandboxes like `sandbox`, or one per entry of `sandboxes`, and answers every sandbox info at once ' +
    '(in request order). All or nothing: when the live-sandbox limit would be passed, none is created (503 ' +
    'capacity_exhausted with Retry-After) and any already started are deleted again.',
  tags: ['sandboxes'],
  body: BatchCreateBody,
  responses: { 201: { description: 'Sandboxes accepted', schema: BatchCreateResult }, ...errorResponses(400, 401, 403, 503) },
  async handler({ body, reply, ctx }) {
    const specs = body.sandboxes ?? Array.from({ length: body.count ?? 0 }, () => body.sandbox as CreateSandboxBody);
    const room = ctx.config.maxSandboxes - ctx.registry.liveCount();
    if (specs.length > ctx.config.maxSandboxes) {
      throw new GroveError('invalid_request', `A batch of ${specs.length} exceeds this server's limit of ${ctx.config.maxSandboxes} live sandboxes.`);
    }
    if (specs.length > room) {
      throw new GroveError('capacity_exhausted', `A batch of ${specs.length} does not fit: ${Math.max(0, room)} of ${ctx.config.maxSandboxes} live sandboxes are free.`, {
        retryAfter: 1,
      });
    }
    const created: SandboxInfo[] = [];
    try {
      for (const spec of specs) created.push(await createOne(ctx, spec));
    } catch (err) {
      // All or nothing: a failure part-way (a bad recording option, a race for the last slots) undoes the rest.
      await Promise.all(created.map((c) => ctx.registry.delete(c.sandbox_id).catch(() => undefined)));
      throw err;
    }
    reply.code(201);
    return { sandboxes: created };
  },
});
