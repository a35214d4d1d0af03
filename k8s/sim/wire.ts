// The simulated API server's wire pieces: v1 Status failures as the real server answers them, request bodies,
// timestamps at the API's one-second precision, and the contract the resource handlers answer through.
import type http from 'node:http';

export type Obj = Record<string, any>;

/** What a resource handler (pods, leases) needs of the server around it. */
export interface SimWire {
  /** Answers `body` (validated against the Kubernetes schema unless validation is off). */
  send(res: http.ServerResponse, code: number, body: Obj, headers?: Record<string, string>): void;
  /** Counts a request by "VERB kind". */
  note(key: string): void;
  /** Validates an object the server stores, collecting violations. */
  check(obj: Obj, what: string): void;
  /** Advances the server's resourceVersion and returns it. */
  nextRv(): string;
  /** The server's current resourceVersion (for lists). */
  currentRv(): string;
}

/** A v1 Status failure, as the real server sends with every error code. */
export function failure(code: number, reason: string, message: string, details?: Obj): Obj {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
}

export async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** An RFC 3339 time without fractional seconds, as Kubernetes writes its timestamps. */
export function k8sTime(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}
