// The Claw-Eval task kinds an episode of the server runs beside plain service tasks, each graded as the batch path
// (`grove claw run --claw-eval`) grades the same trajectory:
// - a simulated user (user_agent): the agent's text turns go to /claw-eval/reply, the fixture checkout's UserAgent
//   answers through Grove's model client on the server's user model (a simulated model server, OpenAI wire format);
//   the same through `grove harness run` (a scripted harness, one run per round);
// - the sandbox tools: Bash, Read, … answered by the checkout's own sandbox server in a shell sandbox of the server;
// - a judged task: the grader's LLMJudge relayed to the server's judge (a simulated judge server);
// - a service slower to start than the task's startup deadline: a clear service_start_failed, not retried;
// - the services under the shell sandboxes' limits: an attacker's service eating memory is OOM-killed inside its
//   cgroup, one fork-bombing is held to the process limit; the host is unaffected and nothing outlives the episode.
// Attacks: /reply on the wrong sandbox, after the conversation ended, with a bad body; a user model that fails.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harnessRun } from '../../cli/commands/harness.ts';
import { startEmbeddedGrove, type EmbeddedGrove } from '../../cli/commands/run-embedded.ts';
import { GroveClient } from '../../client/index.ts';
import { ClawEvalHost, prepareClawEvalCheckout, type PreparedCheckout } from '../../claw-env/claw-eval/host.ts';
import { clawEvalSandboxTools } from '../../claw-env/claw-eval/prompt.ts';
import { ensureClawEvalSandboxPython } from '../../claw-env/claw-eval/pyenv.ts';
import type { ClawEvalSandboxProvider } from '../../claw-env/claw-eval/session.ts';
import { JudgeModel } from '../../judges/model.ts';
import { startProxy } from '../../proxy/index.ts';
import { runClawEval } from '../../runner/claw-eval/run.ts';
import { chatUserModel, runClawEvalTrial } from '../../runner/claw-eval/trial.ts';
import { runHarness } from '../../runner/harness/run.ts';
import { clientShellProvider } from '../../runner/swe/shell-session.ts';
import { apiOn } from '../support/http-api.ts';
import { drive as driveOn, scripted, type Turn } from '../k8s/claw-eval-drive.ts';
import { startOpenAIServer, type OpenAITestServer } from '../support/openai-server.ts';

const ROOT = path.resolve(__dirname, 'fixtures/claw-eval-checkout');
const INDEX = existsSync('/opt/pypi/simple') ? 'file:///opt/pypi/simple' : undefined;
const BWRAP = existsSync('/usr/bin/bwrap') && process.getuid?.() === 0;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-claw-eval-kinds-test-'));
const CACHE = path.join(tmp, 'cache');
let grove: EmbeddedGrove;
let client: GroveClient;
let prepared: PreparedCheckout;
let user: OpenAITestServer;
let judge: OpenAITestServer;
let userFails = false;
const MEMORY_MB = 512;
const MAX_PROCS = 64;
/** The services' cgroup folders of one controller (shell-env's grove/<instance>/p-claw-eval-*), of this test's
 * server only (its shell instances are the folders of its data folder): other Grove processes on the host have theirs. */
const serviceGroups = (controller: string) => {
  const base = `/sys/fs/cgroup/${controller}/grove`;
  const shell = path.join(grove.dataDir, 'shell');
  const mine = existsSync(shell) ? readdirSync(shell).filter((i) => /^i[0-9a-f]{12}$/.test(i)) : [];
  return mine.flatMap((i) => (existsSync(path.join(base, i)) ? readdirSync(path.join(base, i)).filter((d) => d.startsWith('p-claw-eval-')).map((d) => path.join(base, i, d)) : []));
};
const CGROUPS = existsSync('/sys/fs/cgroup/freezer/cgroup.procs');

const drive = (id: string, turns: Turn[]) => driveOn(api, id, turns);
const api = (method: string, url: string, body?: unknown) => apiOn(grove.url, { 'x-api-key': grove.apiKey })(method, url, body);

/** The shell sandboxes the server made for episodes (shell-env's folder per sandbox, named after its id). */
const episodeShells = () => {
  const root = path.join(grove.dataDir, 'shell');
  return readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory()).flatMap((d) => readdirSync(path.join(root, d.name)).filter((n) => n.includes('-claw-eval-')));
};
const task = (id: string) => prepared.tasks.find((t) => t.id === id)!;
const createEpisode = async (id: string) => (await client.createAndWait({ type: 'claw', claw_eval_task: id, labels: {} } as never, 600)).sandbox_id;
// N04: asks, gets the user's answer, lists the notes, answers; the user is then done.
const CLARIFY: Turn[] = [{ say: 'Which note do you mean?' }, { call: 'notes_list', args: {} }, { say: 'It is the Budget review note.' }];

