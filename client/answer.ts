// Reading a JSON answer. A step or observation answer with a screenshot names the byte range of the screenshot's
// base64 in its body (SCREENSHOT_SPAN_HEADER): the ~200 KB of base64 is copied out as it is and only the rest
// (~2 KB) is parsed as JSON. Parsing the whole body, UTF-8 decoding then JSON-scanning the base64, was ~30 % of
// this client's CPU per step at 16 sessions (bench/core/profile.ts --self).
import { SCREENSHOT_SPAN_HEADER } from '../protocol/headers.ts';

/** What precedes the base64 in the body: the span is checked against it before it is trusted. */
const KEY = Buffer.from('"base64":"');

/**
 * The parsed answer. With a span that checks out (the key before it, a quote after it, a screenshot with an empty
 * base64 once it is cut out) only the rest is parsed; anything else, e.g. a body rewritten on the way, is parsed
 * whole, as without the header.
 */
export function parseAnswer<T>(body: Buffer, span: string | null): T {
  const at = span === null ? null : spanOf(body, span);
  if (at) {
    const [start, end] = at;
    const parsed = JSON.parse(Buffer.concat([body.subarray(0, start), body.subarray(end)]).toString('utf8')) as {
      observation?: { screenshot?: { base64?: string } };
      screenshot?: { base64?: string };
    };
    const shot = (parsed.observation ?? parsed).screenshot;
    if (shot?.base64 === '') {
      // latin1: each byte becomes one character, which base64 text is (no UTF-8 decoding pass).
      shot.base64 = body.toString('latin1', start, end);
      return parsed as T;
    }
  }
  return JSON.parse(body.toString('utf8')) as T;
}

function spanOf(body: Buffer, span: string): [number, number] | null {
  const m = /^(\d+) (\d+)$/.exec(span);
  if (!m) return null;
  const start = Number(m[1]);
  const end = Number(m[2]);
  if (start < KEY.length || end < start || end >= body.length || body[end] !== 0x22) return null;
  return body.subarray(start - KEY.length, start).equals(KEY) ? [start, end] : null;
}
