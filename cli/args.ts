// Shared argument handling of the `grove` commands: parse strictly, answer --help with the usage (exit 0) and a
// bad option with the parser's message plus the usage (exit 2).
import { parseArgs, type ParseArgsConfig } from 'node:util';

export interface CommandIO {
  out(s: string): void;
  err(s: string): void;
}
export const STDIO: CommandIO = { out: (s) => void process.stdout.write(s), err: (s) => void process.stderr.write(s) };

/** Parsed arguments, or the exit code to return at once (0 after --help, 2 on a bad option). */
export function parseCommandArgs<T extends ParseArgsConfig>(config: T, usage: string, io: CommandIO): ReturnType<typeof parseArgs<T>> | number {
  let parsed: ReturnType<typeof parseArgs<T>>;
  try {
    parsed = parseArgs(config);
  } catch (err) {
    io.err(`${(err as Error).message}\nusage: ${usage}\n`);
    return 2;
  }
  if ((parsed.values as Record<string, unknown>).help) {
    io.out(`${usage}\n`);
    return 0;
  }
  return parsed;
}
