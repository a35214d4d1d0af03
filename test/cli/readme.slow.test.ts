// Every command the README shows, run as a user would type it (as child processes, `grove` = node bin/grove.mjs)
// against local servers, so the README cannot drift from the code again. The test first collects every command
// line of the README's sh blocks and fails on one it does not know: a new README command needs a line here.
//
// What is substituted, and only this: ports (fixed ports in the README → free ones), `../shared/datasets` (found
// from a git worktree too), `runs/` and `OUT` (a temp dir), the model/site URLs (→ local servers). Commands that
// need the internet (`grove run` on WebVoyager's live sites) are checked by the command's own argument parser;
// the setup/test one-liners are syntax-checked (running `npm test` inside the tests would recurse).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRunArgs } from '../../cli/commands/run-args.ts';
import { writeSyntheticEpisode } from '../../recording/synthetic.ts';
import { DATASETS, REPO } from '../support/datasets.ts';
import { startOpenAIServer, type OpenAITestServer } from '../support/openai-server.ts';

const run = promisify(execFile);
const GROVE = `"${process.execPath}" "${join(REPO, 'bin/grove.mjs')}"`;
const haveData = existsSync(join(DATASETS, 'webvoyager/WebVoyager_data.jsonl'));
if (!haveData) console.warn(`[test/cli/readme] ${DATASETS} is absent: the README command test is skipped`);

/** The README's sh blocks as command lines: continuations joined, comment lines and trailing comments dropped. */
export function readmeCommands(md: string): { block: number; line: string }[] {
  const out: { block: number; line: string }[] = [];
  const blocks = [...md.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  blocks.forEach((text, block) => {
    const joined = text.replace(/\\\n\s*/g, '');
    for (const raw of joined.split('\n')) {
      const line = raw.replace(/\s{2,}#.*$/, '').trim();
      if (line && !line.startsWith('#')) out.push({ block, line });
    }
  });
  return out;
}

let tmp: string;
let model: OpenAITestServer;
let site: http.Server;
let siteHost: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'grove-readme-'));
  model = await startOpenAIServer(() => 'Looks done. SUCCESS');
  site = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>fixture</title><button style="position:absolute;left:40%;top:25%;width:20%;height:10%">OK</button>');
  });
  await new Promise<void>((ok) => site.listen(0, '127.0.0.1', ok));
  siteHost = `127.0.0.1:${(site.address() as AddressInfo).port}`;
  for (const id of ['a', 'b']) {
    await writeSyntheticEpisode(join(tmp, 'runs/wv/episodes', id), { episodeId: id, taskId: `Site--${id}`, suite: 'webvoyager', site: 'Site', steps: 2, question: `Find ${id}` });
  }
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await model?.close();
  await new Promise((ok) => site?.close(ok));
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const { port } = s.address() as AddressInfo;
  await new Promise((ok) => s.close(ok));
  return port;
}

