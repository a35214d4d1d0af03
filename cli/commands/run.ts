// `grove run`: argument checking here; the heavy implementation (server, browser, judges) is imported on demand.
import { showUsage, STDIO, usageError } from '../args.ts';
import type { Command } from '../command.ts';
import { parseRunArgs, RUN_USAGE } from './run-args.ts';

export const run: Command = {
  name: 'run',
  summary: 'Run a benchmark suite (offline, WebVoyager, Online-Mind2Web, DeepShop) with a policy and judges',
  usage: RUN_USAGE,
  async run(argv) {
    const parsed = parseRunArgs(argv);
    if (!parsed.ok) {
      const u = { usage: RUN_USAGE, io: STDIO, name: 'run' };
      return parsed.help ? showUsage(u) : usageError(u, parsed.error);
    }
    const { executeRun, printRunResult, stdio } = await import('./run-exec.ts');
    // Ctrl-C: stop starting episodes, abort the running ones, still write the summary (resume picks up later).
    const ctl = new AbortController();
    const onSig = () => ctl.abort('interrupted (SIGINT)');
    process.once('SIGINT', onSig);
    try {
      const r = await executeRun(parsed.args, stdio, { signal: ctl.signal });
      printRunResult(r, stdio);
      return ctl.signal.aborted ? 130 : 0;
    } catch (err) {
      process.stderr.write(`grove run: ${(err as Error).stack ?? String(err)}\n`);
      return 1;
    } finally {
      process.off('SIGINT', onSig);
    }
  },
};
