// A request's logger, built only when something logs through it. Grove logs through the app's logger (never
// request.log), so the pino child fastify makes for every request was work no line used: ~2 % of the server's
// profile samples with 16 sandboxes stepping (bench/core/profile.ts --prof). Fastify's own request-scoped lines
// (e.g. a reply sent twice) still get the child, with its bindings, at the first such line.
import type { FastifyBaseLogger } from 'fastify';

type ChildArgs = Parameters<FastifyBaseLogger['child']>;

/** Its methods live on the prototype: a request that logs nothing costs one small object. */
class LazyChildLogger {
  private made?: FastifyBaseLogger;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: ChildArgs[0],
    private readonly opts: ChildArgs[1],
  ) {}

  private real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.opts));
  }

  private write(name: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent', args: unknown[]): void {
    const r = this.real();
    (r[name] as (...a: unknown[]) => void).apply(r, args);
  }

  get level(): string {
    return this.real().level;
  }
  set level(level: string) {
    this.real().level = level;
  }
  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(...args: unknown[]): void {
    this.write('silent', args);
  }
  child(...args: ChildArgs): FastifyBaseLogger {
    return this.real().child(...args);
  }
}

/** fastify's `childLoggerFactory` option. */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: ChildArgs[0], opts: ChildArgs[1]): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, opts) as unknown as FastifyBaseLogger;
}
