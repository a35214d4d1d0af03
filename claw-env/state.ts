// The state of one Claw sandbox's apps (mail, calendar, contacts, docs, todo), as zod schemas: fixtures are
// parsed with them, tools read and write it, graders inspect it. Times are ISO-8601 UTC strings.
import { z } from 'zod';

export const APPS = ['mail', 'calendar', 'contacts', 'docs', 'todo'] as const;
export const AppName = z.enum(APPS);
export type AppName = z.infer<typeof AppName>;

const Iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'not an ISO-8601 time');

export const Attachment = z.object({ filename: z.string(), mime: z.string().default('application/octet-stream'), size: z.number().int().min(0).default(0) });

export const Message = z.object({
  id: z.string(),
  thread_id: z.string(),
  folder: z.string().default('inbox'),
  labels: z.array(z.string()).default([]),
  from: z.string(),
  from_name: z.string().optional(),
  to: z.array(z.string()).default([]),
  cc: z.array(z.string()).default([]),
  subject: z.string(),
  body: z.string().default(''),
  date: Iso,
  read: z.boolean().default(false),
  starred: z.boolean().default(false),
  attachments: z.array(Attachment).default([]),
  in_reply_to: z.string().optional(),
  forwarded_from: z.string().optional(),
});
export type Message = z.infer<typeof Message>;

const RSVP = z.enum(['needs_action', 'accepted', 'declined', 'tentative']);
const Attendee = z.object({ email: z.string(), response: RSVP.default('needs_action') });

export const Recurrence = z.object({
  freq: z.enum(['daily', 'weekly', 'monthly']),
  interval: z.number().int().min(1).max(52).default(1),
  count: z.number().int().min(1).max(500).optional(),
  until: Iso.optional(),
  by_day: z.array(z.enum(['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'])).optional(),
});
export type Recurrence = z.infer<typeof Recurrence>;

export const CalEvent = z.object({
  id: z.string(),
  title: z.string(),
  start: Iso,
  end: Iso,
  /** The IANA zone the event was created in (wall times and recurrences follow it). */
  timezone: z.string().default('UTC'),
  location: z.string().default(''),
  description: z.string().default(''),
  organizer: z.string(),
  attendees: z.array(Attendee).default([]),
  recurrence: Recurrence.optional(),
  status: z.enum(['confirmed', 'cancelled']).default('confirmed'),
});
export type CalEvent = z.infer<typeof CalEvent>;

export const Contact = z.object({
  id: z.string(),
  name: z.string(),
  email: z.string(),
  phone: z.string().default(''),
  company: z.string().default(''),
  title: z.string().default(''),
  timezone: z.string().default('UTC'),
  notes: z.string().default(''),
});
export type Contact = z.infer<typeof Contact>;

export const Doc = z.object({
  id: z.string(),
  title: z.string(),
  body: z.string().default(''),
  tags: z.array(z.string()).default([]),
  created_at: Iso,
  updated_at: Iso,
});
export type Doc = z.infer<typeof Doc>;

export const Todo = z.object({
  id: z.string(),
  title: z.string(),
  notes: z.string().default(''),
  list: z.string().default('inbox'),
  due: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional(),
  priority: z.enum(['low', 'normal', 'high']).default('normal'),
  status: z.enum(['open', 'done']).default('open'),
  created_at: Iso,
  completed_at: Iso.optional(),
});
export type Todo = z.infer<typeof Todo>;

const BusyBlock = z.object({ start: Iso, end: Iso });

export const ClawState = z.object({
  user: z.object({ name: z.string(), email: z.string(), timezone: z.string().default('UTC') }),
  /** The sandbox clock's start: every run of a task sees the same "now". */
  now: Iso,
  mail: z.object({
    folders: z.array(z.string()).default(['inbox', 'sent', 'drafts', 'archive', 'trash', 'spam']),
    messages: z.array(Message).default([]),
  }).default({ folders: ['inbox', 'sent', 'drafts', 'archive', 'trash', 'spam'], messages: [] }),
  calendar: z.object({
    events: z.array(CalEvent).default([]),
    /** Other people's busy time (their calendars are not in this sandbox), by email. */
    busy: z.record(z.string(), z.array(BusyBlock)).default({}),
  }).default({ events: [], busy: {} }),
  contacts: z.array(Contact).default([]),
  docs: z.array(Doc).default([]),
  todos: z.array(Todo).default([]),
});
export type ClawState = z.infer<typeof ClawState>;
export type ClawStateInput = z.input<typeof ClawState>;

/** Parses a fixture into a full state (defaults filled); throws a readable message on bad fixtures. */
export function parseState(input: unknown, where = 'state'): ClawState {
  const r = ClawState.safeParse(input);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new Error(`${where}: ${i.path.join('.') || '(root)'}: ${i.message}`);
  }
  return r.data;
}

export function cloneState(s: ClawState): ClawState {
  return structuredClone(s);
}

/** The record collections graders and diffs address, by name. */
export const COLLECTIONS = ['mail.messages', 'calendar.events', 'contacts', 'docs', 'todos'] as const;
export type CollectionName = (typeof COLLECTIONS)[number];

export function collection(s: ClawState, name: CollectionName): { id: string }[] {
  switch (name) {
    case 'mail.messages':
      return s.mail.messages;
    case 'calendar.events':
      return s.calendar.events;
    case 'contacts':
      return s.contacts;
    case 'docs':
      return s.docs;
    case 'todos':
      return s.todos;
  }
}
