// The interactive terminal contract: what server/pty-socket.ts drives. Owned here, below the envs, so a local
// shell sandbox (shell-env) and a relayed one on a worker pod (k8s/) implement the one interface.

export interface PtyInit {
  argv: string[];
  cwd?: string;
  env?: Record<string, string>;
  rows: number;
  cols: number;
}

/** An interactive terminal session in the sandbox. */
export interface PtySession {
  write(data: Buffer | string): void;
  resize(rows: number, cols: number): void;
  /** Sends a signal ("TERM", "INT", "KILL", ...) to the terminal's process group. */
  signal(name: string): void;
  onData(fn: (data: Buffer) => void): void;
  /** Called once with the exit code (124 when the sandbox closed it). */
  onExit(fn: (code: number) => void): void;
  kill(): Promise<void>;
}
