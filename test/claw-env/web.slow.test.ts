// Every Claw app through its web UI in real Chromium (Playwright on Debian's chromium), checked against the
// sandbox state; and a browser sandbox paired with a Claw sandbox reaches exactly that origin.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowserEnvironment } from '../../browser-env/index.ts';
import { CHROMIUM_FLAGS } from '../../browser-env/pool.ts';
import { ClawSandbox } from '../../claw-env/sandbox.ts';
import { baseWorld, contactByName } from '../../claw-env/fixtures/world.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';

let browser: Browser;
let page: Page;
let sb: ClawSandbox;

beforeAll(async () => {
  sb = new ClawSandbox('sb_web', { seed: baseWorld(11).state, apps: ['mail', 'calendar', 'contacts', 'docs', 'todo'], task: null });
  await sb.ready();
  browser = await chromium.launch({ executablePath: loadConfig({ env: {}, flags: {} }).chromiumPath, args: CHROMIUM_FLAGS });
  page = await (await browser.newContext()).newPage();
  await page.goto(sb.details().claw!.login_url);
});
afterAll(async () => {
  await browser?.close();
  await sb?.close();
});

const state = () => sb.app.state;
const webCalls = () => sb.app.audit.filter((e) => e.actor === 'web' && e.app !== null && e.status === 200).map((e) => e.tool);

describe('Claw web UI in Chromium', () => {
  it('login sets the token cookie; without it pages answer 401', async () => {
    expect(new URL(page.url()).pathname).toBe('/');
    const anon = await fetch(`${sb.details().claw!.origin}/mail`);
    expect(anon.status).toBe(401);
    expect(await page.getByRole('link', { name: 'Mail', exact: true }).isVisible()).toBe(true);
  });

  it('mail: search, open (marks read), reply, star, compose', async () => {
    await page.goto(`${sb.details().claw!.origin}/mail`);
    await page.getByLabel('Search').fill('label:newsletter');
    await page.getByRole('button', { name: 'Search' }).click();
    expect(await page.locator('tbody tr').count()).toBe(3);
    const subject = await page.locator('tbody tr a').first().textContent();
    await page.locator('tbody tr a').first().click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(subject);
    const msg = state().mail.messages.find((m) => m.subject === subject)!;
    expect(msg.read).toBe(true);
    await page.getByLabel('Reply text').fill('Please unsubscribe me.');
    await page.getByRole('button', { name: 'Send reply' }).click();
    await page.getByRole('button', { name: 'Star' }).click();
    expect(state().mail.messages.find((m) => m.in_reply_to === msg.id)).toMatchObject({ folder: 'sent', body: 'Please unsubscribe me.', to: [msg.from] });
    expect(state().mail.messages.find((m) => m.id === msg.id)!.starred).toBe(true);
    await page.goto(`${sb.details().claw!.origin}/mail/compose`);
    await page.getByLabel('To (comma-separated)').first().fill('a@x.example, b@y.example');
    await page.getByLabel('Subject', { exact: true }).first().fill('Hello from the UI');
    await page.getByLabel('Body', { exact: true }).first().fill('Body text');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    expect(state().mail.messages.find((m) => m.subject === 'Hello from the UI')).toMatchObject({ folder: 'sent', to: ['a@x.example', 'b@y.example'] });
    // a validation error is shown, not a crash
    await page.goto(`${sb.details().claw!.origin}/mail/compose`);
    await page.getByLabel('To (comma-separated)').first().fill('not an email');
    await page.getByLabel('Subject', { exact: true }).first().fill('x');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    expect(await page.getByRole('alert').textContent()).toContain('must be an email address');
  });

  it('calendar: new event in another zone, week view, RSVP to an invitation, free/busy', async () => {
    await page.goto(`${sb.details().claw!.origin}/calendar/new`);
    await page.getByLabel('Title', { exact: true }).fill('UI planning');
    await page.getByLabel('Start', { exact: true }).fill('2026-03-17T09:00');
    await page.getByLabel('End', { exact: true }).fill('2026-03-17T10:00');
    await page.getByLabel('Time zone', { exact: true }).fill('Europe/Berlin');
    await page.getByLabel('Attendees (comma-separated)').fill('lukas.becker@contoso.example');
    await page.getByRole('button', { name: 'Create event' }).click();
    expect(state().calendar.events.find((e) => e.title === 'UI planning')).toMatchObject({ start: '2026-03-17T08:00:00Z', timezone: 'Europe/Berlin', attendees: [{ email: 'lukas.becker@contoso.example', response: 'needs_action' }] });
    await page.goto(`${sb.details().claw!.origin}/calendar?start=2026-03-16`);
    // shown in the user's zone (New York): 04:00
    expect(await page.getByRole('row', { name: /UI planning/ }).textContent()).toContain('2026-03-17 04:00');
    state().calendar.events.push({ id: 'evt_invite_ui', title: 'Partner call', start: '2026-03-18T15:00:00Z', end: '2026-03-18T16:00:00Z', timezone: 'UTC', location: '', description: '', organizer: 'tom.walsh@initech.example', attendees: [{ email: state().user.email, response: 'needs_action' }], status: 'confirmed' });
    await page.goto(`${sb.details().claw!.origin}/calendar/event/evt_invite_ui`);
    await page.getByRole('button', { name: 'Accept' }).click();
    expect(state().calendar.events.find((e) => e.id === 'evt_invite_ui')!.attendees[0].response).toBe('accepted');
    await page.goto(`${sb.details().claw!.origin}/calendar/freebusy?emails=${encodeURIComponent(state().user.email)}&date=2026-03-18`);
    expect(await page.locator('main').textContent()).toContain('busy 11:00–12:00');
  });

  it('contacts, docs and todo', async () => {
    const o = sb.details().claw!.origin;
    await page.goto(`${o}/contacts`);
    await page.getByLabel('Name', { exact: true }).fill('Jo Novak');
    await page.getByLabel('Email', { exact: true }).fill('jo@novak.example');
    await page.getByRole('button', { name: 'Add contact' }).click();
    expect(state().contacts.find((c) => c.email === 'jo@novak.example')).toMatchObject({ name: 'Jo Novak' });
    const maya = contactByName(state(), 'Maya Patel');
    await page.goto(`${o}/contacts/${maya.id}`);
    await page.getByLabel('Phone', { exact: true }).fill('+1 555 0100');
    await page.getByRole('button', { name: 'Save contact' }).click();
    expect(contactByName(state(), 'Maya Patel').phone).toBe('+1 555 0100');

    await page.goto(`${o}/docs`);
    await page.getByRole('link', { name: 'Meeting notes' }).click();
    await page.getByLabel('Text to append').fill('Action: ship it');
    await page.getByRole('button', { name: 'Append' }).click();
    expect(await page.locator('#doc-body').textContent()).toBe('Kickoff: scope agreed.\nAction: ship it');

    await page.goto(`${o}/todo`);
    await page.getByLabel('Title', { exact: true }).fill('Book flights');
    await page.getByLabel('Due', { exact: true }).fill('2026-03-20');
    await page.getByLabel('Priority', { exact: true }).selectOption('high');
    await page.getByRole('button', { name: 'Add todo' }).click();
    expect(state().todos.find((t) => t.title === 'Book flights')).toMatchObject({ due: '2026-03-20', priority: 'high', status: 'open' });
    await page.getByRole('button', { name: 'Complete "Book flights"' }).click();
    expect(state().todos.find((t) => t.title === 'Book flights')!.status).toBe('done');
    expect(webCalls()).toEqual(expect.arrayContaining(['contacts_create', 'contacts_update', 'docs_update', 'todo_create', 'todo_set_status', 'calendar_respond', 'mail_reply']));
  });
});

