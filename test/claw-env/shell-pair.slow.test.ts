// A shell sandbox paired with a Claw sandbox (real bubblewrap + the egress proxy): the Claw origin is reachable
// with the token from the environment; Grove's API port is not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShellServer, type ShellServer } from '../shell-env/support.ts';

let srv: ShellServer;
beforeAll(async () => {
  srv = await startShellServer();
});
afterAll(async () => {
  await srv?.close();
});

describe('shell sandbox paired with a Claw sandbox', () => {
  it('reaches exactly the Claw origin, with CLAW_ORIGIN and CLAW_TOKEN set', async () => {
    const c = await srv.call('POST', '/sandboxes', { type: 'claw', world_seed: 4, apps: ['todo'] });
    expect(c.status).toBe(201);
    const claw = (await srv.call('GET', `/sandboxes/${c.json.sandbox_id}/wait?timeout=10`)).json;
    const id = await srv.sandbox({ claw_sandbox: claw.sandbox_id });
    const exec = async (command: string) => (await srv.call('POST', `/sandboxes/${id}/exec`, { command, timeout_s: 20 })).json;
    const env = await exec('echo "$CLAW_ORIGIN"');
    expect(env.stdout.trim()).toBe(claw.claw.origin);
    const made = await exec(`curl -sS -m 10 -X POST -H "Authorization: Bearer $CLAW_TOKEN" -H 'content-type: application/json' -d '{"title":"from the shell"}' "$CLAW_ORIGIN/api/tools/todo_create"`);
    expect(JSON.parse(made.stdout).todo.title).toBe('from the shell');
    const state = (await srv.call('GET', `/sandboxes/${claw.sandbox_id}/claw/audit`)).json.entries;
    expect(state.map((e: any) => [e.tool, e.status])).toEqual([['todo_create', 200]]);
    const api = await exec(`curl -sS -m 10 -o /dev/null -w '%{http_code}' ${srv.url}/health; echo " rc=$?"`);
    expect(api.stdout).not.toMatch(/^200/);
    const bad = await srv.call('POST', '/sandboxes', { type: 'shell', claw_sandbox: 'sb_nope' });
    expect(bad.status).toBe(400);
  });
});
