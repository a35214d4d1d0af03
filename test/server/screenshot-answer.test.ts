// The two screenshot encodings of the step/observation answers, through a real fastify instance.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseAnswer } from '../../client/answer.ts';
import { parseMultipart } from '../../client/index.ts';
import { SCREENSHOT_SPAN_HEADER } from '../../protocol/headers.ts';
import type { Observation, StepResult } from '../../protocol/observation.ts';
import { sendBinaryScreenshot, sendJsonScreenshot } from '../../server/screenshot-answer.ts';

const image = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 37) % 256));
const observation = (base64?: string): Observation => ({
  step: 3,
  // Text a page controls: quotes, backslashes, unicode, line breaks, and something that looks like a placeholder.
  url: 'http://example.test/?q="grove-base64-00"&x=\\u0000',
  title: 'Ünïcødé "quoted" \\ back\nslash 🚀 grove-base64-',
  tabs: [{ index: 0, url: 'http://example.test/', title: 't', active: true }],
  viewport: { width: 800, height: 600 },
  last_action_error: null,
  events: [],
  timings: { action: 1, settle: 0, capture: 2, encode: 0, total: 3 },
  ...(base64 === undefined ? {} : { screenshot: { mime: 'image/jpeg', width: 800, height: 600, base64, scale: 1, scale_x: 1, scale_y: 1 } }),
});
const step = (obs: Observation): StepResult => ({ observation: obs, actions: [], done: false });

let app: FastifyInstance;
let current: { body: object; obs: Observation };
beforeAll(async () => {
  app = Fastify();
  app.get('/json', (_req, reply) => sendJsonScreenshot(reply, current.body, current.obs));
  app.get('/binary', (_req, reply) => sendBinaryScreenshot(reply, current.body, current.obs));
  await app.ready();
});
afterAll(() => app.close());

describe('screenshot answers', () => {
  it('JSON: byte-for-byte what JSON.stringify gives, for a step and for a bare observation', async () => {
    for (const body of [step(observation(image.toString('base64'))), observation(image.toString('base64'))]) {
      current = { body, obs: 'observation' in body ? body.observation : body };
      const res = await app.inject({ method: 'GET', url: '/json' });
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toBe(JSON.stringify(body));
      // The sandbox's own object is untouched.
      expect(current.obs.screenshot?.base64).toBe(image.toString('base64'));
    }
  });

  it('JSON: the span header is the byte range of the base64, and the client reads the same answer through it', async () => {
    const b64 = image.toString('base64');
    for (const body of [step(observation(b64)), observation(b64)]) {
      current = { body, obs: 'observation' in body ? body.observation : body };
      const res = await app.inject({ method: 'GET', url: '/json' });
      const span = String(res.headers[SCREENSHOT_SPAN_HEADER]);
      const [start, end] = span.split(' ').map(Number);
      expect(res.rawPayload.toString('latin1', start, end)).toBe(b64);
      // Multi-byte text (the title) comes before the base64: the range is in bytes, not characters.
      expect(res.rawPayload.length).toBeGreaterThan(res.body.length);
      // Read through the span: what JSON.parse saw is the body without the base64.
      const parse = vi.spyOn(JSON, 'parse');
      expect(parseAnswer(res.rawPayload, span)).toEqual(body);
      expect(parse.mock.calls.map((c) => String(c[0]).length)).toEqual([res.body.length - b64.length]);
      parse.mockRestore();
    }
  });

  it('client: a span that does not check out (wrong range, rewritten body, no header) parses the whole body', async () => {
    const b64 = image.toString('base64');
    const body = step(observation(b64));
    current = { body, obs: body.observation };
    const res = await app.inject({ method: 'GET', url: '/json' });
    const [start, end] = String(res.headers[SCREENSHOT_SPAN_HEADER]).split(' ').map(Number);
    for (const span of [null, `${start + 1} ${end}`, `${start} ${end - 1}`, `${start} ${end + 10 ** 9}`, 'x y', `${end} ${start}`]) {
      expect(parseAnswer(res.rawPayload, span)).toEqual(body);
    }
    // Re-serialized with indentation on the way (a proxy): the offsets no longer fit; the answer is still right.
    const pretty = Buffer.from(JSON.stringify(body, null, 2));
    expect(parseAnswer(pretty, `${start} ${end}`)).toEqual(body);
    // The base64 span of another screenshot-less body: nothing to cut out there either.
    const plain = Buffer.from(JSON.stringify(step(observation())));
    expect(parseAnswer(plain, `${start} ${end}`)).toEqual(step(observation()));
  });

  it('JSON without a screenshot is the plain body', async () => {
    const body = step(observation());
    current = { body, obs: body.observation };
    const res = await app.inject({ method: 'GET', url: '/json' });
    expect(JSON.parse(res.body)).toEqual(body);
    expect(res.headers[SCREENSHOT_SPAN_HEADER]).toBeUndefined();
  });

  it('binary: the JSON part lacks only the base64; the image part is the bytes', async () => {
    const body = step(observation(image.toString('base64')));
    current = { body, obs: body.observation };
    const res = await app.inject({ method: 'GET', url: '/binary' });
    const parts = parseMultipart(new Uint8Array(res.rawPayload), String(res.headers['content-type']));
    expect(parts.map((p) => p.type)).toEqual(['application/json', 'image/jpeg']);
    const { base64: _b, ...meta } = body.observation.screenshot!;
    expect(JSON.parse(new TextDecoder().decode(parts[0].body))).toEqual({ ...body, observation: { ...body.observation, screenshot: meta } });
    expect(Buffer.from(parts[1].body).equals(image)).toBe(true);
    expect(body.observation.screenshot?.base64).toBe(image.toString('base64'));
  });

  it('binary without a screenshot falls back to plain JSON', async () => {
    const body = observation();
    current = { body, obs: body };
    const res = await app.inject({ method: 'GET', url: '/binary' });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.body)).toEqual(body);
  });
});
