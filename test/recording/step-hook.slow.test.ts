// Recording is one step hook (recording/step-hook.ts) that the server and the runner both run: an episode the
// runner takes in a `record: true` sandbox is recorded twice — by the server's hook (from the step route) and by
// the runner's (from its episode loop) — and the two recordings hold the same records, built by one function.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StepRecord } from '../../protocol/recording.ts';
import { readEpisode } from '../../recording/reader.ts';
import { EpisodeRecorder } from '../../recording/recorder.ts';
import { runEpisode } from '../../runner/episode.ts';
import type { Policy, PolicyDecision } from '../../runner/policy.ts';
import { startHarness, type Harness } from '../runner/harness.ts';

const ROOT = resolve(import.meta.dirname, '../..');
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const toolCall = (args: Record<string, unknown>) => `<tool_call>\n${JSON.stringify({ name: 'computer_use', arguments: args })}\n</tool_call>`;

describe('recording as a step hook', () => {
  it('a step through the server and the same step through the runner make the same record', async () => {
    // Every step is model text the server parses, so both sides know the model output.
    const outputs: PolicyDecision[] = [
      { output: toolCall({ action: 'left_click', coordinate: [500, 300] }), format: 'qwen3vl' },
      { output: 'I am not sure what to do.', format: 'qwen3vl' },
      { output: toolCall({ action: 'scroll', coordinate: [500, 500], pixels: -300 }), format: 'qwen3vl' },
      { output: toolCall({ action: 'answer', text: 'done' }), format: 'qwen3vl', prompt_tokens: 11, completion_tokens: 5 },
    ];
    const policy: Policy = { name: 'fixed', start() {}, next: async (_obs, ctx) => outputs[ctx.step - 1] };
    const runnerDir = join(h.tmp, 'runner-episode');
    const recordings = join(h.tmp, 'server', 'recordings');
    const o = await runEpisode({
      env: h.client,
      task: { id: 'hook', suite: 'offline', site: 'shop', question: 'press things', extra: {}, flags: [] },
      // The sandbox opens the page itself (no start-URL step), so both recordings number the same steps.
      sandbox: { start_url: `${h.sites.url}/shop/`, network: { allow: [h.sitesHost] }, record: true },
      maxSteps: 6,
      policy,
      recorder: () => EpisodeRecorder.create(runnerDir, { episode_id: 'hook' }),
    });
    expect(o.result.termination.reason).toBe('task_completed');
    expect(o.result.parse_failures).toBe(1);

    const [sandboxDir] = readdirSync(recordings);
    const server = await readEpisode(join(recordings, sandboxDir));
    const runner = await readEpisode(runnerDir);
    expect(server.meta).toMatchObject({ status: 'complete', steps: 4, answer: 'done', termination: { reason: 'task_completed' } });
    expect(runner.meta).toMatchObject({ status: 'complete', steps: 4, answer: 'done', termination: { reason: 'task_completed' } });
    expect(server.initial).toMatchObject({ frame: 'frames/0000.jpg', url: runner.initial.url, title: runner.initial.title });

    const raw = (dir: string) => readFileSync(join(dir, 'steps.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as StepRecord);
    const fromServer = raw(join(recordings, sandboxDir));
    const fromRunner = raw(runnerDir);
    expect(fromServer).toHaveLength(4);
    expect(fromRunner).toHaveLength(4);
    // Only the runner knows the policy side; the time of writing differs. Everything else is the same record.
    const comparable = ({ ts: _ts, policy: _policy, diff, ...r }: StepRecord) => ({ ...r, diff: diff !== undefined });
    for (let i = 0; i < 4; i++) {
      expect(Object.keys(fromServer[i]).filter((k) => k !== 'policy').sort(), `step ${i + 1}`).toEqual(Object.keys(fromRunner[i]).filter((k) => k !== 'policy').sort());
      expect(comparable(fromServer[i]), `step ${i + 1}`).toEqual(comparable(fromRunner[i]));
    }
    expect(fromServer.map((s) => s.frame)).toEqual(['frames/0001.jpg', 'frames/0002.jpg', 'frames/0003.jpg', 'frames/0004.jpg']);
    expect(fromServer[0]).toMatchObject({ format: 'qwen3vl', model_output: outputs[0].output, actions: [{ action: { action: 'click' }, error: null }] });
    expect(fromServer[1].parse_error).toBeTruthy();
    expect(fromServer[1].actions).toEqual([]);
    expect(fromServer[0].policy).toBeUndefined();
    expect(fromRunner[3].policy).toMatchObject({ prompt_tokens: 11, completion_tokens: 5 });
  });

  it('no recording wrapper is dispatched on with instanceof, and no step record is built outside recording/', () => {
    const offenders: string[] = [];
    const files = [...walk(join(ROOT, 'server')), ...walk(join(ROOT, 'runner')), ...walk(join(ROOT, 'sandbox')), ...walk(join(ROOT, 'episodes'))];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const rel = file.slice(ROOT.length + 1);
      if (/instanceof\s+Record\w*/.test(text)) offenders.push(`${rel}: instanceof on a recording class`);
      if (/RecordedBrowserSandbox|stepWithSource|observeForSource/.test(text)) offenders.push(`${rel}: the old recording wrapper`);
      // Browser step records come from recording/step-hook.ts buildStepRecord (SWE, harness and Claw runs record
      // shell commands and tool calls, a different record, in their own folders).
      if (/\.recordStep\(/.test(text) && !/runner\/(swe|harness|claw)\//.test(rel)) offenders.push(`${rel}: builds a step record itself`);
    }
    expect(offenders).toEqual([]);
  });
});

function* walk(d: string): Generator<string> {
  for (const name of readdirSync(d)) {
    const p = join(d, name);
    if (statSync(p).isDirectory()) yield* walk(p);
    else if (p.endsWith('.ts')) yield p;
  }
}
