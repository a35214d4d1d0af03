#!/usr/bin/env node
// Launcher: registers tsx in this process (same as `node --import tsx`) and runs cli/main.ts from this
// package, wherever it is called from. One process, so signals reach the server directly.
import { register } from 'tsx/esm/api';

register();
const { main } = await import(new URL('../cli/main.ts', import.meta.url).href);
try {
  process.exit(await main(process.argv.slice(2)));
} catch (err) {
  process.stderr.write(`grove: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}
