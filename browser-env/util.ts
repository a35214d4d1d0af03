// Small async helpers. Every CDP/Playwright call in the sandbox is bounded by a Progress (sandbox/progress.ts):
// the step's, handed down, or one of its own for work outside a step.
import { TimeoutError } from '../sandbox/progress.ts';

export { TimeoutError };

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

/**
 * `f()` started on a fresh stack (the loop's next check phase) instead of at the end of the step's await chain.
 * Playwright captures a stack for every API call (Error.stack, up to 50 frames with the async ones, each
 * source-mapped in a process running under tsx, then parsed): from inside a step that is the whole chain of
 * route → sandbox → pipeline → observer, from here two frames (issue 35: the step path's Node CPU per step).
 * An error of `f` keeps its message, name and class; its stack lacks the step's frames.
 */
export function onFreshStack<T>(f: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    setImmediate(() => {
      try {
        f().then(resolve, reject);
      } catch (e) {
        reject(e);
      }
    });
  });
}
