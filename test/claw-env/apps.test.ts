import { describe, expect, it } from 'vitest';
import { ClawApp } from '../../claw-env/app.ts';
import { baseWorld, contactByName } from '../../claw-env/fixtures/world.ts';
import { ALL_TOOLS, openAiTools } from '../../claw-env/tools.ts';

const seed = () => baseWorld(42).state;
const ok = (r: { status: number; body: unknown }) => {
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as any;
};
const err = (r: { status: number; body: unknown }) => (r.body as { error: { code: string; message: string } }).error;

describe('Claw apps through ClawApp.call', () => {
  it('mail: search, read, reply threads, forward keeps attachments, drafts, folders', () => {
    const app = new ClawApp({ seed: seed() });
    const list = ok(app.call('mail_list_messages', { query: 'label:newsletter' }));
    expect(list.messages.length).toBe(3);
    expect(list.messages.every((m: any) => m.labels.includes('newsletter'))).toBe(true);
    const first = list.messages[0];
    expect(first.read).toBe(false);
    expect(ok(app.call('mail_get_message', { message_id: first.id })).message.read).toBe(true);
    const reply = ok(app.call('mail_reply', { message_id: first.id, body: 'thanks' })).message;
    expect(reply).toMatchObject({ folder: 'sent', thread_id: first.thread_id, subject: `Re: ${first.subject}`, to: [first.from] });
    const draft = ok(app.call('mail_save_draft', { to: ['a@b.example'], subject: 's', body: 'b' })).draft;
    expect(draft.folder).toBe('drafts');
    expect(ok(app.call('mail_send_draft', { draft_id: draft.id })).message.folder).toBe('sent');
    expect(err(app.call('mail_move', { message_id: first.id, folder: 'nowhere' })).code).toBe('not_found');
    ok(app.call('mail_create_folder', { name: 'Receipts' }));
    expect(err(app.call('mail_create_folder', { name: 'receipts' })).code).toBe('already_exists');
    expect(ok(app.call('mail_move', { message_id: first.id, folder: 'receipts' })).message.folder).toBe('receipts');
    // delete: trash first, then for good
    expect(ok(app.call('mail_delete', { message_id: first.id })).permanent).toBe(false);
    expect(ok(app.call('mail_delete', { message_id: first.id })).permanent).toBe(true);
    expect(err(app.call('mail_get_message', { message_id: first.id })).code).toBe('not_found');
  });

  it('answers realistic validation errors and leaves state untouched', () => {
    const app = new ClawApp({ seed: seed() });
    const before = JSON.stringify(app.state);
    const r = app.call('mail_send', { to: ['not-an-email'], subject: 'x', body: 'y' });
    expect(r.status).toBe(400);
    expect(err(r)).toEqual({ code: 'invalid_argument', message: 'Invalid arguments for mail_send: to.0: must be an email address like name@example.com' });
    expect(err(app.call('calendar_create_event', { title: 'x', start: '2026-03-20T10:00', end: '2026-03-20T09:00' })).message).toBe('end must be after start.');
    expect(err(app.call('calendar_create_event', { title: 'x', start: '2026-03-20T10:00', end: '2026-03-20T11:00', timezone: 'Mars/Olympus' })).code).toBe('invalid_argument');
    expect(err(app.call('calendar_create_event', { title: 'x', start: 'tomorrow', end: '2026-03-20T11:00' })).message).toMatch(/^start: "tomorrow" is not a time/);
    expect(err(app.call('todo_create', { title: 'x', due: '2026-02-30' })).message).toMatch(/due: is not a real calendar date/);
    expect(err(app.call('todo_create', { title: 'x', due: '2026-03-01' })).message).toBe('due 2026-03-01 is in the past (today is 2026-03-09).');
    const maya = contactByName(app.state, 'Maya Patel');
    expect(err(app.call('contacts_create', { name: 'Dup', email: maya.email })).code).toBe('already_exists');
    expect(err(app.call('contacts_update', { contact_id: maya.id, phone: 'call me' })).code).toBe('invalid_argument');
    expect(err(app.call('docs_update', { doc_id: app.state.docs[0].id, body: 'a', append: 'b' })).code).toBe('invalid_argument');
    expect(app.call('no_such_tool', {}).status).toBe(404);
    expect(JSON.stringify(app.state)).toBe(before);
  });

  it('paginates with opaque tokens bound to the query', () => {
    const app = new ClawApp({ seed: seed() });
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = ok(app.call('mail_list_messages', { page_size: 4, ...(token ? { page_token: token } : {}) }));
      seen.push(...page.messages.map((m: any) => m.id));
      token = page.next_page_token ?? undefined;
      pages++;
    } while (token);
    const inbox = app.state.mail.messages.filter((m) => m.folder === 'inbox');
    expect(new Set(seen)).toEqual(new Set(inbox.map((m) => m.id)));
    expect(pages).toBe(Math.ceil(inbox.length / 4));
    const p1 = ok(app.call('mail_list_messages', { page_size: 4 }));
    expect(err(app.call('mail_list_messages', { page_size: 4, page_token: p1.next_page_token, query: 'hi' })).code).toBe('invalid_page_token');
    expect(err(app.call('mail_list_messages', { page_token: 'garbage' })).code).toBe('invalid_page_token');
  });

  it('creates unguessable ids and stamps times from the sandbox clock', () => {
    const app = new ClawApp({ seed: seed() });
    const a = ok(app.call('todo_create', { title: 'a' })).todo;
    const b = ok(app.call('todo_create', { title: 'b' })).todo;
    expect(a.id).toMatch(/^tsk_[A-Za-z0-9_-]{12}$/);
    expect(a.id).not.toBe(b.id);
    // two calls after the fixture's "now": +1 s and +2 s, whatever the machine's time is
    expect(a.created_at).toBe('2026-03-09T14:00:01Z');
    expect(b.created_at).toBe('2026-03-09T14:00:02Z');
  });

  it('calendar: time zones, recurring events across DST, invitations and free/busy', () => {
    const app = new ClawApp({ seed: seed() });
    // wall time in Tokyo → UTC
    const ev = ok(app.call('calendar_create_event', { title: 'Tokyo call', start: '2026-03-17T09:00', end: '2026-03-17T09:30', timezone: 'Asia/Tokyo', attendees: ['aiko.tanaka@fabrikam.example'] }));
    expect(ev.event.start).toBe('2026-03-17T00:00:00Z');
    expect(ev.invitations_sent).toEqual(['aiko.tanaka@fabrikam.example']);
    expect(ev.event.attendees).toEqual([{ email: 'aiko.tanaka@fabrikam.example', response: 'needs_action' }]);
    // the seeded standup is weekly MO/WE/FR 09:30 New York: 14:30Z before DST (Mar 6), 13:30Z after (Mar 9)
    const week = ok(app.call('calendar_list_events', { start: '2026-03-05T00:00:00Z', end: '2026-03-10T00:00:00Z', query: 'standup' }));
    expect(week.events.map((e: any) => e.start)).toEqual(['2026-03-06T14:30:00Z', '2026-03-09T13:30:00Z']);
    expect(week.events.map((e: any) => e.start_local)).toEqual(['2026-03-06T09:30:00-05:00', '2026-03-09T09:30:00-04:00']);
    // free/busy: the user is busy at the standup and the dentist
    const fb = ok(app.call('calendar_free_busy', { emails: ['alex.morgan@acme.example'], start: '2026-03-11T00:00', end: '2026-03-12T00:00' }));
    expect(fb.calendars['alex.morgan@acme.example'].map((b: any) => [b.start, b.end])).toEqual([
      ['2026-03-11T13:30:00Z', '2026-03-11T13:45:00Z'],
      ['2026-03-11T20:00:00Z', '2026-03-11T21:00:00Z'],
    ]);
    // an invitation from someone else: respond; organizer-only changes are refused
    app.state.calendar.events.push({ id: 'evt_inv', title: 'Their meeting', start: '2026-03-18T15:00:00Z', end: '2026-03-18T16:00:00Z', timezone: 'UTC', location: '', description: '', organizer: 'tom.walsh@initech.example', attendees: [{ email: 'alex.morgan@acme.example', response: 'needs_action' }], status: 'confirmed' });
    expect(err(app.call('calendar_update_event', { event_id: 'evt_inv', title: 'mine now' })).code).toBe('permission_denied');
    ok(app.call('calendar_respond', { event_id: 'evt_inv', response: 'accepted' }));
    const fb2 = ok(app.call('calendar_free_busy', { emails: ['alex.morgan@acme.example', 'tom.walsh@initech.example'], start: '2026-03-18T00:00Z', end: '2026-03-19T00:00Z' }));
    expect(fb2.calendars['tom.walsh@initech.example']).toEqual([{ start: '2026-03-18T15:00:00Z', end: '2026-03-18T16:00:00Z', start_local: '2026-03-18T11:00:00-04:00', end_local: '2026-03-18T12:00:00-04:00' }]);
    expect(fb2.calendars['alex.morgan@acme.example'].some((b: any) => b.start === '2026-03-18T15:00:00Z')).toBe(true);
  });

  it('contacts, docs and todo round trips', () => {
    const app = new ClawApp({ seed: seed() });
    const c = ok(app.call('contacts_create', { name: 'Jo Novak', email: 'jo@novak.example', timezone: 'Europe/Prague' })).contact;
    expect(ok(app.call('contacts_search', { query: 'novak' })).contacts.map((x: any) => x.id)).toEqual([c.id]);
    ok(app.call('contacts_delete', { contact_id: c.id }));
    const d = ok(app.call('docs_create', { title: 'Plan', body: 'a' })).doc;
    expect(ok(app.call('docs_update', { doc_id: d.id, append: 'b' })).doc.body).toBe('a\nb');
    expect(err(app.call('docs_create', { title: 'plan' })).code).toBe('already_exists');
    const t = ok(app.call('todo_create', { title: 'Pay rent', due: '2026-04-01', priority: 'high' })).todo;
    ok(app.call('todo_set_status', { todo_id: t.id, status: 'done' }));
    expect(err(app.call('todo_set_status', { todo_id: t.id, status: 'done' })).code).toBe('failed_precondition');
    expect(err(app.call('todo_update', { todo_id: t.id, title: 'x' })).code).toBe('failed_precondition');
    expect(ok(app.call('todo_list', { status: 'done' })).todos.map((x: any) => x.id)).toEqual([t.id]);
  });

  it('keeps an audit log of every call and reset restores the seed exactly', () => {
    const s = seed();
    const app = new ClawApp({ seed: s });
    const pristine = JSON.stringify(app.state);
    ok(app.call('mail_send', { to: ['x@y.example'], subject: 'hi', body: 'b' }));
    app.call('mail_send', { to: [] });
    ok(app.call('todo_create', { title: 't' }));
    ok(app.call('calendar_delete_event', { event_id: app.state.calendar.events[0].id }));
    expect(app.audit.map((e) => [e.seq, e.tool, e.status, e.mutated])).toEqual([
      [1, 'mail_send', 200, true],
      [2, 'mail_send', 400, false],
      [3, 'todo_create', 200, true],
      [4, 'calendar_delete_event', 200, true],
    ]);
    expect(app.audit[0]).toMatchObject({ actor: 'tool', app: 'mail', args: { to: ['x@y.example'], subject: 'hi', body: 'b' }, at: '2026-03-09T14:00:01Z' });
    expect(JSON.stringify(app.state)).not.toBe(pristine);
    app.reset();
    expect(JSON.stringify(app.state)).toBe(pristine);
    expect(app.audit).toEqual([]);
    expect(app.clock.now()).toBe(Date.parse(s.now));
  });

  it('offers only the tools of its apps (and a task\'s subset)', () => {
    const app = new ClawApp({ seed: seed(), apps: ['todo'], tools: ['todo_list'] });
    expect(app.call('todo_list', {}).status).toBe(200);
    expect(err(app.call('todo_create', { title: 'x' })).code).toBe('unknown_tool');
    expect(err(app.call('mail_list_messages', {})).code).toBe('unknown_tool');
  });

  it('fault injection: 429/500/slow at the configured rates, never changing state', () => {
    const n = 3000;
    const app = new ClawApp({ seed: seed(), faults: { rate_429: 0.1, rate_500: 0.05, rate_slow: 0.2, slow_ms: 5, seed: 7 } });
    const counts = { '429': 0, '500': 0, slow: 0 };
    for (let i = 0; i < n; i++) {
      const r = i % 10 === 0 ? app.call('todo_create', { title: `t${i}` }) : app.call('todo_list', {});
      if (r.entry.fault) counts[r.entry.fault]++;
      if (r.status === 429) expect(r.retryAfter).toBe(1);
      if (r.entry.fault === 'slow') expect(r.delayMs).toBe(5);
    }
    // binomial: 4 standard deviations
    const within = (k: number, p: number) => Math.abs(k - n * p) <= 4 * Math.sqrt(n * p * (1 - p));
    expect(within(counts['429'], 0.1), `${counts['429']}`).toBe(true);
    expect(within(counts['500'], 0.05), `${counts['500']}`).toBe(true);
    expect(within(counts.slow, 0.2), `${counts.slow}`).toBe(true);
    // failed calls created nothing: one todo per 200 answer (+1 seeded)
    expect(app.state.todos.length).toBe(1 + app.audit.filter((e) => e.tool === 'todo_create' && e.status === 200).length);
  });

  it('OpenAI function-calling definitions for every tool', () => {
    const defs = openAiTools(ALL_TOOLS);
    expect(defs.length).toBe(ALL_TOOLS.length);
    const send = defs.find((d) => d.function.name === 'mail_send')!;
    expect(send.type).toBe('function');
    expect(send.function.parameters).toMatchObject({ type: 'object', required: ['to', 'subject', 'body'] });
    for (const d of defs) {
      expect(d.function.parameters.type).toBe('object');
      expect(JSON.parse(JSON.stringify(d))).toEqual(d);
    }
  });
});
