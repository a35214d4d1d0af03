// Small async helpers: every CDP/Playwright call in the sandbox is bounded by one of these (or by the step's
// Deadline, sandbox/deadline.ts, which shares the TimeoutError).
import { TimeoutError } from '../sandbox/deadline.ts';

export { TimeoutError };

/**
 * Races `p` against a timer. The loser is never left floating: a late rejection of `p` is swallowed
 * (the page may answer long after we gave up on it, or its close may reject the pending call).
 */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  p.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(what, ms)), Math.max(1, ms));
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** Resolves after `ms` (for retry backoff and explicit `wait` actions only, never for settling). */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Awaits `p`, turning any error into `undefined` (for best-effort cleanup). */
export async function quietly<T>(p: Promise<T> | undefined): Promise<T | undefined> {
  try {
    return await p;
  } catch {
    return undefined;
  }
}

export function errMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Source text that calls `fn(arg)` in the page. Transpilers (tsx/esbuild keepNames) wrap nested named
 * functions in `__name(...)`, a helper that does not exist in the page: a local shim makes the serialised
 * function run whatever compiled it.
 */
export function inPage<A>(fn: (arg: A) => unknown, arg: A): string {
  return `(() => { const __name = (f) => f; return (${fn.toString()})(${JSON.stringify(arg)}); })()`;
}
