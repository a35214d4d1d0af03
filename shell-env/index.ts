// Shell sandboxes: bubblewrap namespaces, cgroup limits, exec/jobs/files/patches/PTY. See README.md.
export { createShellEnvironment, shellAvailability, type ProcessConfinement, type ShellEnvironment } from './environment.ts';
export { isShellSandbox, type PtySession, type ShellSandbox } from './types.ts';
export { createPodShellEnvironment } from './pod-environment.ts';
