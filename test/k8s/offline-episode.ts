// Drives an offline-site task through Grove's REST API as an agent would (the scripted policy over SoM
// observations), and scores it with POST /sandboxes/{id}/evaluate: the reward comes from the rule judge on the
// sites' session state, wherever the sites run.
import type { GroveClient } from '../../client/index.ts';
import type { Task } from '../../protocol/task.ts';
import { ScriptedPolicy } from '../../runner/scripted-policy.ts';
import { loadOfflineTasks, PLACEHOLDER_BASE } from '../../sites/tasks.ts';

export function offlineTask(id: string): Task {
  const t = loadOfflineTasks(PLACEHOLDER_BASE).find((x) => x.id === id);
  if (!t) throw new Error(`no offline task ${id}`);
  return t;
}

/** Runs the task's plan in the sandbox (at most `maxSteps`); answers the final answer the plan gives. */
export async function runPlan(client: GroveClient, id: string, task: Task, maxSteps = 40): Promise<string | undefined> {
  const policy = new ScriptedPolicy();
  policy.start(task);
  let obs = await client.observation(id, { som: true, screenshot: 'none' });
  for (let step = 0; step < maxSteps; step++) {
    const d = await policy.next(obs, { task, step });
    const action = d.actions![0]!;
    if (action.action === 'answer') return action.text;
    if (action.action === 'terminate') return undefined;
    obs = (await client.step(id, { action, som: true, screenshot: 'none' })).observation;
  }
  return undefined;
}

export async function evaluate(client: GroveClient, id: string, answer?: string): Promise<{ reward: number | null; verdict: { outcome: string; reasoning: string } | null }> {
  const res = await client.request('POST', `/sandboxes/${encodeURIComponent(id)}/evaluate`, answer === undefined ? {} : { answer });
  return JSON.parse(await res.text());
}
