// `grove run`: argument checking here; the heavy implementation (server, browser, judges) is imported on demand.
import { showUsage, STDIO, usageError } from '../args.ts';
import type { Command } from '../command.ts';
import { parseRunArgs, RUN_USAGE } from './run-args.ts';
import type { RunSummary } from '../../runner/types.ts';

/** Why a finished run did no work at all: every episode ended on the policy's API or the environment; else null. */
export function runBroken(s: Pick<RunSummary, 'finished' | 'termination_reasons'>): string | null {
  const count = (r: string) => s.termination_reasons[r] ?? 0;
  const gen = count('generation_error');
  const infra = count('env_error') + count('website_error');
  if (s.finished === 0 || gen + infra < s.finished) return null;
  return `every episode failed before the model could act (${[gen && `generation_error=${gen}`, infra && `env_error/website_error=${infra}`].filter(Boolean).join(', ')}): see the report`;
}

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
      if (ctl.signal.aborted) return 130;
      const broken = runBroken(r.summary);
      if (broken) process.stderr.write(`grove run: ${broken}\n`);
      return broken ? 1 : 0;
    } catch (err) {
      // A run that could not start (an endpoint down, no tasks) is its message; anything else is a bug: its stack.
      const { RunStopped } = await import('./run-preflight.ts');
      process.stderr.write(`grove run: ${err instanceof RunStopped ? err.message : ((err as Error).stack ?? String(err))}\n`);
      return 1;
    } finally {
      process.off('SIGINT', onSig);
    }
  },
};
