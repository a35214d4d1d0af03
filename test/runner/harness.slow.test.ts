// Harness runs end to end: harnesses run unmodified in real shell sandboxes (bubblewrap), their model calls go
// through the recording proxy to a local model server, and each run becomes an episode directory. The Codex CLI
// runs when it is installed (scripts/setup.sh installs it; see .ci/run).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedGrove, type EmbeddedGrove } from '../../cli/commands/run-embedded.ts';
import { GroveClient } from '../../client/index.ts';
import { readCalls, startProxy, type RecordingProxy } from '../../proxy/index.ts';
import { runHarness } from '../../runner/harness/run.ts';
import { builtinTasks } from '../../claw-env/tasks/index.ts';
import { loadOfflineTasks } from '../../sites/tasks.ts';
import { buildFixtureRepo, FIXTURE_REPO, fixtureInstances } from '../../swe-env/fixture.ts';
import { startOpenAIServer, type OpenAITestServer } from '../support/openai-server.ts';
import { startResponsesServer, type ResponsesServer } from '../support/responses-sse.ts';

const MINI_BASH = readFileSync(fileURLToPath(new URL('../../runner/harness/harnesses/mini_bash.py', import.meta.url)));
const SCREENSHOT_LOOP = readFileSync(fileURLToPath(new URL('../../runner/harness/harnesses/screenshot_loop.py', import.meta.url)));
const CODEX = ['/usr/bin/codex', '/usr/local/bin/codex'].find((p) => existsSync(p));

let grove: EmbeddedGrove;
let client: GroveClient;
let chat: OpenAITestServer;
let tmp: string;
const BROWSER_TURNS = { n: 0 };
const RECIPE_MINUTES = String((loadOfflineTasks('http://x').find((t) => t.id === 'Recipes--0')!.extra as any).ground_truth.checks[0].accepted[0]);

const bash = (cmd: string) => `Next:\n\`\`\`bash\n${cmd}\n\`\`\``;
const SCRIPTS: Record<string, string[]> = {
  seconds: [bash(`sed -i 's/"m": 60}/"m": 60, "s": 1}/' textkit/duration.py`), bash('python3 -m unittest -v 2>&1 | tail -3'), bash('echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; echo fixed')],
  hello: [bash('echo hi > hello.txt'), bash('echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; cat hello.txt')],
  // A Claw task: the harness reaches the Claw sandbox's apps over HTTP with its token.
  claw: [bash('curl -s -H "Authorization: Bearer $CLAW_TOKEN" "$CLAW_URL/api/tools" | head -c 300'), bash('echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; echo done')],
};

// Tries Grove's own API from inside the sandbox (through the sandbox's egress, as any client would).
const PROBE = `import os, sys, urllib.request
try:
    urllib.request.urlopen(sys.argv[1], timeout=10)
    print("grove-api: reachable")
except Exception as e:
    print("grove-api: blocked", type(e).__name__)
`;

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-harness-'));
  grove = await startEmbeddedGrove({ maxSandboxes: 16 });
  client = new GroveClient({ baseUrl: grove.url, apiKey: grove.apiKey, timeoutMs: 300_000 });
  chat = await startOpenAIServer((req) => {
    const first = req.body.messages[1].content;
    // The screenshot loop sends its task with the screenshot: answer the recipe question on the second look.
    if (Array.isArray(first)) {
      const text = String(first[0].text);
      const shot = String(first[1]?.image_url?.url ?? '');
      if (!shot.startsWith('data:image/')) return 'no screenshot';
      return text.includes('/recipes/') && !text.includes('URL: \n') && BROWSER_TURNS.n++ > 0
        ? `<tool_call>{"name": "computer_use", "arguments": {"action": "answer", "text": "${RECIPE_MINUTES} minutes"}}</tool_call>`
        : '<tool_call>{"name": "computer_use", "arguments": {"action": "scroll", "coordinate": [500, 500], "pixels": -200}}</tool_call>';
    }
    const task = String(first);
    const key = task.startsWith('CLAW:') ? 'claw' : Object.keys(SCRIPTS).find((k) => task.includes(k))!;
    const turn = req.body.messages.filter((m: { role: string }) => m.role === 'assistant').length;
    return SCRIPTS[key][turn] ?? 'out of script';
  });
});

