// The CLI tells the truth: the real `grove` process (bin/grove.mjs) exits non-zero when the work failed, every
// message starts `grove <command>: `, no raw errno text, unknown ids are named, long exports say what they do.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBroken } from '../../cli/commands/run.ts';
import { writeSyntheticEpisode } from '../../recording/synthetic.ts';
import { REPO } from '../support/datasets.ts';
import { startOpenAIServer, type OpenAITestServer } from '../support/openai-server.ts';

const GROVE = join(REPO, 'bin/grove.mjs');

function grove(args: string[], timeout = 120_000): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((ok) => {
    execFile(process.execPath, [GROVE, ...args], { cwd: tmp, timeout, maxBuffer: 16 << 20 }, (error, out, err) => {
      ok({ code: error ? ((error as { code?: number }).code ?? null) : 0, out, err });
    });
  });
}

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const { port } = s.address() as AddressInfo;
  await new Promise((ok) => s.close(ok));
  return port;
}

let tmp: string;
let episodes: string;
let judgeServer: OpenAITestServer;
let refusing: http.Server;
let refusingUrl: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'grove-cli-exit-'));
  episodes = join(tmp, 'episodes');
  for (const id of ['a', 'b']) {
    await writeSyntheticEpisode(join(episodes, id), { episodeId: id, suite: 'offline', site: 'shop', steps: 2, question: `Buy item ${id}` });
  }
  // A judge model that fails every call the way a misconfigured deployment does.
  judgeServer = await startOpenAIServer(() => ({ status: 404, body: { error: { message: 'The model `judge` does not exist.', type: 'invalid_request_error' } } }));
  // A policy endpoint that is there but refuses the key.
  refusing = http.createServer((_req, res) => res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"message":"invalid api key"}}'));
  await new Promise<void>((ok) => refusing.listen(0, '127.0.0.1', ok));
  refusingUrl = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await judgeServer?.close();
  await new Promise((ok) => refusing?.close(ok));
  await rm(tmp, { recursive: true, force: true });
});

describe('grove export', () => {
  it('of a folder that does not exist: exit 1, named, nothing written', async () => {
    const r = await grove(['export', '--format', 'webvoyager', '--out', join(tmp, 'never'), join(tmp, 'missing')]);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`grove export: ${join(tmp, 'missing')}: no such directory\n`);
    expect(existsSync(join(tmp, 'never'))).toBe(false);
  });

  it('of a folder without episodes: exit 1', async () => {
    await mkdir(join(tmp, 'empty'));
    const r = await grove(['export', '--format', 'webvoyager', '--out', join(tmp, 'out-empty'), join(tmp, 'empty')]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^grove export: no episodes found under /m);
  });

  it('--format gif prints one progress line per episode on stderr before its file, exit 0', async () => {
    const out = join(tmp, 'gif');
    const r = await grove(['export', '--format', 'gif', '--width', '160', '--out', out, episodes]);
    expect(r.err).toMatch(/\[1\/2\] \S+: \d+ steps → gif\n/);
    expect(r.err).toMatch(/\[2\/2\] \S+: \d+ steps → gif\n/);
    expect(r.code).toBe(0);
    expect((await readdir(out)).filter((f) => f.endsWith('.gif'))).toHaveLength(2);
  });
});

