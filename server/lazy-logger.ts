// A request's logger, built only when something logs through it. Grove logs through the app's logger (never
// request.log), so the pino child fastify makes for every request was work no line used: ~2 % of the server's
// profile samples with 16 sandboxes stepping (bench/core/profile.ts --prof). Fastify's own request-scoped lines
// (e.g. a reply sent twice) still get the child, with its bindings, at the first such line.
import type { FastifyBaseLogger } from 'fastify';

type LogFn = FastifyBaseLogger['info'];

type ChildArgs = Parameters<FastifyBaseLogger['child']>;

/** fastify's `childLoggerFactory` option. */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: ChildArgs[0], opts: ChildArgs[1]): FastifyBaseLogger {
  let child: FastifyBaseLogger | undefined;
  const real = () => (child ??= logger.child(bindings, opts));
  const method = (name: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'): LogFn =>
    ((...args: Parameters<LogFn>) => real()[name](...args)) as LogFn;
  return {
    get level() {
      return real().level;
    },
    set level(level: string) {
      real().level = level;
    },
    fatal: method('fatal'),
    error: method('error'),
    warn: method('warn'),
    info: method('info'),
    debug: method('debug'),
    trace: method('trace'),
    silent: method('silent'),
    child: (b, o) => real().child(b, o),
  } as FastifyBaseLogger;
}
