// Where a remote sandbox runs and how the backend gives it one: its placement (pod, address, token), the driver the
// backend implements (place, release, started), attaching to a sandbox another replica created, and worker errors
// mapped onto the error catalog. remote-sandbox.ts is the relay that uses them.
import type { RemoteSandbox } from './remote-sandbox.ts';
import { GroveApiError } from '../client/index.ts';
import { ERROR_CATALOG, GroveError, type ErrorCode } from '../protocol/errors.ts';
import { reachFailure } from './worker-http.ts';

/** Where a placed sandbox runs. */
export interface Placement {
  pod: string;
  url: string;
  token: string;
}

/** The backend's side of a remote sandbox: finding it a worker, and giving the worker back. */
export interface PlacementDriver {
  /** Finds (claims or creates) a worker and waits until it is ready; rejects with a GroveError. */
  place(sandbox: RemoteSandbox): Promise<Placement>;
  /** The sandbox is gone from the worker (or never reached it): free its slot / pod. */
  release(sandbox: RemoteSandbox, placement: Placement | null): Promise<void>;
  /** Milliseconds left for the worker to create its sandbox. */
  readyDeadline(): number;
  /** The worker created the sandbox (its id there): recorded before the sandbox counts as ready. */
  started?(sandbox: RemoteSandbox, workerId: string): Promise<void>;
  /** The install's pod network (a paired shell's worker is told it). */
  readonly podNetwork?: 'deny' | 'internet';
}

/** A sandbox another replica created: where it runs, learnt from its record (k8s/records.ts) — at once, or once
 * the replica creating it recorded it ready. */
export type Attached = { placement: Placement; workerId: string };
export type Attach = Attached | ((signal: AbortSignal) => Promise<Attached>);

/** Maps an error from a worker call onto the error catalog (the worker speaks the same API). */
export function workerError(err: unknown, pod: string): GroveError {
  if (err instanceof GroveError) return err;
  if (err instanceof GroveApiError) {
    if (err.status === 0) return new GroveError('worker_lost', `Worker pod ${pod} cannot be reached (${reachFailure(err)}).`, { cause: err });
    if (err.code in ERROR_CATALOG) return new GroveError(err.code as ErrorCode, err.message, { cause: err, retryAfter: err.retryAfter });
  }
  return new GroveError('internal_error', undefined, { cause: err });
}
