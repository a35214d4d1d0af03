// Library code logs through this interface (pino-compatible: fastify's logger fits it); never console.
export interface Logger {
  debug(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
  /** Whether lines at `level` are written (pino has it): a caller can skip building a record nobody reads. */
  isLevelEnabled?(level: string): boolean;
}

const noop = () => {};
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop, isLevelEnabled: () => false };
