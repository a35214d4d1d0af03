// The simulated user of Claw-Eval's multi-turn tasks (task.yaml user_agent: persona, max_rounds), run from the
// checkout (runner/user_agent.py UserAgent, its prompt and retries) by Grove's driver on the caller's user model.
// Answers the user's next message, or null when the simulated user is done ([DONE]).
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ClawEvalMessage } from './grade.ts';
import type { ClawEvalPython } from './pyenv.ts';
import { clawEvalTempDir } from './tmp.ts';

export interface ClawEvalUserModel {
  base_url: string;
  model: string;
  api_key?: string;
}

export async function simulatedUserTurn(
  persona: string,
  messages: ClawEvalMessage[],
  o: { root: string; python: ClawEvalPython; driver: string; model: ClawEvalUserModel; timeoutMs?: number },
): Promise<string | null> {
  const dir = clawEvalTempDir('user');
  try {
    const inPath = path.join(dir, 'in.json');
    const outPath = path.join(dir, 'out.json');
    writeFileSync(inPath, JSON.stringify({ persona, messages, model: o.model }));
    const stderr = await new Promise<string>((resolve) => {
      execFile(o.python.python, [o.driver, 'user_turn', o.root, inPath, outPath], { cwd: o.root, timeout: o.timeoutMs ?? 600_000, maxBuffer: 16 << 20, env: { PATH: '/usr/bin:/bin', HOME: tmpdir(), LANG: 'C.UTF-8', PYTHONDONTWRITEBYTECODE: '1' } }, (_e, _o, err) => resolve(err));
    });
    let out: { text?: string | null; error?: string };
    try {
      out = JSON.parse(readFileSync(outPath, 'utf8')) as typeof out;
    } catch {
      throw new Error(`the simulated user's driver wrote no answer: ${stderr.slice(-500)}`);
    }
    if (out.error) throw new Error(`simulated user: ${out.error}`);
    return out.text ?? null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
