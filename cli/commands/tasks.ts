// `grove tasks list`: print normalised tasks of a suite file, one JSON per line, problems on stderr.
import { FILTER_OPTIONS, intOption, listFilters, options, parseCommandArgs, STDIO, usageError, valueError, type CommandIO } from '../args.ts';
import type { Command } from '../command.ts';
import { loadTaskFile } from '../task-file.ts';
import type { TaskFilter } from '../../tasks/index.ts';

// The loaders load on demand, so `grove --help` stays fast.
const SUITES = ['webvoyager', 'online-mind2web', 'deepshop', 'swe-bench', 'claw'];

const usage = `grove tasks list --suite <${SUITES.join('|')}> --file PATH
    [--site S[,S]] [--level L[,L]] [--ids ID[,ID]] [--limit N] [--references PATH | --no-references]

Prints one normalised task per line (JSON) on stdout. Unusable rows are reported on stderr with their
line/index and the reason, and counted in a summary. Exit 0 when the file could be read, 1 when it could
not (missing, not JSON, wrong shape), 2 on bad arguments.
--references: WebVoyager reference_answer.json (default: the one beside --file, when present).`;

export type { CommandIO };

export async function runTasks(argv: string[], io: CommandIO = STDIO): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'list') {
    if (sub === '--help' || sub === '-h') return (io.out(`usage: ${usage}\n`), 0);
    return usageError({ usage, io, name: 'tasks' }, sub ? `unknown subcommand "${sub}" (list)` : 'a subcommand is required: list');
  }
  const u = { usage, io, name: 'tasks' };
  const parsed = parseCommandArgs({ args: rest, options: options(['suite', 'file', ...FILTER_OPTIONS, 'references'], ['no-references']) }, u);
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  const [{ Suite }, { LOADERS }] = await Promise.all([import('../../protocol/task.ts'), import('../../tasks/index.ts')]);
  const suite = Suite.safeParse(values.suite);
  if (!values.suite || !suite.success || !LOADERS[suite.data]) return usageError(u, `--suite must be one of ${Object.keys(LOADERS).join(', ')}`);
  if (!values.file) return usageError(u, '--file PATH is required');
  const limit = intOption(values.limit, 'limit', 0);
  if (limit instanceof Error) return valueError(u, '--limit must be a non-negative integer');
  const filter: TaskFilter = { ...listFilters(values), limit };
  const t0 = performance.now();
  const res = await loadTaskFile(io, 'tasks', suite.data, values.file, { filter, references: values['no-references'] ? false : values.references });
  if (res === 1) return 1;
  if (res.tasks.length) io.out(res.tasks.map((t) => JSON.stringify(t)).join('\n') + '\n');
  for (const i of res.issues) io.err(`${values.file}: ${i.where}: skipped${i.id ? ` (${i.id})` : ''}: ${i.reason}\n`);
  const ms = Math.round(performance.now() - t0);
  io.err(
    `${suite.data}: ${res.rows} rows, ${res.usable} usable, ${res.issues.length} unusable, ${res.flagged} flagged; ` +
      `printed ${res.tasks.length} (${ms} ms)\n`,
  );
  return 0;
}

export const tasksCommand: Command = {
  name: 'tasks',
  summary: 'List normalised benchmark tasks (WebVoyager, Online-Mind2Web, DeepShop, SWE-bench, Claw)',
  usage,
  run: (argv: string[]) => runTasks(argv),
};
