// Shell sandboxes: bubblewrap namespaces, cgroup limits, exec/jobs/files/patches/PTY. See README.md.
export { createShellEnvironment, shellAvailability, type ShellEnvironment, type ShellEnvironmentOptions } from './environment.ts';
export { isShellSandbox, type PtyInit, type PtySession, type ShellSandbox } from './types.ts';
export { WORKSPACE } from './sandbox.ts';
export { createPodShellEnvironment, type PodShellEnvironmentOptions } from './pod-environment.ts';
