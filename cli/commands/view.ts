// `grove view DIR`: serve the visual debugger over a directory of recorded runs until SIGINT/SIGTERM.
import { stat } from 'node:fs/promises';
import type { Command } from '../command.ts';
import { startViewer } from '../../viewer/server.ts';

import { failure, list, options, parseCommandArgs, STDIO, usageError, type CommandIO } from '../args.ts';
export { type CommandIO };

const usage = `grove view DIR [--judged OUT[,OUT]] [--port N] [--host H]

Serves the Grove viewer for every episode found under DIR (Grove recordings, WebVoyager result folders
task<id>/interact_messages.json, Online-Mind2Web result folders <task_id>/result.json + trajectory/).
Works offline: no CDN. Prints the URL; stops on Ctrl-C.
  --judged OUT  folders \`grove judge --episodes DIR --out OUT\` wrote: their verdicts (outcome, score, reasoning,
                details) show beside the episodes; DIR itself (the default --out) is always read
  --port N     port (default 8780; 0 = any free port)
  --host H     bind address (default 127.0.0.1)
Exit codes: 0 after Ctrl-C, 1 when DIR cannot be read or the port is taken, 2 on bad options.`;

export async function runView(argv: string[], io: CommandIO = STDIO): Promise<number> {
  const u = { usage, io, name: 'view' };
  const parsed = parseCommandArgs({ args: argv, options: options(['port', 'host', 'judged']), allowPositionals: true }, u);
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const dir = positionals[0];
  const port = values.port === undefined ? 8780 : Number(values.port);
  if (!dir || positionals.length > 1 || !Number.isInteger(port) || port < 0 || port > 65535) {
    return usageError(u, !dir ? 'DIR is required' : positionals.length > 1 ? 'only one DIR' : `--port: expected 0..65535, got "${values.port}"`);
  }
  const isDir = await stat(dir).then((s) => s.isDirectory(), () => false);
  if (!isDir) {
    return failure(u, `${dir} is not a readable directory`);
  }
  let viewer;
  try {
    viewer = await startViewer({ root: dir, port, host: values.host, judged: list(values.judged) });
  } catch (err) {
    return failure(u, `could not start the viewer: ${(err as Error).message}`);
  }
  io.out(`Grove viewer: ${viewer.app.index.size} episodes under ${viewer.app.index.root}\n${viewer.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await viewer.close();
  return 0;
}

export const viewCommand: Command = {
  name: 'view',
  summary: 'Browse recorded episodes (and WebVoyager / Online-Mind2Web result folders) in a local web viewer',
  usage,
  run: (argv) => runView(argv),
};
