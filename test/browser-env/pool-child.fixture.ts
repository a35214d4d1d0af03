// Child process for pool.slow.test.ts: opens a pool with two contexts, prints its Chromium root pids and
// watchdog pid as one JSON line, then idles until the test kills it.
import { ChromiumPool } from '../../browser-env/pool.ts';

const dataDir = process.argv[2];
const pool = new ChromiumPool({ executablePath: '/usr/bin/chromium', processes: 2, recycleAfter: 0, dataDir, headless: true, extraArgs: [] });
await pool.start();
const a = await pool.newContext({});
const b = await pool.newContext({});
await (await a.context.newPage()).setContent('<p>a</p>');
await (await b.context.newPage()).setContent('<p>b</p>');
const watchdog = (pool as unknown as { watchdog?: { pid?: number } }).watchdog?.pid;
process.stdout.write(`${JSON.stringify({ pids: pool.pids(), watchdog })}\n`);
setInterval(() => {}, 60_000);
