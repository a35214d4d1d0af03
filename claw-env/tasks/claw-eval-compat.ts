// Claw-Eval's mock-service endpoints (gmail, calendar, contacts, todo) as tools over our apps, so a Claw-Eval
// task.yaml's tools (its names, descriptions and input schemas) call into the same state and audit log.
// Endpoint paths and argument names follow claw-eval/claw-eval mock_services/*/server.py (read, not copied).
import { z } from 'zod';
import type { AppName } from '../state.ts';
import { iso } from '../time.ts';
import { defineTool, parseArgs, ToolError, type AnyTool, type ToolContext } from '../tool.ts';
import { getTool } from '../tools.ts';

/** Claw-Eval service name → our app. Anything else is unsupported. */
export const SERVICE_APPS: Record<string, AppName> = { gmail: 'mail', calendar: 'calendar', contacts: 'contacts', todo: 'todo' };

function call(ctx: ToolContext, name: string, args: unknown): any {
  const t = getTool(name)!;
  return t.handler(ctx, parseArgs(t, args) as never);
}

const DAY = 86_400_000;
const dayStart = (date: string): number => {
  const ms = Date.parse(`${date}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(ms)) throw new ToolError('invalid_argument', `Invalid date format: ${date} (use YYYY-MM-DD).`);
  return ms;
};
const PRIORITY_IN: Record<string, 'low' | 'normal' | 'high'> = { low: 'low', medium: 'normal', normal: 'normal', high: 'high', urgent: 'high' };
const STATUS_IN: Record<string, 'open' | 'done'> = { pending: 'open', open: 'open', in_progress: 'open', todo: 'open', completed: 'done', done: 'done' };

function ceEvent(e: any) {
  return { event_id: e.event_id ?? e.id, title: e.title, start_time: e.start, end_time: e.end, attendees: (e.attendees ?? []).map((a: any) => a.email), location: e.location, recurring: e.recurring ?? false };
}
function ceTask(t: any) {
  return { task_id: t.id, title: t.title, description: t.notes, status: t.status === 'done' ? 'completed' : 'pending', priority: t.priority === 'normal' ? 'medium' : t.priority, due_date: t.due ?? null };
}

export const CLAW_EVAL_ENDPOINTS: Record<string, AnyTool> = {
  '/gmail/messages': defineTool({
    name: 'ce_gmail_messages', app: 'mail', description: 'List inbox emails from the last days_back days.', mutates: false,
    input: z.object({ days_back: z.number().int().min(0).default(7), max_results: z.number().int().min(1).max(100).default(20) }),
    handler(ctx, a) {
      const cutoff = ctx.clock.now() - a.days_back * DAY;
      const ms = ctx.state.mail.messages
        // in the fixture's order, as Claw-Eval's gmail service lists them
        .filter((m) => m.folder === 'inbox' && Date.parse(m.date) >= cutoff)
        .slice(0, a.max_results);
      return { messages: ms.map((m) => ({ message_id: m.id, from: m.from, subject: m.subject, date: m.date, is_read: m.read, labels: m.labels })), total: ms.length };
    },
  }),
  '/gmail/messages/get': defineTool({
    name: 'ce_gmail_get', app: 'mail', description: 'Get one email.', mutates: true, input: z.object({ message_id: z.string() }),
    handler: (ctx, a) => {
      const m = call(ctx, 'mail_get_message', a).message;
      return { message_id: m.id, from: m.from, to: m.to, subject: m.subject, body: m.body, date: m.date, is_read: m.read, labels: m.labels, attachments: m.attachments };
    },
  }),
  '/gmail/send': defineTool({
    name: 'ce_gmail_send', app: 'mail', description: 'Send an email.', mutates: true, input: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
    handler: (ctx, a) => ({ status: 'sent', message: call(ctx, 'mail_send', { to: a.to.split(/[,;]\s*/).filter(Boolean), subject: a.subject, body: a.body }).message }),
  }),
  '/gmail/drafts/save': defineTool({
    name: 'ce_gmail_draft', app: 'mail', description: 'Save a draft.', mutates: true,
    input: z.object({ to: z.string(), subject: z.string(), body: z.string(), reply_to_message_id: z.string().nullable().optional() }),
    handler: (ctx, a) => ({ status: 'draft_saved', draft: call(ctx, 'mail_save_draft', { to: a.to.split(/[,;]\s*/).filter(Boolean), subject: a.subject, body: a.body, ...(a.reply_to_message_id ? { reply_to_message_id: a.reply_to_message_id } : {}) }).draft }),
  }),
  '/calendar/events': defineTool({
    name: 'ce_calendar_events', app: 'calendar', description: 'Events starting on date (UTC) and the following days-1 days.', mutates: false,
    input: z.object({ date: z.string(), days: z.number().int().min(1).max(366).default(1) }),
    handler(ctx, a) {
      const from = dayStart(a.date);
      const r = call(ctx, 'calendar_list_events', { start: iso(from), end: iso(from + a.days * DAY), timezone: 'UTC', page_size: 100 });
      const events = r.events.filter((e: any) => Date.parse(e.start) >= from).map(ceEvent);
      return { events, total: events.length };
    },
  }),
  '/calendar/events/get': defineTool({
    name: 'ce_calendar_get', app: 'calendar', description: 'Get one event.', mutates: false, input: z.object({ event_id: z.string() }),
    handler: (ctx, a) => ceEvent(call(ctx, 'calendar_get_event', a).event),
  }),
  '/calendar/events/create': defineTool({
    name: 'ce_calendar_create', app: 'calendar', description: 'Create an event.', mutates: true,
    input: z.object({ title: z.string(), start_time: z.string(), end_time: z.string(), attendees: z.array(z.string()).default([]), location: z.string().default('') }),
    handler: (ctx, a) => ({ status: 'created', event: ceEvent(call(ctx, 'calendar_create_event', { title: a.title, start: a.start_time, end: a.end_time, timezone: 'UTC', attendees: a.attendees, location: a.location }).event) }),
  }),
  '/calendar/user_events': defineTool({
    name: 'ce_calendar_user_events', app: 'calendar', description: "A person's events on a date.", mutates: false, input: z.object({ user: z.string(), date: z.string() }),
    handler(ctx, a) {
      const from = dayStart(a.date);
      const r = call(ctx, 'calendar_list_events', { start: iso(from), end: iso(from + DAY), timezone: 'UTC', page_size: 100 });
      const events = r.events.filter((e: any) => e.organizer.includes(a.user) || e.attendees.some((x: any) => x.email.includes(a.user))).map(ceEvent);
      return { events, total: events.length, user: a.user };
    },
  }),
  '/calendar/events/delete': defineTool({
    name: 'ce_calendar_delete', app: 'calendar', description: 'Delete an event.', mutates: true, input: z.object({ event_id: z.string() }),
    handler: (ctx, a) => ({ status: 'deleted', ...call(ctx, 'calendar_delete_event', a) }),
  }),
  '/contacts/search': defineTool({
    name: 'ce_contacts_search', app: 'contacts', description: 'Search contacts by name (and department).', mutates: false,
    input: z.object({ query: z.string(), department: z.string().nullable().optional() }),
    handler(ctx, a) {
      const cs = ctx.state.contacts.filter((c) => c.name.includes(a.query) && (!a.department || c.company.includes(a.department)));
      return { contacts: cs.map((c) => ({ contact_id: c.id, name: c.name, email: c.email, phone: c.phone, department: c.company, title: c.title })), total: cs.length };
    },
  }),
  '/contacts/get': defineTool({
    name: 'ce_contacts_get', app: 'contacts', description: 'Get one contact.', mutates: false, input: z.object({ contact_id: z.string() }),
    handler: (ctx, a) => {
      const c = call(ctx, 'contacts_get', a).contact;
      return { contact_id: c.id, name: c.name, email: c.email, phone: c.phone, department: c.company, title: c.title };
    },
  }),
  '/contacts/send_message': defineTool({
    name: 'ce_contacts_message', app: 'contacts', description: 'Message a contact (sent as an email).', mutates: true, input: z.object({ contact_id: z.string(), message: z.string() }),
    handler(ctx, a) {
      const c = call(ctx, 'contacts_get', { contact_id: a.contact_id }).contact;
      return { status: 'sent', record: call(ctx, 'mail_send', { to: [c.email], subject: 'Message', body: a.message }).message };
    },
  }),
  '/todo/tasks': defineTool({
    name: 'ce_todo_tasks', app: 'todo', description: 'List tasks by status.', mutates: false, input: z.object({ status: z.string().default('all') }),
    handler(ctx, a) {
      const want = a.status === 'all' ? null : STATUS_IN[a.status] ?? a.status;
      const ts = ctx.state.todos.filter((t) => want === null || t.status === want).map(ceTask);
      return { tasks: ts, total: ts.length };
    },
  }),
  '/todo/tasks/update': defineTool({
    name: 'ce_todo_update', app: 'todo', description: 'Update a task.', mutates: true,
    input: z.object({ task_id: z.string(), title: z.string().nullable().optional(), priority: z.string().nullable().optional(), status: z.string().nullable().optional(), tags: z.array(z.string()).nullable().optional() }),
    handler(ctx, a) {
      const t = ctx.state.todos.find((x) => x.id === a.task_id);
      if (!t) throw new ToolError('not_found', `Task ${a.task_id} not found`);
      if (a.status) {
        const s = STATUS_IN[a.status];
        if (!s) throw new ToolError('invalid_argument', `status must be one of ${Object.keys(STATUS_IN).join(', ')}.`);
        if (s !== t.status) call(ctx, 'todo_set_status', { todo_id: t.id, status: s });
      }
      if (a.title || a.priority) {
        if (a.priority && !PRIORITY_IN[a.priority]) throw new ToolError('invalid_argument', 'priority must be low, medium or high.');
        if (t.status === 'done') throw new ToolError('failed_precondition', 'A completed task cannot be edited.');
        call(ctx, 'todo_update', { todo_id: t.id, ...(a.title ? { title: a.title } : {}), ...(a.priority ? { priority: PRIORITY_IN[a.priority] } : {}) });
      }
      return { status: 'updated', task: ceTask(t) };
    },
  }),
  '/todo/tasks/create': defineTool({
    name: 'ce_todo_create', app: 'todo', description: 'Create a task.', mutates: true,
    input: z.object({ title: z.string(), description: z.string().nullable().optional(), priority: z.string().default('medium'), due_date: z.string().nullable().optional() }),
    handler(ctx, a) {
      const p = PRIORITY_IN[a.priority];
      if (!p) throw new ToolError('invalid_argument', 'priority must be low, medium or high.');
      const t = call(ctx, 'todo_create', { title: a.title, notes: a.description ?? '', priority: p, ...(a.due_date ? { due: a.due_date.slice(0, 10) } : {}) }).todo;
      return { status: 'created', task: ceTask(t) };
    },
  }),
  '/todo/tasks/delete': defineTool({
    name: 'ce_todo_delete', app: 'todo', description: 'Delete a task.', mutates: true, input: z.object({ task_id: z.string() }),
    handler: (ctx, a) => ({ status: 'deleted', ...call(ctx, 'todo_delete', { todo_id: a.task_id }) }),
  }),
};

export const COMPAT_TOOLS: AnyTool[] = Object.values(CLAW_EVAL_ENDPOINTS);

/** Endpoint URL ("http://localhost:9100/gmail/send") → compat tool, or undefined. */
export function compatToolFor(url: string): AnyTool | undefined {
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    /* already a path */
  }
  return CLAW_EVAL_ENDPOINTS[path.replace(/\/+$/, '')];
}