afterAll(async () => {
  client?.close();
  await grove?.close();
  await chat?.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function withProxy<T>(upstream: string, fn: (p: RecordingProxy) => Promise<T>): Promise<T> {
  const proxy = await startProxy({ upstream, dir: path.join(tmp, 'proxy'), callTimeoutMs: 60_000 });
  try {
    return await fn(proxy);
  } finally {
    await proxy.close();
  }
}

describe('harness runs in shell sandboxes', () => {
  it('a bash-loop harness fixes a SWE instance; its calls become the steps of a graded episode', async () => {
    const repo = path.join(tmp, 'textkit');
    await buildFixtureRepo(repo);
    const inst = (await fixtureInstances()).find((i) => i.instance_id === 'grove__textkit-2')!;
    const r = await withProxy(chat.url, (proxy) =>
      runHarness({
        client, proxy, cmd: 'python3 /workspace/mini_bash.py', files: [{ path: 'mini_bash.py', content: MINI_BASH, mode: '755' }],
        task: { kind: 'swe', instance: inst, sources: { [FIXTURE_REPO]: repo } }, model: 'test-model', timeoutS: 120,
        outDir: path.join(tmp, 'episodes'), episodeId: 'swe-1',
      }),
    );
    expect(r).toMatchObject({ reward: 1, calls: 3, termination: { reason: 'task_completed' }, harness: { exit_code: 0 } });
    const calls = readCalls(path.join(tmp, 'proxy'), 'swe-1');
    expect(calls.map((c) => c.rollout_source)).toEqual(['path', 'path', 'path']);
    expect((calls[2].request_asked as any).messages.at(-1).content).toContain('<returncode>0</returncode>');
    const steps = readFileSync(path.join(r.episodeDir, 'steps.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(steps.map((s) => s.model_output.split('\n')[2])).toEqual([expect.stringContaining('sed -i'), expect.stringContaining('unittest'), expect.stringContaining('COMPLETE_TASK')]);
    const episode = JSON.parse(readFileSync(path.join(r.episodeDir, 'episode.json'), 'utf8'));
    expect(episode).toMatchObject({ status: 'complete', reward: 1, verdicts: [{ judge: 'swe-bench', outcome: 'success' }] });
    expect(JSON.parse(readFileSync(path.join(tmp, 'proxy', 'rollouts', 'swe-1', 'reward.json'), 'utf8')).reward).toBe(1);
  });

  it('the sandbox reaches the proxy and nothing else on loopback (not Grove\'s API); a check command grades', async () => {
    const r = await withProxy(chat.url, (proxy) =>
      runHarness({
        client, proxy, cmd: `python3 mini_bash.py; python3 probe.py ${grove.url}/health`,
        files: [{ path: 'mini_bash.py', content: MINI_BASH }, { path: 'probe.py', content: Buffer.from(PROBE) }],
        task: { kind: 'prompt', id: 'hello', prompt: 'write hello.txt containing hi', check: 'grep -qx hi hello.txt' },
        model: 'test-model', timeoutS: 60, outDir: path.join(tmp, 'episodes'), episodeId: 'hello-1',
      }),
    );
    expect(r).toMatchObject({ reward: 1, calls: 2 });
    const log = readFileSync(path.join(r.episodeDir, 'harness.log'), 'utf8');
    expect(log).toContain('grove-api: blocked');
    expect(log).not.toContain('grove-api: reachable');
  });
});

describe('harness runs on Claw tasks', () => {
  it('opens exactly the Claw sandbox\'s origin beside the proxy, and the Claw graders give the reward', async () => {
    const task = builtinTasks()[0];
    const r = await withProxy(chat.url, (proxy) =>
      runHarness({
        client, proxy, cmd: 'python3 mini_bash.py', files: [{ path: 'mini_bash.py', content: MINI_BASH }],
        task: { kind: 'claw', id: task.id, prompt: `CLAW: ${task.prompt}` }, model: 'test-model', timeoutS: 60,
        outDir: path.join(tmp, 'episodes'), episodeId: 'claw-1',
      }),
    );
    expect(r.termination.reason).toBe('task_completed');
    expect(typeof r.reward).toBe('number');
    const calls = readCalls(path.join(tmp, 'proxy'), 'claw-1');
    // The tool list came back through the sandbox's egress from the Claw origin.
    expect((calls[1].request_asked as any).messages.at(-1).content).toContain('"tools"');
    const episode = JSON.parse(readFileSync(path.join(r.episodeDir, 'episode.json'), 'utf8'));
    expect(episode.verdicts[0].judge).toBe('claw');
  });
});

describe('harness runs on browser tasks', () => {
  it('a screenshot loop in a shell sandbox drives its browser sandbox only through the one-sandbox gateway', async () => {
    const r = await withProxy(chat.url, (proxy) =>
      runHarness({
        client, proxy, cmd: `python3 screenshot_loop.py; python3 probe.py ${grove.url}/health`,
        files: [{ path: 'screenshot_loop.py', content: SCREENSHOT_LOOP }, { path: 'probe.py', content: Buffer.from(PROBE) }],
        task: { kind: 'browser', task: { suite: 'offline', id: 'Recipes--0' }, prompt: 'How long does the Lemon Garlic Roast Chicken take in total, in minutes?' },
        model: 'test-model', timeoutS: 120, outDir: path.join(tmp, 'episodes'), episodeId: 'browser-1',
      }),
    );
    const log = readFileSync(path.join(r.episodeDir, 'harness.log'), 'utf8');
    expect(log).toContain('grove-api: blocked');
    expect(r).toMatchObject({ reward: 1, calls: 2, termination: { reason: 'task_completed' } });
    const episode = JSON.parse(readFileSync(path.join(r.episodeDir, 'episode.json'), 'utf8'));
    expect(episode.verdicts[0].outcome).toBe('success');
  });
});

describe.runIf(CODEX)('the Codex CLI, unmodified, in a shell sandbox', () => {
  let responses: ResponsesServer;
  beforeAll(async () => {
    responses = await startResponsesServer((_body, turn) =>
      turn === 0 ? { function_call: { name: 'exec_command', arguments: { cmd: 'echo made by codex > codex.txt' } } } : { text: 'Created codex.txt.' },
    );
  });
  afterAll(() => responses?.close());

  it('runs a command the model asked for; every Responses API call is recorded, streaming', async () => {
    const provider = `model_providers.grove={name="grove",base_url="$OPENAI_BASE_URL",env_key="OPENAI_API_KEY",wire_api="responses"}`;
    const cmd = `${CODEX} exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox -c "${provider.replaceAll('"', '\\"')}" -c model_provider=grove -m "$OPENAI_MODEL" "write codex.txt"`;
    const r = await withProxy(responses.url, (proxy) =>
      runHarness({
        client, proxy, cmd, task: { kind: 'prompt', id: 'codex', prompt: 'write codex.txt', check: 'grep -q "made by codex" codex.txt' },
        model: 'test-model', timeoutS: 120, outDir: path.join(tmp, 'episodes'), episodeId: 'codex-1',
      }),
    );
    expect(r.reward).toBe(1);
    const calls = readCalls(path.join(tmp, 'proxy'), 'codex-1').filter((c) => c.endpoint.startsWith('/responses'));
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.every((c) => c.stream && c.status === 200)).toBe(true);
    expect((calls[0].assembled as any).output[0]).toMatchObject({ type: 'function_call', name: 'exec_command' });
    expect(JSON.stringify(calls[1].request_asked)).toContain('function_call_output');
  });
});
