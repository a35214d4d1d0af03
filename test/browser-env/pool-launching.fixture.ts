// Child process for tempdirs.slow.test.ts: a pool whose browser never finishes launching. Its "Chromium" (argv[3],
// a script) reads its CDP pipe until the server dies, then exits by itself, as a real one does, so no process
// carries the pool's marker when the watchdog looks. Prints the profile folder Playwright made (one not there
// before), then idles.
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChromiumPool } from '../../browser-env/pool.ts';

const [dataDir, executablePath] = process.argv.slice(2);
const before = new Set(readdirSync(tmpdir()));
const pool = new ChromiumPool({ executablePath, processes: 1, recycleAfter: 0, dataDir, headless: true, extraArgs: [] });
void pool.start().catch(() => undefined);
const timer = setInterval(() => {
  const profile = readdirSync(tmpdir()).find((n) => n.startsWith('playwright_chromiumdev_profile-') && !before.has(n));
  if (!profile) return;
  clearInterval(timer);
  const watchdog = (pool as unknown as { watchdog?: { pid?: number } }).watchdog?.pid;
  process.stdout.write(`${JSON.stringify({ profile: join(tmpdir(), profile), watchdog })}\n`);
  setInterval(() => {}, 60_000);
}, 20);