describe.runIf(BWRAP)('Claw-Eval task kinds as episodes of the server', () => {
  beforeAll(async () => {
    user = await startOpenAIServer((req) => {
      if (userFails) return { status: 500, body: { error: { message: 'user model overloaded', type: 'server_error' } } };
      return JSON.stringify(req.body.messages).includes('Budget review') ? 'Thanks! [DONE]' : 'The one about money, I think.';
    });
    judge = await startOpenAIServer(() => '{"score": 0.6, "reasoning": "names the notes, misses a ticket"}');
    prepared = await prepareClawEvalCheckout({ dir: ROOT, cacheDir: CACHE, indexUrl: INDEX });
    grove = await startEmbeddedGrove({
      maxSandboxes: 8,
      // the shell sandboxes' limits, which the services' sandbox gets too
      flags: { clawEval: ROOT, clawEvalCache: CACHE, ...(INDEX ? { clawEvalIndexUrl: INDEX } : {}), clawEvalUserUrl: user.url, clawEvalUserModel: 'user-m', judgeUrl: judge.url, judgeModel: 'test-judge', shellMemoryMb: MEMORY_MB, shellMaxProcesses: MAX_PROCS },
    });
    client = new GroveClient({ baseUrl: grove.url, apiKey: grove.apiKey, timeoutMs: 600_000 });
  }, 900_000);
  afterAll(async () => {
    client?.close();
    await grove?.close();
    await user?.close();
    await judge?.close();
    if (prepared) rmSync(prepared.tmp, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  });

  it('user_agent: /reply answers with the checkout\'s simulated user on the server\'s user model; graded as the batch grades it', async () => {
    const before = user.requests.length;
    const id = await createEpisode('N04_user_agent');
    const info = await client.getSandbox(id);
    expect((info as any).claw_eval).toMatchObject({ task_id: 'N04_user_agent', user_agent: { max_rounds: 3 } });
    const { replies, grade } = await drive(id, CLARIFY);
    expect(replies).toEqual([
      { user: '[user_agent]\nThe one about money, I think.', done: false, rounds: 1 },
      { user: null, done: true, rounds: 1 },
    ]);
    // the user model was called through Grove's client, with the persona and the conversation
    const calls = user.requests.slice(before);
    expect(calls).toHaveLength(2);
    expect(calls[0]!.body.model).toBe('user-m');
    expect(JSON.stringify(calls[0]!.body.messages)).toContain('remembers only that the note was about money');
    expect(JSON.stringify(calls[1]!.body.messages)).toContain('The one about money, I think.');
    // the conversation is over: another call or reply is refused; the grade stays
    for (const [u, b] of [['reply', { text: 'more' }], ['call', { tool: 'notes_list' }]] as const) {
      const r = await api('POST', `/sandboxes/${id}/claw-eval/${u}`, b);
      expect([r.status, r.json.error.code], u).toEqual([400, 'invalid_request']);
    }
    await client.deleteSandbox(id);
    const batch = await runClawEval({ root: prepared.root, python: prepared.python, driver: prepared.driver, tasks: [task('N04_user_agent')], trials: 1, concurrency: 1, policy: scripted(CLARIFY), userModel: chatUserModel({ baseURL: user.url, model: 'user-m' }) });
    const b = batch.results[0]!;
    expect(b.user_rounds).toBe(1);
    expect(grade.task_score).toBe(1);
    expect([grade.task_score, grade.scores]).toEqual([b.grade!.task_score, b.grade!.scores]);
  }, 600_000);

  it('user_agent through grove harness run: one harness run per round, the conversation in GROVE_TASK, graded as the batch', async () => {
    // a harness that asks first, and answers once the conversation holds the user's reply
    const cmd = `case "$GROVE_TASK" in *"conversation so far"*) echo "It is the Budget review note.";; *) echo "Which note do you mean?";; esac`;
    const proxy = await startProxy({ upstream: user.url, dir: path.join(tmp, 'proxy'), callTimeoutMs: 60_000 });
    let r;
    try {
      r = await runHarness({ client, proxy, cmd, task: { kind: 'claw-eval', id: 'N04_user_agent', prompt: '' }, model: 'm', timeoutS: 300, outDir: path.join(tmp, 'episodes'), episodeId: 'harness-user-agent', groveUrl: grove.url });
    } finally {
      await proxy.close();
    }
    const episode = JSON.parse(readFileSync(path.join(r.episodeDir, 'episode.json'), 'utf8'));
    expect(episode.verdicts[0], JSON.stringify(episode)).toMatchObject({ judge: 'claw-eval', outcome: 'success', details: { user_rounds: 1 } });
    const batch = await runClawEval({ root: prepared.root, python: prepared.python, driver: prepared.driver, tasks: [task('N04_user_agent')], trials: 1, concurrency: 1, policy: scripted([{ say: 'Which note do you mean?' }, { say: 'It is the Budget review note.' }]), userModel: chatUserModel({ baseURL: user.url, model: 'user-m' }) });
    expect(r.reward).toBe(batch.results[0]!.grade!.task_score);
  }, 600_000);

  it('user_agent through the CLI: --claw-eval-user-key is the user model\'s bearer key and reaches no harness, file or argv', async () => {
    const KEY = 'sk-user-flag-7f3a91c2';
    const before = user.requests.length;
    const cmd = `env; cat /proc/*/cmdline 2>/dev/null | tr '\\0' ' '; case "$GROVE_TASK" in *"conversation so far"*) echo "It is the Budget review note.";; *) echo "Which note do you mean?";; esac`;
    const out: string[] = [];
    const err: string[] = [];
    const dir = path.join(tmp, 'harness-cli');
    const code = await harnessRun(['--cmd', cmd, '--upstream', user.url, '--model', 'm', '--claw-eval', ROOT, '--claw-eval-cache', CACHE, ...(INDEX ? ['--index-url', INDEX] : []), '--claw-eval-task', 'N04_user_agent', '--claw-eval-user-url', user.url, '--claw-eval-user-model', 'user-m', '--claw-eval-user-key', KEY, '--out', dir, '--timeout', '300'], { out: (x: string) => void out.push(x), err: (x: string) => void err.push(x) });
    expect(code, err.join('')).toBe(0);
    expect(out.join('')).toMatch(/N04_user_agent--\w+: /);
    const calls = user.requests.slice(before);
    expect(calls.length).toBeGreaterThan(0);
    for (const r of calls) expect(r.headers.authorization).toBe(`Bearer ${KEY}`);
    // nothing the run wrote holds it: the harness's log (its environment and every argv it could see), the episode
    const files = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(d, e.name)) : [path.join(d, e.name)]));
    const written = files(dir);
    expect(written.some((f) => f.endsWith('harness.log') && readFileSync(f, 'utf8').includes('GROVE_TASK'))).toBe(true);
    for (const f of written) expect(readFileSync(f).includes(KEY), f).toBe(false);
  }, 600_000);

  it('sandbox tools: Bash in a shell sandbox of the server, the env snapshot read after; graded as the batch grades it', async () => {
    const turns: Turn[] = [{ call: 'Bash', args: { command: 'wc -l fixtures/data.txt' } }, { say: 'data.txt has 3 lines.' }];
    const id = await createEpisode('N05_shell');
    expect((await api('GET', `/sandboxes/${id}/claw-eval/tools`)).json.tools.map((t: any) => t.function.name)).toEqual(['Bash', 'Read', 'Write', 'Glob']);
    const call = await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: 'Bash', arguments: { command: 'wc -l fixtures/data.txt; id -u' } });
    expect(call.json.status).toBe(200);
    expect(call.json.body.stdout).toMatch(/^3 fixtures\/data.txt\n/);
    expect(call.json.body.stdout.split('\n')[1]).not.toBe('0'); // not root inside
    expect(episodeShells()).toHaveLength(1);
    await client.deleteSandbox(id);
    expect(episodeShells()).toEqual([]);
    const id2 = await createEpisode('N05_shell');
    const { replies, grade } = await drive(id2, turns);
    expect(replies).toEqual([{ user: null, done: true, rounds: 0 }]);
    await client.deleteSandbox(id2);
    const sandboxPy = await ensureClawEvalSandboxPython(prepared.root, { indexUrl: INDEX });
    const provider = clientShellProvider(client, { block_network: true });
    const sandbox: ClawEvalSandboxProvider = { python: sandboxPy.python, tools: await clawEvalSandboxTools(prepared), open: async (labels) => provider.open(labels) };
    const batch = await runClawEval({ root: prepared.root, python: prepared.python, driver: prepared.driver, tasks: [task('N05_shell')], trials: 1, concurrency: 1, policy: scripted(turns), sandbox });
    expect(grade.task_score).toBe(1);
    expect([grade.task_score, grade.scores]).toEqual([batch.results[0]!.grade!.task_score, batch.results[0]!.grade!.scores]);
    // no shell sandbox of an episode is left behind
    expect(episodeShells()).toEqual([]);
  }, 600_000);

  it('judged: the grader\'s judge calls go to the server\'s judge; the episode\'s grade equals the batch\'s for the same calls', async () => {
    const turns: Turn[] = [{ call: 'notes_list', args: {} }, { call: 'tickets_list', args: {} }, { say: 'Notes: Budget review, Team offsite. Tickets: TK-9.' }];
    const seen = judge.requests.length;
    const id = await createEpisode('N03_judged_digest');
    const { grade } = await drive(id, turns);
    await client.deleteSandbox(id);
    expect(grade).toMatchObject({ task_score: 0.84, judge_calls: 1 });
    expect(judge.requests.slice(seen)).toHaveLength(1);
    expect(judge.requests[seen]!.body.model).toBe('test-judge');
    expect(JSON.stringify(judge.requests[seen]!.body.messages)).toContain('names every note and every open ticket');
    const jm = new JudgeModel({ baseURL: judge.url, model: 'test-judge' });
    const batch = await runClawEval({
      root: prepared.root, python: prepared.python, driver: prepared.driver, tasks: [task('N03_judged_digest')], trials: 1, concurrency: 1, policy: scripted(turns),
      judge: { model: 'test-judge', relay: async (req) => (await jm.call({ purpose: 'test', messages: req.messages as never, parse: (t) => t, params: { temperature: req.temperature, maxTokens: req.max_tokens } })).text },
    });
    expect([grade.task_score, grade.scores]).toEqual([batch.results[0]!.grade!.task_score, batch.results[0]!.grade!.scores]);
    // the judge saw the same request from both paths
    expect(judge.requests[seen + 1]!.body.messages).toEqual(judge.requests[seen]!.body.messages);
  }, 600_000);

  it('a service slower than the startup deadline: service_start_failed naming it (episode); an errored trial, not retried (batch)', async () => {
    const r = await api('POST', '/sandboxes', { type: 'claw', claw_eval_task: 'N11_slow_service' });
    expect(r.status).toBe(201);
    const t0 = Date.now();
    const w = await api('GET', `/sandboxes/${r.json.sandbox_id}/wait?timeout=60`);
    expect(Date.now() - t0).toBeLessThan(40_000);
    expect(w.json.status).toBe('error');
    expect(w.json.error.code).toBe('service_start_failed');
    expect(w.json.error.message).toMatch(/service slow did not become ready within the startup deadline \(3 s; the task's ready_timeout is 2 s\)/);
    await api('DELETE', `/sandboxes/${r.json.sandbox_id}`);
    const b = await runClawEvalTrial(task('N11_slow_service'), 0, { root: prepared.root, python: prepared.python, driver: prepared.driver, policy: scripted([{ say: 'x' }]) });
    expect(b).toMatchObject({ attempts: 1, error: expect.stringMatching(/service slow did not become ready within the startup deadline/) });
    // the slow service dies with its trial (its sandbox is SIGKILLed; its PID namespace goes with it)
    const cmdline = (pid: string) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        return '';
      }
    };
    const slow = () => readdirSync('/proc').filter((d) => /^\d+$/.test(d) && cmdline(d).includes('mock_services/slow'));
    for (let i = 0; i < 50 && slow().length; i++) await new Promise((res) => setTimeout(res, 100));
    expect(slow()).toEqual([]);
  }, 300_000);

  it.runIf(CGROUPS)('attacker: a service eating memory is OOM-killed inside its cgroup (memory limit); the host is unaffected', async () => {
    const id = await createEpisode('N12_memory_hog');
    const groups = serviceGroups('memory');
    expect(groups).toHaveLength(1);
    expect(Number(readFileSync(path.join(groups[0]!, 'memory.limit_in_bytes'), 'utf8'))).toBe(MEMORY_MB * 1024 * 1024);
    const small = await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: 'hog_eat', arguments: { mb: 16 } });
    expect(small.json).toMatchObject({ status: 200, body: { ate_mb: expect.any(Number) } });
    // twice the limit: the service dies, the call answers an error; the server and the host go on
    const big = await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: 'hog_eat', arguments: { mb: 2 * MEMORY_MB } });
    expect(big.status).toBe(200);
    expect(big.json.status).toBe(500);
    // the kernel's OOM killer acted inside the services' memory cgroup (or the limit refused the pages)
    const oom = readFileSync(path.join(groups[0]!, 'memory.oom_control'), 'utf8');
    const hits = Number(/oom_kill (\d+)/.exec(oom)?.[1] ?? 0) + Number(readFileSync(path.join(groups[0]!, 'memory.failcnt'), 'utf8')) + Number(readFileSync(path.join(groups[0]!, 'memory.memsw.failcnt'), 'utf8'));
    expect(hits, oom).toBeGreaterThan(0);
    expect(Number(readFileSync(path.join(groups[0]!, 'memory.max_usage_in_bytes'), 'utf8'))).toBeLessThanOrEqual(MEMORY_MB * 1024 * 1024);
    expect(execFileSync('/bin/echo', ['host ok'], { encoding: 'utf8' })).toBe('host ok\n');
    expect((await api('GET', '/health')).status).toBe(200);
    await client.deleteSandbox(id);
    expect(serviceGroups('memory')).toEqual([]);
  }, 300_000);

  it.runIf(CGROUPS)('attacker: a fork-bombing service is held to the process limit (pids cgroup); all of it dies with the episode', async () => {
    const bombs = () => readdirSync('/proc').filter((d) => {
      try {
        return /^\d+$/.test(d) && readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('mock_services/bomb');
      } catch {
        return false;
      }
    });
    const id = await createEpisode('N13_fork_bomb');
    const groups = serviceGroups('pids');
    expect(groups).toHaveLength(1);
    expect(readFileSync(path.join(groups[0]!, 'pids.max'), 'utf8').trim()).toBe(String(MAX_PROCS));
    let st: any;
    for (let i = 0; i < 200; i++) {
      st = (await api('POST', `/sandboxes/${id}/claw-eval/call`, { tool: 'bomb_status' })).json.body;
      if (st?.done) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(st.done).toBe(true);
    expect(st.refused).toBeGreaterThan(0);
    expect(st.forked).toBeLessThan(MAX_PROCS);
    expect(Number(readFileSync(path.join(groups[0]!, 'pids.current'), 'utf8'))).toBeLessThanOrEqual(MAX_PROCS);
    expect(bombs().length).toBeLessThanOrEqual(MAX_PROCS);
    expect(execFileSync('/bin/echo', ['host ok'], { encoding: 'utf8' })).toBe('host ok\n');
    await client.deleteSandbox(id);
    for (let i = 0; i < 50 && bombs().length; i++) await new Promise((r) => setTimeout(r, 100));
    expect(bombs()).toEqual([]);
    expect(serviceGroups('pids')).toEqual([]);
  }, 300_000);

  it('attacker: /reply on the wrong sandbox, with a bad body, a failing user model; refusals without shells or a user model', async () => {
    const own = await client.createAndWait({ type: 'claw', labels: {} } as never, 60);
    const wrong = await api('POST', `/sandboxes/${own.sandbox_id}/claw-eval/reply`, { text: 'hi' });
    expect([wrong.status, wrong.json.error.code]).toEqual([409, 'wrong_sandbox_type']);
    await client.deleteSandbox(own.sandbox_id);
    const id = await createEpisode('N04_user_agent');
    for (const body of [{}, { text: 5 }, { text: 'x', extra: 1 }, { text: 'x'.repeat(1_000_001) }]) {
      const r = await api('POST', `/sandboxes/${id}/claw-eval/reply`, body);
      expect(r.status, JSON.stringify(body).slice(0, 50)).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(r.text).not.toMatch(/at .*\.ts:\d+/);
    }
    userFails = true;
    try {
      const r = await api('POST', `/sandboxes/${id}/claw-eval/reply`, { text: 'Which note?' });
      expect([r.status, r.json.error.code]).toEqual([502, 'model_unavailable']);
      expect(r.json.error.message).toMatch(/simulated user/);
      expect(r.text).not.toMatch(/at .*\.ts:\d+/);
    } finally {
      userFails = false;
    }
    await client.deleteSandbox(id);
    // a checkout held without shells or a user model refuses those kinds before anything starts
    const bare = new ClawEvalHost({ dir: ROOT, cacheDir: CACHE });
    expect(() => bare.check('N05_shell')).toThrow(/no shell sandboxes/);
    expect(() => bare.check('N04_user_agent')).toThrow(/no user model: start it with --claw-eval-user-url/);
    await bare.close();
  }, 300_000);
});
