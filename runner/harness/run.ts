// Harness runs: an unmodified agent harness (Codex CLI, a mini-swe-agent-style loop, ...) runs inside a shell
// sandbox, its model calls go through the recording proxy, and the run becomes one episode directory like the
// runner's. The sandbox's network rules open exactly the proxy's origin (and, for Claw tasks, that Claw sandbox's
// app origin): nothing else on loopback, no private ranges, no metadata address.
//
// MCP: with `groveUrl`, a Claw or browser task's sandbox is also offered as an MCP server (Grove's
// /sandboxes/{id}/mcp behind the sandbox's own token) through a one-run gateway on its own origin (mcp-gateway.ts):
// GROVE_MCP_URL / GROVE_MCP_TOKEN, and the Codex CLI's config ($HOME/.codex/config.toml) and Claude Code's
// .mcp.json in the workspace name it, so an unmodified harness finds the tools without flags.
//
// Flow: the task prepares the sandbox (a SWE checkout, a Claw sandbox beside it, or nothing), the harness command
// runs with OPENAI_BASE_URL / OPENAI_API_KEY for its rollout and a time limit, its output and the recorded calls
// are collected, the task's grader gives the reward, and the episode is written (one step per model call).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { GroveClient } from '../../client/index.ts';
import type { ExecResult } from '../../protocol/shell.ts';
import type { Termination, Verdict } from '../../protocol/task.ts';
import { readCalls, writeReward, type RecordingProxy } from '../../proxy/index.ts';
import { EpisodeRecorder } from '../../recording/recorder.ts';
import { evaluatePatch } from '../../swe-env/evaluate.ts';
import { prepareRepo } from '../../swe-env/repo.ts';
import { specFor } from '../../swe-env/specs.ts';
import { REPO_DIR, type RepoSources, type SweInstance } from '../../swe-env/types.ts';
import { callSteps } from './calls.ts';
import { runClawEvalRounds } from './claw-eval-rounds.ts';
import { startBrowserGateway, type BrowserGateway } from './gateway.ts';
import { startMcpGateway, type McpGateway } from './mcp-gateway.ts';
import { clientShellProvider, clientShellTarget, withSession } from '../swe/shell-session.ts';

type HarnessTask =
  /** A prompt; `check` (a command run in the sandbox after the harness) decides success by its exit code. */
  | { kind: 'prompt'; id: string; prompt: string; check?: string }
  /** A SWE-bench instance: the harness works in the checkout; its diff is graded as SWE-bench grades. */
  | { kind: 'swe'; instance: SweInstance; sources: RepoSources }
  /** A Claw task: a Claw sandbox beside the shell one; the harness reaches its apps over HTTP (CLAW_URL). */
  | { kind: 'claw'; id: string; prompt: string }
  /** A task of the server's Claw-Eval checkout (`--claw-eval DIR`): its services in a Claw sandbox beside the shell
   * one, reached only over MCP (the harness's GROVE_MCP_URL); graded by the task's own grader.py. The prompt, when
   * empty, is the task's first message as the checkout builds it. */
  | { kind: 'claw-eval'; id: string; prompt: string }
  /** A browser task (`{suite, id}` as the server knows it, e.g. an offline site task): a browser sandbox beside the
   * shell one, reached only through a one-sandbox gateway (GROVE_BROWSER_URL); graded by the task's judge. */
  | { kind: 'browser'; task: { suite: string; id: string }; prompt: string };

export interface HarnessRunOptions {
  client: GroveClient;
  proxy: RecordingProxy;
  /** The harness command (bash -c), run in the sandbox's workspace (a SWE task: in the checkout). */
  cmd: string;
  /** Files put into the workspace before the run (the harness itself, its config). */
  files?: { path: string; content: Buffer; mode?: string }[];
  task: HarnessTask;
  model: string;
  timeoutS: number;
  /** Episode directory root: the episode is written to `<outDir>/<episodeId>/`. */
  outDir: string;
  episodeId: string;
  env?: Record<string, string>;
  runId?: string;
  /** Grove's base URL as this process reaches it: Claw and browser tasks then get their sandbox as an MCP server. */
  groveUrl?: string;
}

export interface HarnessRunResult {
  episodeDir: string;
  termination: Termination;
  reward: number | null;
  calls: number;
  harness: { exit_code: number; timed_out: boolean };
}

