// Closes the server-side contexts Playwright orphans when a browser dies while they are being created.
//
// playwright-core 1.65 (in-process server) builds a Chromium context object as soon as Chromium answered
// `Target.createBrowserContext`, and registers it in the browser's context map only after its initialization.
// The object's request context joins a static registry of every request context at construction and leaves it when
// the context emits `close`. A browser that dies between the two steps fails the initialization; its `didClose` closes
// the contexts in its map, but not that one: it stays "open" forever, and through it the registry keeps the dead
// browser alive with every context, page and CDP session it had. The pool creates contexts all the time (the warm
// pool, replacements), so every browser death left some: the soak's heap snapshots found 3 of 35 killed browsers
// held this way, and plain playwright-core reproduces it (kill a browser with `newContext()` calls in flight).
//
// Nothing public reaches those objects. The in-process client connection has `toImpl` (client object → server
// object), which is enough to find the registry from a live context and, after a browser died, to close what it
// left through Playwright's own path for a context whose browser closed (`browserClosed()`). Every step checks the
// shape it expects and does nothing otherwise, so a Playwright upgrade that fixes or renames this degrades to the
// leak, never to an error; test/browser-env/pool.slow.test.ts counts the server's context objects to catch that.
import type { Browser, BrowserContext } from 'playwright-core';

/** A server-side Playwright object, reached through the in-process connection; shapes are checked at each use. */
type ServerObject = Record<string, unknown>;

let requestContexts: Set<ServerObject> | undefined;
/** Client browser → its server object, taken while the browser is alive (a dead browser's is no longer reachable). */
const serverBrowsers = new WeakMap<Browser, ServerObject>();

function serverSide(clientObject: Browser | BrowserContext): ServerObject | undefined {
  const connection = (clientObject as unknown as { _connection?: { toImpl?: (o: unknown) => unknown } })._connection;
  if (typeof connection?.toImpl !== 'function') return undefined;
  try {
    const impl = connection.toImpl(clientObject);
    return impl && typeof impl === 'object' ? (impl as ServerObject) : undefined;
  } catch {
    return undefined; // not an in-process connection, or the object is already gone on the server
  }
}

/** Remembers a live browser's server object, so its orphans can be found after it died. Idempotent. */
export function watch(browser: Browser): void {
  if (serverBrowsers.has(browser)) return;
  const impl = serverSide(browser);
  if (impl) serverBrowsers.set(browser, impl);
}

/** Finds Playwright's registry of request contexts through a live context (once per process). */
export function learnFrom(context: BrowserContext): void {
  if (requestContexts) return;
  const fetchRequest = serverSide(context)?.fetchRequest;
  let ctor: unknown = fetchRequest && typeof fetchRequest === 'object' ? fetchRequest.constructor : undefined;
  while (typeof ctor === 'function' && ctor !== Function.prototype) {
    const registry: unknown = Object.hasOwn(ctor, 'allInstances') ? (ctor as { allInstances?: unknown }).allInstances : undefined;
    if (registry instanceof Set) {
      requestContexts = registry as Set<ServerObject>;
      return;
    }
    ctor = Object.getPrototypeOf(ctor);
  }
}

/**
 * Closes the server-side contexts of a disconnected browser that Playwright never closed. The browser must have been
 * `watch()`ed while alive. Call it once creations in flight on it have settled (again later is harmless). Returns
 * how many it closed.
 */
export function closeOrphanedContexts(browser: Browser): number {
  const impl = serverBrowsers.get(browser);
  if (!impl || !requestContexts || typeof impl.isConnected !== 'function' || impl.isConnected.call(impl)) return 0;
  let closed = 0;
  for (const request of [...requestContexts]) {
    const context = request._context as ServerObject | undefined;
    if (!context || context._browser !== impl || context._closedStatus === 'closed') continue;
    if (typeof context.browserClosed !== 'function') continue;
    context.browserClosed.call(context);
    closed++;
  }
  return closed;
}