/** The README line with its local substitutions, `grove` → node bin/grove.mjs. */
function local(line: string, subs: [string | RegExp, string][] = []): string {
  let l = line.replace(/^node bin\/grove\.mjs /, 'grove ').replace(/^grove /, `${GROVE} `);
  l = l.split('../shared/datasets').join(DATASETS).replace(/(^|\s)runs\//g, `$1${tmp}/runs/`);
  for (const [from, to] of subs) l = typeof from === 'string' ? l.split(from).join(to) : l.replace(from, to);
  return l;
}

const sh = (cmd: string, env: Record<string, string> = {}) => run('bash', ['-c', cmd], { cwd: REPO, env: { ...process.env, ...env }, maxBuffer: 64 << 20 });

/** Starts a long-running command; resolves once its stderr/stdout shows `ready`. */
async function start(cmd: string, ready: RegExp, env: Record<string, string> = {}): Promise<{ child: ChildProcess; text: () => string }> {
  const child = spawn('bash', ['-c', `exec ${cmd}`], { cwd: REPO, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let text = '';
  await new Promise<void>((ok, fail) => {
    const on = (d: Buffer) => {
      text += d.toString();
      if (ready.test(text)) ok();
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    child.on('exit', (code) => fail(new Error(`${cmd} exited ${code} before it was ready:\n${text}`)));
  });
  return { child, text: () => text };
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
  child.kill('SIGTERM');
  return exited;
}

describe.skipIf(!haveData)('every command in the README', () => {
  const md = readFileSync(join(REPO, 'README.md'), 'utf8');
  const commands = readmeCommands(md);

  // Each README command → what runs it. A README line not matched here fails the first test.
  const handlers: [RegExp, (line: string) => Promise<void>][] = [];
  const handle = (re: RegExp, fn: (line: string) => Promise<void>) => handlers.push([re, fn]);
  const quickStart: string[] = [];

  handle(/^bash scripts\/setup\.sh && npm (run demo|test)$/, async (line) => {
    await sh('bash -n scripts/setup.sh');
    const script = /(\w+)$/.exec(line)![1];
    expect(JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).scripts[script]).toBeTruthy();
  });
  // The quick start runs as one session (below); its lines are collected here.
  handle(/^(node bin\/grove\.mjs serve --port 8321 |H=|curl )/, async (line) => void quickStart.push(line));
  handle(/^grove serve$/, async (line) => {
    const s = await start(local(line), /listening on http/, { GROVE_PORT: '0', GROVE_DATA_DIR: join(tmp, 'serve-data') });
    expect(s.text()).toMatch(/generated API key: \S{8,}/);
    expect(await stop(s.child)).toBe(0);
  });
  handle(/^grove demo$/, async (line) => {
    // One offline task: the whole suite takes ~2 minutes here (npm run demo is the main job, not a test).
    const { stdout } = await sh(`${local(line)} --ids Shop--0 --out ${tmp}/runs/demo`);
    expect(stdout).toMatch(/1\/1 episodes succeeded/);
    expect(existsSync(join(tmp, 'runs/demo/report.html'))).toBe(true);
  });
  handle(/^grove run /, async (line) => {
    // The live websites are not reachable here: the line is checked by grove run's own parser, files exist.
    const argv = line.replace(/^grove run /, '').split(/\s+/).map((a) => a.split('../shared/datasets').join(DATASETS));
    const parsed = parseRunArgs(argv);
    expect(parsed).toMatchObject({ ok: true });
    if (parsed.ok) expect(existsSync(parsed.args.tasks!)).toBe(true);
  });
  handle(/^grove tasks list /, async (line) => {
    const { stdout, stderr } = await sh(local(line));
    expect(stdout.trim().split('\n').length).toBeGreaterThan(10);
    expect(stderr).toMatch(/usable/);
  });
  handle(/^grove judge /, async (line) => {
    const { stdout } = await sh(local(line, [['http://127.0.0.1:8001/v1', model.url]]));
    expect(stdout).toMatch(/judge webvoyager: success rate 100\.0% \(3\/3 judged\)/);
  });
  handle(/^grove view runs\/$/, async (line) => {
    const s = await start(`${local(line)} --port 0`, /http:\/\/127\.0\.0\.1:\d+/);
    const url = /http:\/\/127\.0\.0\.1:\d+\S*/.exec(s.text())![0];
    const res = await fetch(url);
    expect(res.status).toBe(200);
    await stop(s.child);
  });
  handle(/^grove export --format /, async (line) => {
    const formats = /--format (\S+)/.exec(line)![1].split('|');
    for (const f of formats) {
      const out = join(tmp, `export-${f}`);
      await sh(local(line, [[/--format \S+/, `--format ${f}`], [' OUT ', ` ${out} `]]));
      expect(existsSync(out)).toBe(true);
    }
  });
  handle(/^grove swe run --fixture /, async (line) => {
    // The fixture repository, graded in real shell sandboxes (exit 0: the run finished).
    await sh(local(line));
    expect(existsSync(join(tmp, 'runs/swe'))).toBe(true);
  });
  handle(/^grove proxy serve /, async (line) => {
    const port = await freePort();
    const s = await start(`${local(line, [['http://127.0.0.1:8000/v1', model.url]])} --port ${port}`, /http:\/\/127\.0\.0\.1:\d+/);
    const res = await fetch(`http://127.0.0.1:${port}/r/readme/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    await stop(s.child);
  });
  handle(/^grove proxy export /, async (line) => {
    await sh(local(line, [[' samples.jsonl', ` ${tmp}/samples.jsonl`]]));
    expect(existsSync(join(tmp, 'samples.jsonl'))).toBe(true);
  });

  handle(/^grove harness run /, async (line) => {
    // The built-in bash-loop harness in a real shell sandbox against a local model server that fixes the instance
    // as a model would (edit, run the tests, submit): the harness must start, reach its model through the proxy
    // three times and leave a diff the SWE grading resolves. Exit code 0 (sh throws otherwise).
    const bash = (cmd: string) => `Next:\n\`\`\`bash\n${cmd}\n\`\`\``;
    const fix = [bash(`sed -i 's/"m": 60}/"m": 60, "s": 1}/' textkit/duration.py`), bash('python3 -m unittest 2>&1 | tail -3'), bash('echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; echo fixed')];
    const agent = await startOpenAIServer((_req, i) => fix[i] ?? bash('echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT'));
    try {
      const { stdout } = await sh(local(line, [['http://127.0.0.1:8000/v1', agent.url]]) + ` --out ${tmp}/runs/harness`);
      expect(stdout).toMatch(/: task_completed, reward 1, 3 model calls recorded; episode in /);
      expect(agent.requests).toHaveLength(3);
    } finally {
      await agent.close();
    }
  });

  // Claw (issue 14): the task list, tool-calling runs against the local model server, a Claw-Eval task.yaml folder,
  // the web UI through the browser runner, the viewer over the run, and the benchmark script.
  handle(/^grove claw tasks$/, async (line) => {
    const { stdout } = await sh(local(line));
    expect(stdout.trim().split('\n').length).toBeGreaterThan(200);
  });
  handle(/^grove claw run --claw-eval /, async (line) => {
    // the checkout's own services and grader on the local model server; its summary names Claw-Eval's pass^k
    const { stdout } = await sh(local(line, [['http://127.0.0.1:8000/v1', model.url]]));
    expect(stdout).toMatch(/Claw-Eval pass\^k \(c\/n\)\^k [\d.]+ {2}τ-bench unbiased pass\^k C\(c,k\)\/C\(n,k\) [\d.]+/);
    expect(stdout).toMatch(/N01_notes_summary +2 +0 /);
  });
  handle(/^grove claw run /, async (line) => {
    const { stdout } = await sh(local(line, [['http://127.0.0.1:8000/v1', model.url]]));
    // both pass^k: τ-bench's unbiased estimate and Claw-Eval's own (c/n)^k
    expect(stdout).toMatch(/pass@1 [\d.]+ · pass@\d [\d.]+ · pass\^\d τ-bench unbiased C\(c,k\)\/C\(n,k\) [\d.]+ · pass\^\d Claw-Eval \(c\/n\)\^k [\d.]+/);
    if (line.includes('--browser')) expect(stdout).toMatch(/mean score 1 /);
    if (line.includes('--yaml')) expect(stdout).toContain('| T900_reply_and_book | 2 |');
  });
  handle(/^grove view runs\/claw$/, async (line) => {
    const s = await start(`${local(line)} --port 0`, /http:\/\/127\.0\.0\.1:\d+/);
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(s.text())![0];
    const list = await (await fetch(`${url}/api/episodes`)).json();
    expect(list.total).toBe(3);
    await stop(s.child);
  });
  handle(/^npm run bench:claw-eval-agreement -- --claw-eval ~\/claw-eval /, async (line) => {
    // On the fixture checkout (CI has no copy of Claw-Eval; the fixture has no claw_eval.cli, so the CLI column
    // reads 0 graded): every episode sandbox grades as the batch does, and both comparisons are printed.
    const fixture = join(REPO, 'test/claw-env/fixtures/claw-eval-checkout');
    const { stdout } = await sh(line.replace('~/claw-eval', fixture).replace('--limit 10', '--limit 1').replace(/\s+#.*$/, ''));
    expect(stdout).toMatch(/Grove batch vs the checkout's claw_eval\.cli grade: \d+\/2 agree/);
    expect(stdout).toMatch(/episode sandboxes \(REST, the harness path\) vs the batch: 2\/2 identical grades/);
  });
  handle(/^npm run bench:claw$/, async () => {
    expect(JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).scripts['bench:claw']).toBe('node --import tsx bench/claw.bench.ts');
    expect(existsSync(join(REPO, 'bench/claw.bench.ts'))).toBe(true);
  });

  it('knows every README command', () => {
    expect(commands.length).toBeGreaterThan(10);
    const unknown = commands.filter((c) => !handlers.some(([re]) => re.test(c.line))).map((c) => c.line);
    expect(unknown).toEqual([]);
  });

  it('runs each of them', { timeout: 400_000 }, async () => {
    for (const c of commands) {
      const h = handlers.find(([re]) => re.test(c.line));
      if (!h) continue;
      try {
        await h[1](c.line);
      } catch (err) {
        throw new Error(`README command failed: ${c.line}\n${(err as Error).message}`, { cause: err });
      }
    }
  });

  it('the quick start: serve, create a sandbox, wait, step (action and model text), screenshot, delete', async () => {
    const port = await freePort();
    const subs: [string | RegExp, string][] = [['localhost:8321', `127.0.0.1:${port}`], ['--port 8321', `--port ${port}`], ['127.0.0.1:8000', siteHost]];
    const [serveLine, hLine, ...curls] = quickStart;
    expect(serveLine).toMatch(/serve/);
    await mkdir(join(tmp, 'qs'), { recursive: true });
    const s = await start(local(serveLine.replace(/\s*&$/, ''), subs), /listening on http/, { GROVE_DATA_DIR: join(tmp, 'qs-data') });
    const H = /^H='(.*)'$/.exec(hLine)![1];
    let sb = '';
    for (const c of curls) {
      const cmd = local(c, subs).split('sb_…').join(sb).replace('-o shot.jpg', `-o ${tmp}/qs/shot.jpg`);
      const { stdout } = await sh(cmd, { H });
      if (!sb) {
        sb = JSON.parse(stdout).sandbox_id;
        expect(sb).toMatch(/^sb_/);
      } else if (stdout) {
        const body = JSON.parse(stdout) as { error?: unknown };
        expect(body.error ?? null, `${c}\n${stdout}`).toBeNull();
      }
    }
    expect(readFileSync(join(tmp, 'qs/shot.jpg')).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    expect(await stop(s.child)).toBe(0);
  });
});
