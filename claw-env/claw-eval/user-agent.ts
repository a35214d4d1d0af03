// The simulated user of Claw-Eval's multi-turn tasks (task.yaml user_agent: persona, max_rounds), run from the
// checkout (runner/user_agent.py UserAgent: its prompt, its transcript format, its retries) by Grove's driver. Its
// chat calls are relayed to Grove's model client (`relay`: the configured user-model endpoint through vlm-client),
// as the judge's are; without a relay the checkout's own client calls base_url. Answers the user's next message, or
// null when the simulated user is done ([DONE]).
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Progress } from '../../sandbox/progress.ts';
import { runDriver, type ClawEvalRelay } from './driver-run.ts';
import type { ClawEvalMessage } from './grade.ts';
import type { ClawEvalPython } from './pyenv.ts';
import { clawEvalTempDir } from './tmp.ts';

export interface ClawEvalUserModel {
  model: string;
  /** Grove's model client: every chat call of the checkout's UserAgent goes here. */
  relay?: ClawEvalRelay;
  /** Without a relay: the endpoint the checkout's own client calls. */
  base_url?: string;
  api_key?: string;
}

export async function simulatedUserTurn(
  persona: string,
  messages: ClawEvalMessage[],
  o: { root: string; python: ClawEvalPython; driver: string; model: ClawEvalUserModel; progress: Progress },
): Promise<string | null> {
  const dir = clawEvalTempDir('user');
  try {
    const inPath = path.join(dir, 'in.json');
    const outPath = path.join(dir, 'out.json');
    const m = o.model;
    writeFileSync(inPath, JSON.stringify({ persona, messages, model: { model: m.model, base_url: m.base_url, api_key: m.api_key, relay: !!m.relay } }));
    const r = await runDriver(o, ['user_turn', o.root, inPath, outPath], o.progress, m.relay);
    o.progress.throwIfAborted();
    let out: { text?: string | null; error?: string };
    try {
      out = JSON.parse(readFileSync(outPath, 'utf8')) as typeof out;
    } catch {
      throw new Error(`the simulated user's driver wrote no answer: ${r.stderr.slice(-500)}`);
    }
    if (out.error) throw new Error(`simulated user: ${out.error}`);
    return out.text ?? null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