function taskText(t: HarnessTask): string {
  if (t.kind === 'swe') return `Fix this issue in the repository in the current directory:\n\n${t.instance.problem_statement.trim()}`;
  return t.prompt;
}

/** The episode's suite: Claw-Eval tasks are Claw tasks (the sandbox says which: shell+claw-eval). */
function suiteOf(t: HarnessTask): 'swe-bench' | 'claw' | 'offline' {
  return t.kind === 'swe' ? 'swe-bench' : t.kind === 'claw' || t.kind === 'claw-eval' ? 'claw' : 'offline';
}

function taskId(t: HarnessTask): string {
  return t.kind === 'swe' ? t.instance.instance_id : t.kind === 'browser' ? t.task.id : t.id;
}

/** The task sandbox's MCP token (Grove's key asks for it) and a gateway serving it as `/<name>/mcp`. */
async function mcpFor(client: GroveClient, groveUrl: string, name: string, id: string): Promise<{ gateway: McpGateway; url: string; token: string }> {
  const t = JSON.parse(await (await client.request('GET', `/sandboxes/${encodeURIComponent(id)}/mcp/token`)).text()) as { token: string };
  const gateway = await startMcpGateway(groveUrl, { [name]: id });
  return { gateway, url: gateway.url(name), token: t.token };
}

/** The harnesses' own MCP configuration naming the server "grove" (the token stays in the environment). */
function mcpConfigFiles(url: string): { path: string; content: Buffer; mode?: string }[] {
  const codex = `[mcp_servers.grove]\nurl = ${JSON.stringify(url)}\nbearer_token_env_var = "GROVE_MCP_TOKEN"\ntool_timeout_sec = 300\n`;
  const claude = { mcpServers: { grove: { type: 'http', url, headers: { Authorization: 'Bearer ${GROVE_MCP_TOKEN}' } } } };
  return [
    { path: '.home/.codex/config.toml', content: Buffer.from(codex) },
    { path: '.mcp.json', content: Buffer.from(`${JSON.stringify(claude, null, 2)}\n`) },
  ];
}

