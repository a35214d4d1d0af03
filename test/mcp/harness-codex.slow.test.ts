// A Claw task run by the unmodified Codex CLI through MCP: `grove harness run`'s runner configures Codex (its
// config.toml in the sandbox's HOME) to use the Claw sandbox's MCP server, reached through the run's gateway — the
// only origins the shell sandbox may reach are the recording proxy, the Claw app origin and that gateway. The model
// is simulated in the Responses API's streaming wire format; it calls the Claw tools Codex offers it (whatever names
// Codex gives MCP tools), the calls land in the Claw sandbox's audit log as actor "mcp", the proxy records every
// model call, and the Claw graders give the reward.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedGrove, type EmbeddedGrove } from '../../cli/commands/run-embedded.ts';
import { GroveClient } from '../../client/index.ts';
import { builtinTask } from '../../claw-env/tasks/index.ts';
import { readCalls, startProxy } from '../../proxy/index.ts';
import { runHarness } from '../../runner/harness/run.ts';
import { startResponsesServer, type ResponsesServer } from '../support/responses-sse.ts';

const CODEX = ['/usr/bin/codex', '/usr/local/bin/codex'].find((p) => existsSync(p));
const TASK = builtinTask('hand-trap-phish-cleanup')!;

type Json = Record<string, any>;
/** How Codex offers an MCP tool: a member of the server's namespace (`mcp__grove`), or a flat `mcp__grove__x`. */
function toolName(body: Json, tool: string): { name: string; namespace?: string } | undefined {
  for (const t of body.tools ?? []) {
    if (t.type === 'namespace' && t.name === 'mcp__grove' && t.tools?.some((m: Json) => m.name === tool)) return { name: tool, namespace: t.name };
    if (t.name === `mcp__grove__${tool}`) return { name: t.name };
  }
  return undefined;
}

describe.runIf(CODEX)('the Codex CLI calls Claw tools over MCP in a harness run', () => {
  let grove: EmbeddedGrove;
  let client: GroveClient;
  let responses: ResponsesServer;
  let tmp: string;
  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-mcp-codex-'));
    grove = await startEmbeddedGrove({ maxSandboxes: 8 });
    client = new GroveClient({ baseUrl: grove.url, apiKey: grove.apiKey, timeoutMs: 300_000 });
    const solution = TASK.solution!;
    responses = await startResponsesServer((body, turn) => {
      const step = solution[turn];
      if (!step) return { text: 'Moved the phishing mails to the archive.' };
      const named = toolName(body, step.tool);
      if (!named) return { text: `NO MCP TOOL ${step.tool} among ${(body.tools ?? []).map((t: Json) => t.name ?? t.type).join(',')}` };
      return { function_call: { ...named, arguments: step.args } };
    });
  }, 120_000);
  afterAll(async () => {
    client?.close();
    await grove?.close();
    await responses?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('runs the task\'s tool calls through MCP; recorded by the proxy, graded by the Claw graders', async () => {
    const provider = `model_providers.grove={name="grove",base_url="$OPENAI_BASE_URL",env_key="OPENAI_API_KEY",wire_api="responses"}`;
    const cmd = `${CODEX} exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox -c "${provider.replaceAll('"', '\\"')}" -c model_provider=grove -m "$OPENAI_MODEL" "$GROVE_TASK"`;
    const proxy = await startProxy({ upstream: responses.url, dir: path.join(tmp, 'proxy'), callTimeoutMs: 60_000 });
    let r;
    try {
      r = await runHarness({
        client, proxy, cmd, task: { kind: 'claw', id: TASK.id, prompt: TASK.prompt }, model: 'test-model', timeoutS: 180,
        outDir: path.join(tmp, 'episodes'), episodeId: 'codex-mcp-1', groveUrl: grove.url,
      });
    } finally {
      await proxy.close();
    }
    const log = readFileSync(path.join(r.episodeDir, 'harness.log'), 'utf8');
    const first = responses.requests[0];
    expect(toolName(first, TASK.solution![0].tool), `Codex offered: ${JSON.stringify((first.tools ?? []).filter((t: Json) => String(t.name).startsWith('mcp__'))).slice(0, 3000)}\n${log.slice(-3000)}`).toBeDefined();
    expect(r.harness.exit_code, log.slice(-3000)).toBe(0);
    // The Claw graders: the phishing mails archived, nothing else touched.
    expect(r.reward, log.slice(-3000)).toBe(1);
    const calls = readCalls(path.join(tmp, 'proxy'), 'codex-mcp-1').filter((c) => c.endpoint.startsWith('/responses'));
    expect(calls.length).toBe(TASK.solution!.length + 1);
    expect(calls.every((c) => c.stream && c.status === 200)).toBe(true);
    // Each tool's answer went back to the model as the function call's output.
    expect(JSON.stringify(calls[1].request_asked)).toContain('function_call_output');
    const episode = JSON.parse(readFileSync(path.join(r.episodeDir, 'episode.json'), 'utf8'));
    expect(episode).toMatchObject({ reward: 1, verdicts: [{ judge: 'claw', outcome: 'success' }], config: { network_allow: expect.arrayContaining([expect.stringMatching(/^127\.0\.0\.1:\d+$/)]) } });
    expect(episode.config.network_allow).toHaveLength(3);
  }, 300_000);
});
