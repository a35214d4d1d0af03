// How the step and observation endpoints put a screenshot on the wire.
// - JSON (default): the base64 is spliced into the stringified body instead of passing through JSON.stringify,
//   which on Node 20 scans the ~300 KB string char by char (measured: ~4 ms of a ~65 ms step). A header gives
//   its byte range, so a client can copy it out instead of parsing it as JSON (client/answer.ts).
// - 'binary': a multipart/mixed answer (RFC 2046) with two parts, the usual JSON body without
//   `screenshot.base64`, then the image bytes. A trainer that decodes images locally skips base64 on both ends
//   (a third fewer bytes on the wire). Any multipart reader parses it (Python: email.parser.BytesParser,
//   requests-toolbelt); the typed client's reader is client/index.ts `parseMultipart`.
import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { ScreenshotMode } from '../protocol/api.ts';
import { SCREENSHOT_SPAN_HEADER } from '../protocol/headers.ts';
import type { Observation } from '../protocol/observation.ts';

const CRLF = '\r\n';
/** Stands in for the base64 while the rest is stringified; random per process, so no page text can forge it. */
const PLACEHOLDER = `grove-base64-${randomBytes(16).toString('hex')}`;

type Send = (reply: FastifyReply, body: object, observation: Observation) => FastifyReply;

/** For a requested mode: what the sandbox captures ('binary' captures as base64) and how the answer is sent. */
export function screenshotAnswer(mode: ScreenshotMode | undefined): { capture: 'base64' | 'none' | undefined; send: Send } {
  if (mode === 'binary') return { capture: 'base64', send: sendBinaryScreenshot };
  return { capture: mode, send: sendJsonScreenshot };
}

/**
 * Sends `body` as JSON with the screenshot's base64 spliced in after stringifying the rest: base64 never needs
 * escaping, so JSON.stringify need not scan its ~300 KB (measurable per step on Node 20), and the answer is
 * byte-for-byte what `reply.send(body)` would send.
 */
export function sendJsonScreenshot(reply: FastifyReply, body: object, observation: Observation): FastifyReply {
  const shot = observation.screenshot;
  // The base64 comes from Chromium (CDP returns base64) or Buffer#toString('base64'): never a quote or backslash.
  if (!shot?.base64) return reply.send(body);
  const lean = withScreenshot(body, observation, { ...shot, base64: PLACEHOLDER });
  const json = JSON.stringify(lean);
  const at = json.indexOf(`"${PLACEHOLDER}"`);
  if (at < 0) return reply.send(body);
  // One buffer written in place, the base64 copied as latin1 (its bytes as they are): cheaper than Node encoding
  // a ~300 KB joined string as UTF-8 at the socket, and no intermediate copies for the GC.
  const pre = json.slice(0, at + 1);
  const post = json.slice(at + 1 + PLACEHOLDER.length);
  const preLen = Buffer.byteLength(pre);
  const payload = Buffer.allocUnsafe(preLen + shot.base64.length + Buffer.byteLength(post));
  payload.write(pre, 0, 'utf8');
  payload.write(shot.base64, preLen, 'latin1');
  payload.write(post, preLen + shot.base64.length, 'utf8');
  // Where the base64 sits in the body: a client can skip parsing it as JSON (see SCREENSHOT_SPAN_HEADER).
  reply.header(SCREENSHOT_SPAN_HEADER, `${preLen} ${preLen + shot.base64.length}`);
  return reply.type('application/json; charset=utf-8').send(payload);
}

/** A shallow copy of `body` whose observation carries `screenshot` (the sandbox's objects stay untouched). */
function withScreenshot(body: object, observation: Observation, screenshot: Observation['screenshot']): object {
  return body === observation ? { ...observation, screenshot } : { ...body, observation: { ...observation, screenshot } };
}

/**
 * Sends `body` as multipart/mixed when `observation` carries a base64 screenshot; otherwise as plain JSON
 * (nothing was captured: there is no image part to send). `observation` is the object inside `body` that
 * holds the screenshot (the body itself for the observation endpoint).
 */
export function sendBinaryScreenshot(reply: FastifyReply, body: object, observation: Observation): FastifyReply {
  const shot = observation.screenshot;
  if (!shot?.base64) return reply.send(body);
  const image = Buffer.from(shot.base64, 'base64');
  const { base64: _dropped, ...meta } = shot;
  const lean = withScreenshot(body, observation, meta);
  // 192 random bits: the chance that image bytes contain the delimiter is nil (RFC 2046 §5.1.1).
  const boundary = `grove-${randomBytes(24).toString('hex')}`;
  const json = Buffer.from(JSON.stringify(lean));
  const head = (type: string, length: number) =>
    Buffer.from(`--${boundary}${CRLF}Content-Type: ${type}${CRLF}Content-Length: ${length}${CRLF}${CRLF}`);
  const payload = Buffer.concat([
    head('application/json', json.length), json, Buffer.from(CRLF),
    head(shot.mime, image.length), image, Buffer.from(`${CRLF}--${boundary}--${CRLF}`),
  ]);
  return reply.type(`multipart/mixed; boundary=${boundary}`).send(payload);
}
