// Child process for crash.slow.test.ts: starts the shell environment, runs a detached background process in a
// sandbox, prints the sandbox uid as one JSON line, then idles until the test kills it with SIGKILL.
import { createShellEnvironment } from '../../shell-env/index.ts';

const env = await createShellEnvironment({
  dataDir: process.argv[2],
  images: {},
  uidBase: 61_000,
  limits: { cpu: 1, memoryMb: 256, maxProcesses: 64, maxOutputBytes: 4096, maxFileBytes: 1 << 20, execTimeoutMs: 10_000 },
});
const sb = await env.create('sb_crash_fixture', { type: 'shell', block_network: true, labels: {} });
await sb.ready();
await sb.exec({ command: 'nohup sleep 777 >/dev/null 2>&1 & setsid sleep 778 >/dev/null 2>&1 &', merge_stderr: false, login_shell: false, background: false });
process.stdout.write(`${JSON.stringify({ uid: sb.details?.().shell?.uid })}\n`);
setInterval(() => {}, 60_000);