describe('a browser sandbox paired with a Claw sandbox', () => {
  let app: FastifyInstance;
  let other: http.Server;
  let dataDir: string | undefined;
  const KEY = 'pair-key-0123456789';
  const H = { 'x-api-key': KEY };

  beforeAll(async () => {
    other = http.createServer((_q, s) => s.end('other loopback service'));
    await new Promise<void>((ok) => other.listen(0, '127.0.0.1', ok));
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'grove-claw-pair-'));
    const config = loadConfig({ env: {}, flags: { apiKey: KEY, dataDir, browserProcesses: 1 } });
    const browserEnv = await createBrowserEnvironment({ executablePath: config.chromiumPath, processes: 1, recycleAfter: 50, warmPool: 0, dataDir: path.join(dataDir, 'browser'), headless: true, extraArgs: [] });
    app = await buildApp({ config, environments: { browser: browserEnv } });
    await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await new Promise<void>((ok) => (other ? other.close(() => ok()) : ok()));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('opens exactly the Claw origin: the UI loads, Grove\'s API port and other loopback services do not', async () => {
    const c = (await app.inject({ method: 'POST', url: '/sandboxes', headers: H, payload: { type: 'claw', world_seed: 2 } })).json();
    const claw = (await app.inject({ method: 'GET', url: `/sandboxes/${c.sandbox_id}/wait?timeout=10`, headers: H })).json();
    const b = await app.inject({ method: 'POST', url: '/sandboxes', headers: H, payload: { type: 'browser', claw_sandbox: c.sandbox_id, viewport: { width: 800, height: 600 } } });
    expect(b.statusCode, b.body).toBe(201);
    const ready = (await app.inject({ method: 'GET', url: `/sandboxes/${b.json().sandbox_id}/wait?timeout=60`, headers: H })).json();
    expect(ready.status).toBe('ready');
    expect(ready.error).toBeNull();
    const id = ready.sandbox_id;
    const step = async (url: string) => (await app.inject({ method: 'POST', url: `/sandboxes/${id}/step`, headers: H, payload: { action: { action: 'goto', url }, screenshot: 'none' } })).json();
    const mail = await step(`${claw.claw.origin}/mail`);
    expect(mail.observation.last_action_error).toBeNull();
    expect(mail.observation.title).toBe('Mail — inbox');
    const apiPort = (app.server.address() as AddressInfo).port;
    const api = await step(`http://127.0.0.1:${apiPort}/health`);
    expect(api.observation.last_action_error?.code).toBe('network_blocked');
    const loop = await step(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
    expect(loop.observation.last_action_error?.code).toBe('network_blocked');
    // the Claw sandbox saw the browser's page views as web calls
    const audit = (await app.inject({ method: 'GET', url: `/sandboxes/${c.sandbox_id}/claw/audit`, headers: H })).json().entries;
    expect(audit.some((e: any) => e.actor === 'web' && e.tool === 'mail_list_messages')).toBe(true);
    const bad = await app.inject({ method: 'POST', url: '/sandboxes', headers: H, payload: { type: 'browser', claw_sandbox: 'sb_nope' } });
    expect(bad.statusCode).toBe(400);
  });
});
