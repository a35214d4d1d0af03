// Recording-proxy benchmark (issue 17). An upstream that streams like a real model server (≈300 ms to the first
// token, then ≈50 tokens/s) runs in this process; the proxy runs as its own process (`grove proxy serve`, as it
// is deployed) and records every call to disk. 64 concurrent streaming clients call the upstream directly and
// through the proxy in alternating blocks (ABBA), so both see the same machine. Printed: time to first byte and
// to the end of the call, p50/p99, the added latency, and throughput as a ratio proxy / direct (target ≤ 1.05×
// at p50). Written to bench/results/proxy.json.
//
//   npm run bench:proxy                      (--clients 64 --calls 4 --tokens 40 --rounds 2)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { readCalls } from '../proxy/store.ts';

const { values } = parseArgs({ options: { clients: { type: 'string' }, calls: { type: 'string' }, tokens: { type: 'string' }, rounds: { type: 'string' }, 'serve-upstream': { type: 'boolean' } } });
const CLIENTS = Number(values.clients ?? 64);
const CALLS = Number(values.calls ?? 4);
const TOKENS = Number(values.tokens ?? 40);
const ROUNDS = Number(values.rounds ?? 2);
const TTFT_MS = 300;
const TOKEN_MS = 20; // 50 tokens/s

/** A paced SSE chat-completions upstream. */
function startUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        let i = 0;
        const tick = () => {
          if (res.destroyed) return;
          if (i === TOKENS) {
            res.write(`data: ${JSON.stringify({ id: 'b', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 50, completion_tokens: TOKENS } })}\n\n`);
            res.end('data: [DONE]\n\n');
            return;
          }
          res.write(`data: ${JSON.stringify({ id: 'b', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: `tok${i} ` }, finish_reason: null }] })}\n\n`);
          i++;
          setTimeout(tick, TOKEN_MS);
        };
        tick();
      }, TTFT_MS);
    });
  });
  return new Promise((ok) =>
    server.listen(0, '127.0.0.1', () =>
      ok({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        close: () => new Promise<void>((c) => {
          server.closeAllConnections();
          server.close(() => c());
        }),
      }),
    ),
  );
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });

