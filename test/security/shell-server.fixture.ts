// A real Grove server with the shell environment only, in a process of its own (so a test can SIGKILL it, run two
// side by side, and give it a canary in its environment). argv: dataDir. Prints {"url", "pid"} as one JSON line.
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { shellEnvironment } from '../../server/server.ts';
import { KEY } from './shell-support.ts';

const config = loadConfig({ env: {}, flags: { apiKey: KEY, dataDir: process.argv[2], maxSandboxes: 50 } });
const app = await buildApp({ config, environments: async (log) => ({ shell: await shellEnvironment(config, log) }) });
await app.listen({ host: '127.0.0.1', port: 0 });
const { port } = app.server.address() as { port: number };
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}`, pid: process.pid })}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
