#!/usr/bin/env node
// Launcher: registers tsx in this process (same as `node --import tsx`) and runs cli/main.ts from this
// package, wherever it is called from. One process, so signals reach the server directly.
import { register } from 'tsx/esm/api';

register();
const { runAsProcess } = await import(new URL('../cli/main.ts', import.meta.url).href);
// Ends by setting process.exitCode (never process.exit before stdout drains: piped output would be cut).
await runAsProcess(process.argv.slice(2));