/** One streaming call; resolves to [ms to first byte, ms to the end]. */
function call(base: string, i: number): Promise<[number, number]> {
  const body = JSON.stringify({ model: 'bench', stream: true, messages: [{ role: 'user', content: `client ${i}: ${'x'.repeat(2000)}` }] });
  const t0 = performance.now();
  return new Promise((ok, fail) => {
    const req = http.request(`${base}/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let first = 0;
      let text = '';
      res.on('data', (c) => {
        if (!first) first = performance.now() - t0;
        if (res.statusCode !== 200) text += String(c);
      });
      res.on('end', () => (res.statusCode === 200 ? ok([first, performance.now() - t0]) : fail(new Error(`status ${res.statusCode}: ${text}`))));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end(body);
  });
}

async function block(base: (client: number) => string): Promise<{ ttfb: number[]; total: number[]; wallMs: number }> {
  const ttfb: number[] = [];
  const total: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      for (let k = 0; k < CALLS; k++) {
        const [f, t] = await call(base(c), c);
        ttfb.push(f);
        total.push(t);
      }
    }),
  );
  return { ttfb, total, wallMs: performance.now() - t0 };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** Starts a child process (this file with --serve-upstream, or `grove proxy serve`) and reads its URL from stderr. */
function startChild(args: string[], pattern: RegExp): Promise<{ url: string; child: ReturnType<typeof spawn> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: path.resolve(import.meta.dirname, '..'), stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((ok, fail) => {
    let err = '';
    child.stderr!.on('data', (c) => {
      err += String(c);
      const m = err.match(pattern);
      if (m) ok({ url: m[1], child });
    });
    child.on('exit', (code) => fail(new Error(`${args.join(' ')} exited ${code}: ${err}`)));
  });
}

if (values['serve-upstream']) {
  const up = await startUpstream();
  process.stderr.write(`upstream on ${up.url}\n`);
  await new Promise((ok) => process.once('SIGTERM', ok));
  await up.close();
} else {
  await measure();
}

async function measure(): Promise<void> {
  // The upstream runs in its own process, as a model server does, so the clients' event loop here is not shared with it.
  const up = await startChild(['bench/proxy.bench.ts', '--serve-upstream', '--tokens', String(TOKENS)], /upstream on (http:\/\/\S+)/);
  const upstream = { url: up.url, close: async () => { up.child.kill('SIGTERM'); await new Promise((ok) => up.child.once('exit', ok)); } };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-proxy-bench-'));
  const { url: proxyUrl, child } = await startChild(['cli/main.ts', 'proxy', 'serve', '--upstream', upstream.url, '--port', '0', '--dir', dir, '--rollout-keys', 'off'], /listening on (http:\/\/\S+)/);

  process.stdout.write(`Grove recording-proxy benchmark: ${CLIENTS} concurrent streaming clients × ${CALLS} calls, upstream ${TTFT_MS} ms to first token then ${1000 / TOKEN_MS} tokens/s × ${TOKENS} tokens; ${ROUNDS} ABBA rounds\n`);
  const direct = { ttfb: [] as number[], total: [] as number[], wallMs: 0 };
  const proxied = { ttfb: [] as number[], total: [] as number[], wallMs: 0 };
  const add = (into: typeof direct, b: typeof direct) => {
    into.ttfb.push(...b.ttfb);
    into.total.push(...b.total);
    into.wallMs += b.wallMs;
  };
  await block(() => upstream.url); // warm-up
  await block((c) => `${proxyUrl}/r/warm-${c}/v1`);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? ['direct', 'proxy'] : ['proxy', 'direct'];
    for (const which of order) {
      await new Promise((ok) => setTimeout(ok, 300));
      if (which === 'direct') add(direct, await block(() => upstream.url));
      else add(proxied, await block((c) => `${proxyUrl}/r/bench-${r}-${c}/v1`));
    }
  }
  child.kill('SIGTERM');
  await new Promise((ok) => child.once('exit', ok));
  let recorded = 0;
  for (let r = 0; r < ROUNDS; r++) for (let c = 0; c < CLIENTS; c++) recorded += readCalls(dir, `bench-${r}-${c}`).length;
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });

  const n = direct.total.length;
  const row = (name: string, d: number[], p: number[]) =>
    `  ${name.padEnd(22)} direct p50 ${pct(d, 50).toFixed(1).padStart(7)} ms  p99 ${pct(d, 99).toFixed(1).padStart(7)} ms   proxy p50 ${pct(p, 50).toFixed(1).padStart(7)} ms  p99 ${pct(p, 99).toFixed(1).padStart(7)} ms   added p50 ${(pct(p, 50) - pct(d, 50)).toFixed(1)} ms  p99 ${(pct(p, 99) - pct(d, 99)).toFixed(1)} ms   ratio p50 ${(pct(p, 50) / pct(d, 50)).toFixed(3)}\n`;
  process.stdout.write(row('time to first byte', direct.ttfb, proxied.ttfb));
  process.stdout.write(row('whole call', direct.total, proxied.total));
  const tputD = (n / direct.wallMs) * 1000;
  const tputP = (proxied.total.length / proxied.wallMs) * 1000;
  process.stdout.write(`  throughput             direct ${tputD.toFixed(1)} calls/s   proxy ${tputP.toFixed(1)} calls/s   ratio ${(tputP / tputD).toFixed(3)}\n`);
  process.stdout.write(`  records on disk        ${recorded} of ${proxied.total.length} proxied calls\n`);
  const result = {
    date: new Date().toISOString(),
    config: { clients: CLIENTS, calls: CALLS, tokens: TOKENS, rounds: ROUNDS, ttft_ms: TTFT_MS, tokens_per_s: 1000 / TOKEN_MS },
    ttfb_ms: { direct_p50: pct(direct.ttfb, 50), direct_p99: pct(direct.ttfb, 99), proxy_p50: pct(proxied.ttfb, 50), proxy_p99: pct(proxied.ttfb, 99) },
    call_ms: { direct_p50: pct(direct.total, 50), direct_p99: pct(direct.total, 99), proxy_p50: pct(proxied.total, 50), proxy_p99: pct(proxied.total, 99) },
    ratio_p50_call: pct(proxied.total, 50) / pct(direct.total, 50),
    throughput: { direct: tputD, proxy: tputP, ratio: tputP / tputD },
    recorded,
    calls: proxied.total.length,
  };
  mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(path.join(import.meta.dirname, 'results', 'proxy.json'), `${JSON.stringify(result, null, 2)}\n`);
}
