// Reading a request body with a size limit, for the small HTTP servers beside the REST service (the Claw app
// origins, the recording proxy): over the limit, the request is destroyed and the caller answers 413.
import type http from 'node:http';

/** The whole body, or null when it passed `max` bytes (the request is then destroyed). */
export function readLimitedBody(req: http.IncomingMessage, max: number): Promise<Buffer | null> {
  return new Promise((ok, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        ok(null);
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => ok(Buffer.concat(chunks)));
    req.on('error', fail);
  });
}
