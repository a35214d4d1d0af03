// One run of Grove's Python driver (driver-source.ts) that may relay chat calls: the checkout's LLMJudge (grade) and
// simulated user (user_turn) make their chat calls through a client the driver swaps in, which writes each call as a
// JSON line on stdout and reads the answer as one line on stdin; Grove makes the call with its own model client
// (`relay`) and answers. The run is bounded by the caller's Progress: when it is over (time up, or the trial or
// sandbox that owns it closed), the driver is killed, not left running.
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import type { Progress } from '../../sandbox/progress.ts';
import type { ClawEvalPython } from './pyenv.ts';

/** One chat call of the checkout's code, as it made it (OpenAI chat-completions fields). */
export interface ClawEvalChatRequest {
  model: string;
  messages: { role: string; content: unknown }[];
  temperature?: number;
  max_tokens?: number;
}

/** Grove's model client for relayed calls: the answer's text, or a rejection (the driver raises ConnectionError). */
export type ClawEvalRelay = (req: ClawEvalChatRequest) => Promise<string>;

/** Runs `driver cmd ...args` from the checkout; resolves with its stderr tail once it exited (or was killed). */
export function runDriver(o: { root: string; python: ClawEvalPython; driver: string }, args: string[], progress: Progress, relay?: ClawEvalRelay): Promise<{ stderr: string; killed: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(o.python.python, [o.driver, ...args], { cwd: o.root, stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: '/usr/bin:/bin', HOME: tmpdir(), LANG: 'C.UTF-8', PYTHONDONTWRITEBYTECODE: '1' } });
    let err = '';
    let killed = false;
    const off = progress.cleanupWhenAborted(() => {
      killed = true;
      child.kill('SIGKILL');
    });
    child.stderr!.on('data', (c: Buffer) => (err = (err + c.toString('utf8')).slice(-8000)));
    child.stdin!.on('error', () => {});
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let req: ClawEvalChatRequest | undefined;
      try {
        req = (JSON.parse(line) as { relay_request?: ClawEvalChatRequest }).relay_request;
      } catch {
        return;
      }
      if (!req) return;
      const answer = relay ? relay(req) : Promise.reject(new Error('no model client is configured for this call'));
      answer.then(
        (content) => child.stdin!.write(`${JSON.stringify({ content })}\n`),
        (e: Error) => child.stdin!.write(`${JSON.stringify({ error: e.message })}\n`),
      );
    });
    const finish = (tail: string) => {
      off();
      resolve({ stderr: tail, killed });
    };
    child.on('close', () => finish(err));
    child.on('error', (e) => finish(e.message));
  });
}