export async function runHarness(o: HarnessRunOptions): Promise<HarnessRunResult> {
  const rollout = o.episodeId;
  const episodeDir = path.join(o.outDir, o.episodeId);
  const proxyOrigin = new URL(o.proxy.url).host;
  const labels = { 'grove.harness/episode': rollout.slice(0, 60), ...(o.runId ? { 'grove.run': o.runId } : {}) };
  let claw: { id: string; origin: string; token: string } | undefined;
  let clawEval: { id: string; userAgent: boolean } | undefined;
  let userRounds: number | undefined;
  let browser: { id: string; gateway: BrowserGateway } | undefined;
  let mcp: { gateway: McpGateway; url: string; token: string } | undefined;
  let sb: { sandbox_id: string } | undefined;
  let allow = [proxyOrigin];
  const key = o.proxy.issueKey(rollout);
  const started = new Date().toISOString();
  let harness: ExecResult | undefined;
  let reward: number | null = null;
  let verdict: Verdict | undefined;
  let termination: Termination;
  try {
    if (o.task.kind === 'claw') {
      const info = await o.client.createAndWait({ type: 'claw', task_id: o.task.id, labels } as never);
      const details = (info as { claw?: { origin: string; token: string } }).claw!;
      claw = { id: info.sandbox_id, origin: details.origin, token: details.token };
    }
    if (o.task.kind === 'claw-eval') {
      if (!o.groveUrl) throw new Error('a Claw-Eval task is reached only over MCP: groveUrl is required');
      const info = await o.client.createAndWait({ type: 'claw', claw_eval_task: o.task.id, labels } as never, 600);
      const details = (info as { claw_eval?: { prompt: string; user_agent?: unknown } }).claw_eval;
      clawEval = { id: info.sandbox_id, userAgent: details?.user_agent !== undefined };
      if (!o.task.prompt && details) o.task = { ...o.task, prompt: details.prompt };
    }
    if (o.task.kind === 'browser') {
      const info = await o.client.createAndWait({ type: 'browser', task: o.task.task, labels } as never, 120);
      browser = { id: info.sandbox_id, gateway: await startBrowserGateway(o.client, info.sandbox_id) };
    }
    const toolBox = claw?.id ?? clawEval?.id ?? browser?.id;
    if (o.groveUrl && toolBox) mcp = await mcpFor(o.client, o.groveUrl, claw || clawEval ? 'claw' : 'browser', toolBox);
    allow = [proxyOrigin, ...(claw ? [new URL(claw.origin).host] : []), ...(browser ? [new URL(browser.gateway.origin).host] : []), ...(mcp ? [new URL(mcp.gateway.origin).host] : [])];
    sb = await o.client.createAndWait({ type: 'shell', block_network: false, allow, labels } as never, 120);
    const target = clientShellTarget(o.client, sb.sandbox_id);
    if (o.task.kind === 'swe') await prepareRepo(target, o.task.instance, o.task.sources, specFor(o.task.instance.repo, o.task.instance.version));
    for (const f of [...(mcp ? mcpConfigFiles(mcp.url) : []), ...(o.files ?? [])]) await o.client.uploadFile(sb.sandbox_id, f.path, f.content, f.mode);
    const env: Record<string, string> = {
      OPENAI_BASE_URL: o.proxy.baseUrlFor(rollout),
      OPENAI_API_KEY: key,
      OPENAI_MODEL: o.model,
      GROVE_TASK: taskText(o.task),
      HOME: '/workspace/.home',
      ...(claw ? { CLAW_URL: claw.origin, CLAW_TOKEN: claw.token } : {}),
      ...(browser ? { GROVE_BROWSER_URL: browser.gateway.origin, GROVE_BROWSER_TOKEN: browser.gateway.token } : {}),
      ...(mcp ? { GROVE_MCP_URL: mcp.url, GROVE_MCP_TOKEN: mcp.token } : {}),
      ...o.env,
    };
    await o.client.exec(sb.sandbox_id, { command: 'mkdir -p /workspace/.home', timeout_s: 30 });
    const box = sb.sandbox_id;
    const run = (task: string, timeoutS: number) => o.client.exec(box, { command: o.cmd, cwd: o.task.kind === 'swe' ? REPO_DIR : undefined, env: { ...env, GROVE_TASK: task }, timeout_s: timeoutS, max_output_bytes: 4 * 1024 * 1024 });
    if (clawEval?.userAgent) {
      // a simulated user answers each final output until it is done (claw-eval-rounds.ts)
      const r = await runClawEvalRounds({ client: o.client, episodeId: clawEval.id, first: env.GROVE_TASK!, timeoutS: o.timeoutS, run });
      harness = r.last;
      userRounds = r.rounds;
    } else harness = await run(env.GROVE_TASK!, o.timeoutS);
    termination = harness.timed_out ? { reason: 'timeout', detail: `harness ran past ${o.timeoutS} s` } : { reason: 'task_completed', ...(harness.exit_code ? { detail: `harness exited ${harness.exit_code}` } : {}) };
    // Grading: by the task's own rule.
    if (o.task.kind === 'prompt' && o.task.check) {
      const c = await o.client.exec(sb.sandbox_id, { command: o.task.check, timeout_s: 120, merge_stderr: true });
      reward = c.exit_code === 0 ? 1 : 0;
      verdict = { judge: 'check', outcome: reward ? 'success' : 'failure', score: reward, reasoning: `check exited ${c.exit_code}: ${c.stdout.slice(-500)}` };
    } else if (o.task.kind === 'swe') {
      const diff = await o.client.exec(sb.sandbox_id, { command: 'git add -A && git diff --cached', cwd: REPO_DIR, timeout_s: 120, max_output_bytes: 16 * 1024 * 1024 });
      const { instance: inst, sources } = o.task;
      const spec = specFor(inst.repo, inst.version)!;
      const e = await withSession(clientShellProvider(o.client, { block_network: true }), { ...labels, 'grove.swe/role': 'eval' }, async (box) => {
        await prepareRepo(box.shell, inst, sources, spec);
        return evaluatePatch(box.shell, inst, spec, diff.stdout);
      });
      reward = e.resolved ? 1 : 0;
      verdict = { judge: 'swe-bench', outcome: e.resolved ? 'success' : 'failure', score: reward, reasoning: e.resolution, details: { patch: diff.stdout.slice(0, 100_000), tests: e.report?.tests ?? {} } };
    } else if (browser) {
      const e = JSON.parse(await (await o.client.request('POST', `/sandboxes/${encodeURIComponent(browser.id)}/evaluate`, { answer: harness.stdout.trim().slice(-100_000) })).text()) as { reward: number | null; judge_error: string | null; verdict: Verdict | null };
      reward = e.reward;
      verdict = e.verdict ?? { judge: 'task', outcome: 'judge_error', reasoning: e.judge_error ?? 'no verdict' };
    } else if (clawEval) {
      // The task's own grader.py over the trace of the MCP calls, the harness's output as the final answer.
      const g = JSON.parse(await (await o.client.request('POST', `/sandboxes/${encodeURIComponent(clawEval.id)}/claw-eval/grade`, { answer: harness.stdout.trim().slice(-100_000) })).text()) as { score: number | null; passed?: boolean; errored?: boolean; error?: string };
      reward = g.score;
      verdict = g.errored
        ? { judge: 'claw-eval', outcome: 'judge_error', reasoning: `the task's grader failed: ${g.error ?? ''}`.slice(0, 4000), details: g as Record<string, unknown> }
        : { judge: 'claw-eval', outcome: g.passed ? 'success' : 'failure', ...(reward !== null ? { score: Math.max(0, Math.min(1, reward)) } : {}), details: { ...g, ...(userRounds !== undefined ? { user_rounds: userRounds } : {}) } };
    } else if (claw) {
      const g = JSON.parse(await (await o.client.request('POST', `/sandboxes/${encodeURIComponent(claw.id)}/claw/grade`, { answer: harness.stdout.slice(-100_000) })).text()) as { score?: number; passed?: boolean };
      reward = typeof g.score === 'number' ? g.score : null;
      verdict = { judge: 'claw', outcome: g.passed ? 'success' : 'failure', ...(reward !== null ? { score: Math.max(0, Math.min(1, reward)) } : {}), details: g as Record<string, unknown> };
    }
  } catch (err) {
    termination = { reason: 'env_error', detail: (err as Error).message };
  } finally {
    if (sb) await o.client.deleteSandbox(sb.sandbox_id).catch(() => undefined);
    if (claw) await o.client.deleteSandbox(claw.id).catch(() => undefined);
    if (clawEval) await o.client.deleteSandbox(clawEval.id).catch(() => undefined);
    await mcp?.gateway.close();
    if (browser) {
      await browser.gateway.close();
      await o.client.deleteSandbox(browser.id).catch(() => undefined);
    }
  }
  // The episode: one step per model call of the rollout, the harness's output beside it.
  await o.proxy.store.flushed();
  const calls = readCalls(o.proxy.store.dir, rollout);
  if (reward !== null) writeReward(o.proxy.store.dir, rollout, reward, { task: taskId(o.task) });
  const recorder = await EpisodeRecorder.create(episodeDir, {
    episode_id: o.episodeId,
    run_id: o.runId,
    started_at: started,
    task: { id: taskId(o.task), suite: suiteOf(o.task), site: 'harness', question: taskText(o.task), extra: {}, flags: [] },
    config: { harness: o.cmd, model: o.model, rollout, proxy: o.proxy.url, timeout_s: o.timeoutS, sandbox: o.task.kind === 'browser' ? 'shell+browser' : o.task.kind === 'claw' ? 'shell+claw' : o.task.kind === 'claw-eval' ? 'shell+claw-eval' : 'shell', network_allow: allow },
  });
  for (const s of callSteps(calls)) await recorder.recordStep(s);
  await recorder.finish({ termination, ...(reward !== null ? { reward } : {}), ...(verdict ? { verdicts: [verdict] } : {}), answer: harness?.stdout.slice(-10_000) });
  await writeFile(path.join(episodeDir, 'harness.log'), `$ ${o.cmd}\nexit ${harness?.exit_code ?? '-'}${harness?.timed_out ? ' (timed out)' : ''}\n--- stdout\n${harness?.stdout ?? ''}\n--- stderr\n${harness?.stderr ?? ''}`);
  return { episodeDir, termination, reward, calls: calls.length, harness: { exit_code: harness?.exit_code ?? -1, timed_out: harness?.timed_out ?? false } };
}
