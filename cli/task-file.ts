// A command reading a suite's task file: tasks/ loads on demand (so `grove --help` stays fast), and a file that
// cannot be used at all (missing, not JSON, wrong shape) is one line on stderr and exit code 1.
import type { Suite } from '../protocol/task.ts';
import type { LoadOptions, LoadResult, TaskFilter } from '../tasks/index.ts';
import type { CommandIO } from './args.ts';

/** The loaded file, or 1 after `grove <command>: <message> [<code>]` on stderr. Other errors propagate. */
export async function loadTaskFile(io: CommandIO, command: string, suite: Suite, file: string, opts: LoadOptions & { filter?: TaskFilter } = {}): Promise<LoadResult | 1> {
  const { loadTasks, TaskFileError } = await import('../tasks/index.ts');
  try {
    return await loadTasks(suite, file, opts);
  } catch (err) {
    if (err instanceof TaskFileError) {
      io.err(`grove ${command}: ${err.message} [${err.code}]\n`);
      return 1;
    }
    throw err;
  }
}
