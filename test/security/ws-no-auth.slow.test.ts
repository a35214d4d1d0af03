// Attacker's test (issue 30, item 2): a `grove serve --no-auth` process, and a web page (or a DNS-rebound name)
// trying to open a terminal. Every WebSocket upgrade gets the Host check HTTP gets and, with auth off, an Origin
// check: a foreign Host or Origin is refused before the handshake, so no shell runs (the canary file the attacker's
// init frame would create never appears). Loopback origins, and clients that send no Origin, keep working.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let proc: ChildProcess | undefined;
let url = '';
let port = 0;
let dataDir = '';

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-ws-noauth-'));
  proc = spawn(process.execPath, [path.join(ROOT, 'bin/grove.mjs'), 'serve', '--no-auth', '--port', '0', '--data-dir', dataDir, '--browser-processes', '1'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, GROVE_LOG_LEVEL: 'warn' },
  });
  const p = proc;
  let stderr = '';
  url = await new Promise<string>((resolve, reject) => {
    p.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (m) resolve(m[1]);
    });
    p.once('exit', (code) => reject(new Error(`grove serve exited with ${code}: ${stderr}`)));
  });
  port = Number(new URL(url).port);
}, 60_000);

afterAll(async () => {
  if (proc && proc.exitCode === null) {
    const exited = new Promise((ok) => proc!.once('exit', ok));
    proc.kill('SIGTERM');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

async function api(method: string, p: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const res = await fetch(url + p, { method, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

async function shellSandbox(): Promise<string> {
  const c = await api('POST', '/sandboxes', { type: 'shell' });
  expect(c.status).toBe(201);
  const id = c.json.sandbox_id as string;
  expect((await api('GET', `/sandboxes/${id}/wait?timeout=30`)).json.status).toBe('ready');
  return id;
}

/** Opens a terminal as the attacker would and, if it opens, runs `touch <canary>`. Resolves with the HTTP status
 * of a refused handshake, or 101 when a shell was served (and has run the command). */
function attack(wsPath: string, headers: Record<string, string>, canary: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${wsPath}`, { headers });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on('open', () => ws.send(JSON.stringify({ type: 'init', cmd: ['sh', '-c', `touch ${canary}; echo done`] })));
    ws.on('message', (m) => {
      const f = JSON.parse(m.toString());
      if (f.type === 'exit') (ws.close(), resolve({ status: 101, body: '' }));
    });
    ws.on('error', (err) => {
      if (!/Unexpected server response/.test(err.message)) reject(err);
    });
  });
}

async function exists(id: string, file: string): Promise<boolean> {
  const r = await api('POST', `/sandboxes/${id}/exec`, { command: `test -e ${file} && echo yes || echo no` });
  expect(r.status).toBe(200);
  return r.json.stdout.trim() === 'yes';
}

describe('--no-auth terminals against web pages', () => {
  it('refuses a foreign Host or Origin on every upgrade, before any shell runs', async () => {
    const id = await shellSandbox();
    // Orchard's client-chosen ids are what a page would guess.
    const orch = await api('POST', '/orchard/sandboxes', { sandbox_id: 'guessable-box', image: 'python:3.11-slim' });
    expect(orch.status).toBe(200);
    expect((await api('GET', '/orchard/sandboxes/guessable-box/wait?timeout=30')).status).toBe(200);
    const routes = [`/sandboxes/${id}/pty`, '/orchard/sandboxes/guessable-box/exec/pty'];
    const hostile: [Record<string, string>, string][] = [
      [{ Host: 'evil.example' }, 'forbidden_host'],
      [{ Host: `evil.example:${port}` }, 'forbidden_host'], // a DNS-rebound name pointing at 127.0.0.1
      [{ Host: 'evil.example', Origin: 'http://evil.example' }, 'forbidden_host'],
      [{ Host: `127.0.0.1:${port}`, Origin: 'http://evil.example' }, 'forbidden_origin'], // a page fetching loopback directly
      [{ Host: `localhost:${port}`, Origin: `http://evil.example:${port}` }, 'forbidden_origin'],
      [{ Origin: 'null' }, 'forbidden_origin'], // a sandboxed iframe or a file: page
      [{ Origin: 'http://127.0.0.1.evil.example' }, 'forbidden_origin'],
      [{ Origin: 'http://localhost@evil.example' }, 'forbidden_origin'],
    ];
    for (const [i, wsPath] of routes.entries()) {
      for (const [j, [headers, code]] of hostile.entries()) {
        const r = await attack(wsPath, headers, `/workspace/pwned-${i}-${j}`);
        expect(r.status, `${wsPath} ${JSON.stringify(headers)}`).toBe(403);
        expect(JSON.parse(r.body).error.code).toBe(code);
      }
    }
    // An unknown WebSocket path with a foreign Host learns nothing either (403, not 404).
    expect((await attack('/nothing/here', { Host: 'evil.example' }, '/workspace/x')).status).toBe(403);
    for (const [i] of routes.entries()) for (const [j] of hostile.entries()) {
      expect(await exists(i === 0 ? id : 'guessable-box', `/workspace/pwned-${i}-${j}`)).toBe(false);
    }
    // A page's plain HTTP request with a foreign Origin is refused the same way (Host alone was checked before).
    const post = await api('POST', '/sandboxes', { type: 'shell' }, { origin: 'http://evil.example' });
    expect(post.status).toBe(403);
    expect(post.json.error.code).toBe('forbidden_origin');
    const orchPost = await api('POST', '/orchard/sandboxes/guessable-box/exec', { command: 'touch /workspace/pwned-http' }, { origin: 'http://evil.example' });
    expect(orchPost.status).toBe(403);
    expect(await exists('guessable-box', '/workspace/pwned-http')).toBe(false);
    await api('DELETE', `/sandboxes/${id}`);
    await api('DELETE', '/orchard/sandboxes/guessable-box');
  }, 120_000);

  it('serves loopback origins and clients that send no Origin', async () => {
    const id = await shellSandbox();
    const allowed: Record<string, string>[] = [{}, { Origin: `http://127.0.0.1:${port}` }, { Origin: 'http://localhost:5173' }, { Origin: 'http://[::1]:8080', Host: `localhost:${port}` }];
    for (const [j, headers] of allowed.entries()) {
      const r = await attack(`/sandboxes/${id}/pty`, headers, `/workspace/ok-${j}`);
      expect(r.status, JSON.stringify(headers)).toBe(101);
      expect(await exists(id, `/workspace/ok-${j}`)).toBe(true);
    }
    expect((await api('GET', '/sandboxes', undefined, { origin: 'http://localhost:3000' })).status).toBe(200);
    await api('DELETE', `/sandboxes/${id}`);
  }, 120_000);
});
