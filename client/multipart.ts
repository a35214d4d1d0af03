// Binary answers of the Grove API (`screenshot: "binary"`): a multipart/mixed body of the JSON result and the image.

/** A step or observation answered with `screenshot: "binary"`. */
export interface BinaryAnswer<T> {
  result: T;
  image: { mime: string; bytes: Uint8Array } | null;
}

/**
 * Splits a multipart/mixed body (RFC 2046) into its parts. Uses each part's Content-Length when given
 * (Grove always sends it, so image bytes are never scanned), else the next delimiter.
 */
export function parseMultipart(body: Uint8Array, contentType: string): { type: string; body: Uint8Array }[] {
  const m = /boundary="?([^";]+)"?/i.exec(contentType);
  if (!m) throw new Error('multipart answer without a boundary');
  const enc = new TextEncoder();
  const delim = enc.encode(`--${m[1]}`);
  const find = (needle: Uint8Array, from: number): number => {
    outer: for (let i = from; i <= body.length - needle.length; i++) {
      for (let j = 0; j < needle.length; j++) if (body[i + j] !== needle[j]) continue outer;
      return i;
    }
    return -1;
  };
  const crlfcrlf = enc.encode('\r\n\r\n');
  const parts: { type: string; body: Uint8Array }[] = [];
  let at = find(delim, 0);
  if (at < 0) throw new Error('no multipart delimiter in the answer');
  for (;;) {
    at += delim.length;
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return parts; // "--": the closing delimiter
    const headEnd = find(crlfcrlf, at);
    if (headEnd < 0) throw new Error('a multipart part has no header end');
    const headers = new TextDecoder().decode(body.subarray(at, headEnd));
    const start = headEnd + 4;
    const len = /^content-length:\s*(\d+)\s*$/im.exec(headers);
    let end: number;
    if (len) {
      end = start + Number(len[1]);
      at = find(delim, end);
    } else {
      at = find(delim, start);
      end = at - 2; // the CRLF before the delimiter belongs to it
    }
    if (at < 0 || end > body.length) throw new Error('a multipart part is cut short');
    parts.push({ type: /^content-type:\s*(.+?)\s*$/im.exec(headers)?.[1] ?? 'text/plain', body: body.subarray(start, end) });
  }
}
