// Child process for pod-isolation.slow.test.ts: a pod-isolated shell sandbox with a job and a setsid'd daemon
// running, "ready" on stdout, then idle until the test kills it with SIGKILL.
import { createPodShellEnvironment } from '../../shell-env/index.ts';

const [workspace, mark] = process.argv.slice(2) as [string, string];
const env = createPodShellEnvironment({
  workspace,
  network: 'deny',
  limits: { cpu: 1, memoryMb: 256, maxProcesses: 4096, maxOutputBytes: 4096, maxFileBytes: 1 << 20, execTimeoutMs: 60_000 },
});
const sb = await env.create('sb_pod_crash_fixture', { type: 'shell', block_network: true, labels: {} });
await sb.ready();
await sb.startJob({ command: `sleep ${mark}`, merge_stderr: false, login_shell: false, background: true });
await sb.exec({ command: `setsid sleep ${mark} </dev/null >/dev/null 2>&1 &`, merge_stderr: false, login_shell: false, background: false });
process.stdout.write('ready\n');
setInterval(() => {}, 60_000);
