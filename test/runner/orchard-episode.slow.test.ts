// An Orchard-GUI episode end to end: the runner, the real server and Chromium on the offline shop, a VlmPolicy with
// the orchard format talking to the local model server. The sandbox has Orchard's environment (1280x1000 PNG), the
// model's calls run on the server, and the next prompt carries web_env.py-style feedback on each call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxFor } from '../../cli/commands/run-exec.ts';
import { runEpisode } from '../../runner/episode.ts';
import { ChatClient } from '../../vlm-client/client.ts';
import { VlmPolicy } from '../../vlm-client/policy.ts';
import { startOpenAIServer, type OpenAITestServer } from '../support/openai-server.ts';
import { siteTask, startHarness, type Harness } from './harness.ts';

let h: Harness;
let model: OpenAITestServer;
const call = (name: string, args: object) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

beforeAll(async () => {
  h = await startHarness();
  model = await startOpenAIServer((_r, i) =>
    [
      `<think>Scroll to see more products.</think>\n${call('scroll', { direction: 'down', amount: 0.5 })}`,
      `<think>Enough.</think>\n${call('done', { response: 'seen the shop' })}`,
    ][i],
  );
});
afterAll(async () => {
  await model?.close();
  await h?.close();
});

describe('orchard episode', () => {
  it("runs in Orchard-GUI's environment and reports each call back to the model", async () => {
    const task = siteTask(h, 'orchard-1');
    const policy = new VlmPolicy({ client: new ChatClient({ baseURL: model.url, model: 'orchard-test', maxRetries: 0 }), format: 'orchard' });
    const o = await runEpisode({ env: h.client, task, sandbox: sandboxFor('orchard', h.sitesHost)!(task), maxSteps: 4, policy, format: 'orchard' });
    expect(o.result.termination.reason).toBe('task_completed');
    expect(o.result.answer).toBe('seen the shop');
    const user = (i: number) => JSON.stringify(model.requests[i].body.messages.filter((m: { role: string }) => m.role === 'user').at(-1));
    expect(user(0)).toContain('data:image/png;base64,');
    expect(user(0)).toContain('screen size: 1280 x 1000');
    expect(user(1)).toContain('Succeed: `scroll` executed.');
  });
});
