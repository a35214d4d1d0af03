// Starting the REST service from the command line, as `grove serve` and `grove worker` both do: serve's flags over
// the layered config, the command's own checks, the server started, signal handlers in place before "listening on"
// is printed (a supervisor that stops the server on reading that line gets a clean shutdown), then run until
// SIGINT/SIGTERM. Exit codes: 0 after a clean shutdown, 1 when the server failed, 2 on bad options or settings,
// 130 on a forced stop.
import { ConfigError, loadConfig, readEnvSetting, type GroveConfig } from '../../sandbox/config.ts';
import type { StartServerOptions } from '../../server/server.ts';
import { parseServeArgs } from './serve-args.ts';

export interface Startup {
  /** The command's name, for its messages ("grove <name>: …"). */
  name: string;
  /** Throws ConfigError for settings the command refuses. */
  check?(config: GroveConfig): void;
  /** Server options that depend on the settings (e.g. the kubernetes backend's environments). */
  serverOptions?(config: GroveConfig): Promise<StartServerOptions>;
  /** What the "listening on" line adds after the URL. */
  banner?(config: GroveConfig): string;
}

export async function runServer(argv: string[], s: Startup): Promise<number> {
  let config: GroveConfig;
  try {
    const args = parseServeArgs(argv);
    config = loadConfig({ flags: args.flags, configFile: args.configFile });
    s.check?.(config);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`grove ${s.name}: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  // tsx turns on source-mapped stack traces; Playwright captures a stack on every API call, so mapping them
  // cost ~0.6 ms of server CPU per step (measured with --cpu-prof). Stacks in a serving process keep the
  // transpiled positions unless GROVE_SOURCE_MAPS=1.
  if (readEnvSetting('GROVE_SOURCE_MAPS') !== '1') process.setSourceMapsEnabled(false);
  // Loaded here so `grove --help` and option errors do not pay for fastify and Playwright.
  const { closeOnSignal, startServer } = await import('../../server/server.ts');
  let server;
  try {
    server = await startServer(config, (await s.serverOptions?.(config)) ?? {});
  } catch (err) {
    process.stderr.write(`grove ${s.name}: could not start: ${(err as Error).message}\n`);
    return err instanceof ConfigError ? 2 : 1;
  }
  const closed = closeOnSignal(server);
  const extra = s.banner?.(config);
  process.stderr.write(`grove ${s.name}: listening on ${server.url}${extra ? ` (${extra})` : ''}\n`);
  const { forced } = await closed;
  return forced ? 130 : 0;
}
