// A Claw-Eval trial's services as an MCP server: the fixture checkout's own FastAPI service (mock_services/notes)
// started by Grove's service set in its no-network bubblewrap sandbox, its task yaml's tools listed and called
// through MCP by the SDK's own client (over the SDK's in-memory transport pair), every call recorded as the trial's
// dispatch record that Claw-Eval's grader reads.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadClawEvalCheckout, type ClawEvalTask } from '../../claw-env/claw-eval/checkout.ts';
import { ensureClawEvalPython, writeDriver } from '../../claw-env/claw-eval/pyenv.ts';
import { ClawEvalServiceSet, serviceStartBudgetMs, type DispatchRecord } from '../../claw-env/claw-eval/services.ts';
import { Progress } from '../../sandbox/progress.ts';
import { ClawEvalTools } from '../../mcp/claw-eval-tools.ts';
import { mcpServerFor } from '../../mcp/server.ts';

const ROOT = path.resolve(__dirname, '../claw-env/fixtures/claw-eval-checkout');
const CACHE = path.resolve(__dirname, '../../node_modules/.cache/grove-mcp-claw-eval');
const INDEX = existsSync('/opt/pypi/simple') ? 'file:///opt/pypi/simple' : undefined;
const BWRAP = existsSync('/usr/bin/bwrap') && process.getuid?.() === 0;
let tmp: string;
let services: ClawEvalServiceSet | undefined;
let task: ClawEvalTask;
const dispatches: DispatchRecord[] = [];
let client: Client;

describe.runIf(BWRAP)('Claw-Eval services over MCP', () => {
  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-mcp-claw-eval-'));
    mkdirSync(CACHE, { recursive: true });
    const python = await ensureClawEvalPython(ROOT, { cacheDir: CACHE, indexUrl: INDEX });
    const driver = writeDriver(tmp);
    task = loadClawEvalCheckout(ROOT).tasks.find((t) => t.id === 'N01_notes_summary')!;
    services = new ClawEvalServiceSet(task, { root: ROOT, python, driver });
    await services.start(Progress.after(serviceStartBudgetMs(task)));
    const [a, b] = InMemoryTransport.createLinkedPair();
    await mcpServerFor(new ClawEvalTools(task, services, (d) => dispatches.push(d))).connect(a);
    client = new Client({ name: 'grove-test', version: '1' });
    await client.connect(b);
  }, 900_000);
  afterAll(async () => {
    await client?.close();
    await services?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('lists the yaml\'s tools and calls them on the checkout\'s service; dispatches recorded for the grader', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => [t.name, t.inputSchema])).toEqual(task.tools.map((t) => [t.name, t.input_schema]));
    const list = await client.callTool({ name: 'notes_list', arguments: {} });
    expect(list.isError).toBeFalsy();
    const body = JSON.parse((list.content as any)[0].text);
    expect(JSON.stringify(body)).toContain('note');
    // FastAPI's own 422 for a body without note_id: an error result with the service's status.
    const invalid = await client.callTool({ name: 'notes_get', arguments: {} });
    expect([invalid.isError, (invalid.structuredContent as any).status]).toEqual([true, 422]);
    const unknown = await client.callTool({ name: 'notes_purge', arguments: {} });
    expect([unknown.isError, (unknown.content as any)[0].text.includes('unknown_tool')]).toEqual([true, true]);
    expect(dispatches.map((d) => [d.tool_name, d.response_status >= 400])).toEqual([['notes_list', false], ['notes_get', true]]);
    expect(dispatches[0].endpoint_url).toBe('http://localhost:9301/notes/list');
  });
});
