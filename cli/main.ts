// `grove` entry point: dispatches to the command registry (cli/commands/index.ts). The CLI is the one place
// that prints to the console and sets the exit code.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from './command.ts';
import { COMMANDS } from './commands/index.ts';

export interface CliIO {
  out(s: string): void;
  err(s: string): void;
}
const stdio: CliIO = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) };

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export function generalHelp(commands: Command[] = COMMANDS): string {
  const width = Math.max(...commands.map((c) => c.name.length), 4) + 2;
  return [
    `grove ${VERSION}: sandboxes and benchmarks for computer-use agents`,
    '',
    'usage: grove <command> [options]',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    `  ${'help'.padEnd(width)}Show help for a command: grove help <command>`,
    '',
    'Run `grove help <command>` (or `grove <command> --help`) for its options.',
    '',
  ].join('\n');
}

function findCommand(name: string, commands: Command[]): Command | undefined {
  return commands.find((c) => c.name === name);
}

function unknown(name: string, commands: Command[], io: CliIO): number {
  const close = commands.filter((c) => c.name.startsWith(name.slice(0, 2))).map((c) => c.name);
  io.err(`grove: unknown command "${name}"${close.length ? ` (did you mean ${close.join(', ')}?)` : ''}\n\n${generalHelp(commands)}`);
  return 2;
}

/** Runs the CLI with argv (without node and script); resolves to the exit code. */
export async function main(argv: string[], io: CliIO = stdio, commands: Command[] = COMMANDS): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h') {
    io.out(generalHelp(commands));
    return 0;
  }
  if (first === '--version' || first === '-v') {
    io.out(`${VERSION}\n`);
    return 0;
  }
  if (first === 'help') {
    if (!rest[0]) {
      io.out(generalHelp(commands));
      return 0;
    }
    const cmd = findCommand(rest[0], commands);
    if (!cmd) return unknown(rest[0], commands, io);
    io.out(`${cmd.usage}\n`);
    return 0;
  }
  const cmd = findCommand(first, commands);
  if (!cmd) return unknown(first, commands, io);
  if (rest.length === 1 && (rest[0] === '--help' || rest[0] === '-h')) {
    io.out(`${cmd.usage}\n`);
    return 0;
  }
  return cmd.run(rest);
}

/** Resolves once everything written to `stream` so far has been handed to the OS (a pipe's reader may be slow). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) return resolve();
    stream.write('', () => resolve());
  });
}

/**
 * The process entry (bin/grove.mjs, `node --import tsx cli/main.ts`): runs main and ends by setting
 * process.exitCode, so the process exits once stdout/stderr have drained. `process.exit()` here used to cut piped
 * output at the pipe's 64 KiB buffer. A command that leaves a handle open cannot hang the process: after the output
 * is flushed, a grace timer (unref'd, so it never keeps a finished process alive) ends it.
 */
export async function runAsProcess(argv: string[], graceMs = 5_000): Promise<void> {
  // A reader that leaves early (`grove tasks list … | head`) is not an error of the command: later writes are dropped.
  for (const s of [process.stdout, process.stderr]) {
    s.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
    });
  }
  let code: number;
  try {
    code = await main(argv);
  } catch (err) {
    // A command that threw is a bug of the command: its stack helps the report, under the same prefix as every message.
    process.stderr.write(`grove${argv[0] && !argv[0].startsWith('-') ? ` ${argv[0]}` : ''}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    code = 1;
  }
  process.exitCode = code;
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  setTimeout(() => process.exit(code), graceMs).unref();
}

// Run when executed directly (`node --import tsx cli/main.ts ...`); bin/grove.mjs calls runAsProcess itself.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await runAsProcess(process.argv.slice(2));
}