describe('grove judge', () => {
  it('exits 1 when every verdict is judge_error, after reporting them', async () => {
    const r = await grove(['judge', '--suite', 'webvoyager', '--episodes', episodes, '--out', join(tmp, 'judged'), '--no-cache', '--retries', '0', '--judge-url', judgeServer.url, '--judge-model', 'judge']);
    expect(r.err).toMatch(/: judge_error \(/);
    expect(r.err).toMatch(/^grove judge: every verdict is judge_error \(2 of 2\)/m);
    expect(r.code).toBe(1);
    expect(judgeServer.requests.length).toBeGreaterThanOrEqual(2);
  });
});

describe('grove run', () => {
  it('stops before any episode when the policy is unreachable: exit 1, one line, no run folder', async () => {
    const port = await closedPort();
    const out = join(tmp, 'run-unreachable');
    const r = await grove(['run', '--suite', 'offline', '--policy', `http://127.0.0.1:${port}/v1`, '--model', 'm', '--limit', '1', '--out', out]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`grove run: cannot start: the policy at http://127.0.0.1:${port}/v1: unreachable (ECONNREFUSED)`);
    expect(r.err).not.toMatch(/\n\s+at /); // no stack trace
    expect(existsSync(out)).toBe(false);
  });

  it('stops when the policy refuses the key, and names an unreachable Grove server', async () => {
    const port = await closedPort();
    const r = await grove(['run', '--suite', 'offline', '--policy', refusingUrl, '--model', 'm', '--limit', '1', '--server', `http://127.0.0.1:${port}`, '--api-key', 'grove-test-key', '--out', join(tmp, 'run-refused')]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`the policy at ${refusingUrl}: refused the API key (HTTP 401)`);
    expect(r.err).toMatch(new RegExp(`the Grove server at http://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
  });

  it('a finished run whose every episode ended on the model API or the environment is a failure', () => {
    expect(runBroken({ finished: 3, termination_reasons: { generation_error: 2, env_error: 1 } })).toMatch(/generation_error=2, env_error\/website_error=1/);
    expect(runBroken({ finished: 3, termination_reasons: { generation_error: 2, task_completed: 1 } })).toBeNull();
    expect(runBroken({ finished: 0, termination_reasons: {} })).toBeNull();
  });
});

describe('errors name the problem, under one prefix', () => {
  it('k8s render --k8s-config /missing: no raw ENOENT', async () => {
    const missing = join(tmp, 'no-such-k8s.json');
    const r = await grove(['k8s', 'render', '--k8s-config', missing]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`grove k8s render: kubernetes config ${missing}: no such file\n`);
  });

  it('claw run --ids bad names the unknown id (and only it)', async () => {
    const r = await grove(['claw', 'run', '--scripted', '--ids', 'bad-id,gen-todo_create-1']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('grove claw: --ids: unknown task id bad-id (grove claw tasks lists them)\n');
  });

  it('tasks, view and judge use the same prefix for a missing path', async () => {
    const missing = join(tmp, 'nope');
    const [t, v, j] = await Promise.all([
      grove(['tasks', 'list', '--suite', 'webvoyager', '--file', missing]),
      grove(['view', missing]),
      grove(['judge', '--suite', 'webvoyager', '--episodes', missing, '--judge-url', judgeServer.url, '--judge-model', 'judge']),
    ]);
    expect([t.code, v.code, j.code]).toEqual([1, 1, 1]);
    expect(t.err).toBe(`grove tasks: ${missing}: no such file (check the --file path) [file_not_found]\n`);
    expect(v.err).toBe(`grove view: ${missing} is not a readable directory\n`);
    expect(j.err).toBe(`grove judge: --episodes ${missing}: no such directory\n`);
  });
});

const canSandbox = existsSync('/usr/bin/bwrap') && process.getuid?.() === 0;
describe.skipIf(!canSandbox)('grove harness run', () => {
  it('exits 1 when the harness exited non-zero, naming its exit code', async () => {
    const out = join(tmp, 'harness');
    const r = await grove(['harness', 'run', '--prompt', 'say hi', '--cmd', 'echo trying; exit 2', '--upstream', judgeServer.url, '--model', 'm', '--timeout', '60', '--out', out], 240_000);
    expect(r.out).toMatch(/task_completed \(harness exited 2\)/);
    expect(r.err).toMatch(/^grove harness: the harness exited 2 \(its output: .*harness\.log\)$/m);
    expect(r.code).toBe(1);
  }, 300_000);
});
