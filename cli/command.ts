// The shape of a CLI command. Add a command: one file in cli/commands/ exporting a Command, one line in
// cli/commands/index.ts.
export interface Command {
  /** The word after `grove`. */
  name: string;
  /** One line for `grove --help`. */
  summary: string;
  /** Full usage text for `grove help <name>` / `grove <name> --help`. */
  usage: string;
  /** Runs with the arguments after the command name; resolves to the process exit code. */
  run(argv: string[]): Promise<number>;
}
