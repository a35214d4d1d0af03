// Shared argument handling of the `grove` commands: the option tables, strict parsing, --help (the usage, exit 0),
// a bad option or value (the message plus the usage, exit 2), comma lists and the shared task filters.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export interface CommandIO {
  out(s: string): void;
  err(s: string): void;
}
export const STDIO: CommandIO = { out: (s) => void process.stdout.write(s), err: (s) => void process.stderr.write(s) };

/** How a command answers --help and bad arguments. */
export interface CommandUsage {
  usage: string;
  io: CommandIO;
  /** The command's name: every message starts with `grove <name>: ` (one error prefix for all commands). */
  name: string;
}

type ValueOptions<S extends string> = { [K in S]: { type: 'string' } };
type FlagOptions<B extends string> = { [K in B]: { type: 'boolean' } };
const HELP = { type: 'boolean', short: 'h' } as const;

/** A parseArgs option table: `values` take an argument, `flags` are booleans; -h/--help is always there. */
export function options<const S extends string, const B extends string = never>(
  values: readonly S[],
  flags: readonly B[] = [],
): ValueOptions<S> & FlagOptions<B> & { help: typeof HELP } {
  const table: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const v of values) table[v] = { type: 'string' };
  for (const f of flags) table[f] = { type: 'boolean' };
  table.help = HELP;
  return table as ValueOptions<S> & FlagOptions<B> & { help: typeof HELP };
}

/** The task filters that take comma lists (`--site S[,S] --level L[,L] --ids ID[,ID]`), and --limit N. */
export const FILTER_OPTIONS = ['site', 'level', 'ids', 'limit'] as const;

/** A comma-separated option value as a list (items trimmed, empty ones dropped); undefined when absent or empty. */
export function list(v: string | undefined): string[] | undefined {
  return v ? v.split(',').map((s) => s.trim()).filter(Boolean) : undefined;
}

/** The comma-list task filters of parsed options (--limit is checked by each command: their limits differ). */
export function listFilters(values: { site?: string; level?: string; ids?: string }): { site?: string[]; level?: string[]; ids?: string[] } {
  return { site: list(values.site), level: list(values.level), ids: list(values.ids) };
}

/** An integer option of at least `min`: undefined when absent, an Error (`--<name> must be an integer >= <min>`) when not. */
export function intOption(v: string | undefined, name: string, min: number): number | undefined | Error {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) return new Error(`--${name} must be an integer >= ${min}`);
  return n;
}

/** parseArgs (strict unless the config says otherwise) that returns the parser's message instead of throwing. */
export function tryParseArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> | { error: string } {
  try {
    return parseArgs(config);
  } catch (err) {
    return { error: (err as Error).message };
  }
}

const prefix = (u: CommandUsage) => `grove ${u.name}: `;

/** Reports a bad option or value with the usage on stderr; returns exit code 2. */
export function usageError(u: CommandUsage, msg: string): 2 {
  u.io.err(`${prefix(u)}${msg}\nusage: ${u.usage}\n`);
  return 2;
}

/** Reports a failure of the work itself on stderr (`grove <name>: <msg>`); returns exit code 1. */
export function failure(u: Pick<CommandUsage, 'io' | 'name'>, msg: string): 1 {
  u.io.err(`grove ${u.name}: ${msg}\n`);
  return 1;
}

/** Reports a bad value without the usage on stderr; returns exit code 2. */
export function valueError(u: CommandUsage, msg: string): 2 {
  u.io.err(`${prefix(u)}${msg}\n`);
  return 2;
}

/** Prints the usage on stdout (the answer to --help); returns exit code 0. */
export function showUsage(u: CommandUsage): 0 {
  u.io.out(`usage: ${u.usage}\n`);
  return 0;
}

/** Parsed arguments, or the exit code to return at once (0 after --help, 2 on a bad option). */
export function parseCommandArgs<T extends ParseArgsConfig>(config: T, u: CommandUsage): ReturnType<typeof parseArgs<T>> | number {
  const parsed = tryParseArgs(config);
  if ('error' in parsed) return usageError(u, parsed.error);
  if ((parsed.values as Record<string, unknown>).help) return showUsage(u);
  return parsed;
}

/** A command made of subcommands (`grove proxy serve|export`): dispatches on the first word, else a usage error. */
export function subcommands(name: string, usage: string, table: Record<string, (argv: string[], io: CommandIO) => Promise<number>>): (argv: string[]) => Promise<number> {
  return async (argv) => {
    const [sub, ...rest] = argv;
    const fn = sub === undefined ? undefined : table[sub];
    if (fn) return fn(rest, STDIO);
    const known = Object.keys(table).join(' or ');
    return usageError({ usage, io: STDIO, name }, sub ? `unknown subcommand "${sub}" (${known})` : `a subcommand is required: ${known}`);
  };
}
