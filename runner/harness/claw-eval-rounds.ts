// A harness on a multi-turn Claw-Eval task (the task's simulated user, user_agent): Claw-Eval's loop hands the
// simulated user every assistant turn without tool calls, and the agent continues until the user is done or its
// rounds are used up. A harness's turn is one run of its command, so: run it, hand its final output to the episode's
// /claw-eval/reply (recorded as the assistant's message; the checkout's UserAgent answers on the server's user
// model), and while the user has more to say run the harness again with the conversation so far in GROVE_TASK.
// Its tool calls, every round's, reach the same episode over MCP, so the grader reads one trace.
import type { GroveClient } from '../../client/index.ts';
import type { ExecResult } from '../../protocol/shell.ts';

export interface ClawEvalRounds {
  /** The last run of the harness (its output was the final answer when `done`). */
  last: ExecResult;
  /** Messages the simulated user sent. */
  rounds: number;
  /** The conversation ended by the simulated user (done or out of rounds): grade it as it is. */
  done: boolean;
}

/** GROVE_TASK of a later round: the task, then the conversation so far, the user's last message at the end. */
export function conversationPrompt(first: string, turns: { assistant: string; user: string }[]): string {
  const said = turns.map((t) => `[assistant]\n${t.assistant}\n\n[user]\n${t.user.replace(/^\[user_agent\]\n/, '')}`).join('\n\n');
  return `${first}\n\n--- The conversation so far (your earlier answers and the user's replies) ---\n\n${said}\n\n--- Continue: answer the user's last message. ---`;
}

export async function runClawEvalRounds(o: {
  client: GroveClient;
  episodeId: string;
  first: string;
  timeoutS: number;
  run: (task: string, timeoutS: number) => Promise<ExecResult>;
}): Promise<ClawEvalRounds> {
  const until = Date.now() + o.timeoutS * 1000;
  const turns: { assistant: string; user: string }[] = [];
  let task = o.first;
  for (;;) {
    const last = await o.run(task, Math.max(1, Math.round((until - Date.now()) / 1000)));
    if (last.timed_out || last.exit_code !== 0) return { last, rounds: turns.length, done: false };
    const text = last.stdout.trim().slice(-100_000);
    const res = await o.client.request('POST', `/sandboxes/${encodeURIComponent(o.episodeId)}/claw-eval/reply`, { text }, Math.max(0, until - Date.now()));
    const r = JSON.parse(await res.text()) as { user: string | null; done: boolean; rounds: number };
    if (r.done || r.user === null) return { last, rounds: r.rounds, done: true };
    turns.push({ assistant: text, user: r.user });
    if (Date.now() >= until) return { last: { ...last, timed_out: true }, rounds: r.rounds, done: false };
    task = conversationPrompt(o.first, turns);
  }
}
