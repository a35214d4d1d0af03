// What both OpenEnv WebSocket routes (/ws sessions, /mcp JSON-RPC) share: a frame's text and the closing of a
// refused or expired connection.
import type { RawData, WebSocket } from 'ws';

/** How long a refused or expired connection stays open for the client's next message (closeAfterNext). */
const CLOSE_GRACE_MS = 2000;

/**
 * Closes after the client's next frame (or a moment): its pending call (a reset, a step) then reads the error
 * already sent as its answer, instead of failing to send on a socket that closed under it.
 */
export function closeAfterNext(ws: WebSocket, graceMs = CLOSE_GRACE_MS): void {
  const timer = setTimeout(() => ws.close(1000), graceMs);
  ws.once('message', () => {
    clearTimeout(timer);
    ws.close(1000);
  });
  ws.once('close', () => clearTimeout(timer));
}

/** A frame as UTF-8 text (binary frames too, as OpenEnv's clients only send text). */
export function textOf(raw: RawData): string {
  return Buffer.isBuffer(raw) ? raw.toString('utf8') : Array.isArray(raw) ? Buffer.concat(raw).toString('utf8') : Buffer.from(raw).toString('utf8');
}
