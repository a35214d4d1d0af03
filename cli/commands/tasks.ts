// `grove tasks list`: print normalised tasks of a suite file, one JSON per line, problems on stderr.
import { parseCommandArgs, type CommandIO } from '../args.ts';
import type { Command } from '../command.ts';
import type { TaskFilter } from '../../tasks/index.ts';

// The loaders load on demand, so `grove --help` stays fast.
const SUITES = ['webvoyager', 'online-mind2web', 'deepshop', 'swe-bench', 'claw'];

const usage = `grove tasks list --suite <${SUITES.join('|')}> --file PATH
    [--site S[,S]] [--level L[,L]] [--ids ID[,ID]] [--limit N] [--references PATH | --no-references]

Prints one normalised task per line (JSON) on stdout. Unusable rows are reported on stderr with their
line/index and the reason, and counted in a summary. Exit 0 when the file could be read, 1 when it could
not (missing, not JSON, wrong shape), 2 on bad arguments.
--references: WebVoyager reference_answer.json (default: the one beside --file, when present).`;

const list = (v: string | undefined) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : undefined);

export type { CommandIO };
const stdio: CommandIO = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) };

export async function runTasks(argv: string[], io: CommandIO = stdio): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'list') {
    io.err(`${sub ? `unknown subcommand "${sub}"\n` : ''}usage: ${usage}\n`);
    return sub === '--help' || sub === '-h' ? 0 : 2;
  }
  const parsed = parseCommandArgs(
    {
      args: rest,
      options: {
        suite: { type: 'string' },
        file: { type: 'string' },
        site: { type: 'string' },
        level: { type: 'string' },
        ids: { type: 'string' },
        limit: { type: 'string' },
        references: { type: 'string' },
        'no-references': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    },
    usage,
    io,
  );
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  const [{ Suite }, { LOADERS, loadTasks, TaskFileError }] = await Promise.all([import('../../protocol/task.ts'), import('../../tasks/index.ts')]);
  const suite = Suite.safeParse(values.suite);
  if (!values.suite || !suite.success || !LOADERS[suite.data]) {
    io.err(`--suite must be one of ${Object.keys(LOADERS).join(', ')}\nusage: ${usage}\n`);
    return 2;
  }
  if (!values.file) {
    io.err(`--file PATH is required\nusage: ${usage}\n`);
    return 2;
  }
  const filter: TaskFilter = { site: list(values.site), level: list(values.level), ids: list(values.ids) };
  if (values.limit !== undefined) {
    const n = Number(values.limit);
    if (!Number.isInteger(n) || n < 0) {
      io.err('--limit must be a non-negative integer\n');
      return 2;
    }
    filter.limit = n;
  }
  const t0 = performance.now();
  let res;
  try {
    res = await loadTasks(suite.data, values.file, {
      filter,
      references: values['no-references'] ? false : values.references,
    });
  } catch (err) {
    if (err instanceof TaskFileError) {
      io.err(`error: ${err.message} [${err.code}]\n`);
      return 1;
    }
    throw err;
  }
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
