// Calendar: events (one-off and recurring), free/busy, create/update/delete, invitations and responses,
// time zones. Times in arguments are either full ISO times with an offset, or wall times ("2026-03-10T15:00")
// in the `timezone` argument (default: the user's zone).
import { z } from 'zod';
import { CalEvent, Recurrence } from '../state.ts';
import { isValidTimeZone, iso, localIso, parseTime } from '../time.ts';
import { defineTool, Email, includesText, PageArgs, paginate, ToolError, type ToolContext } from '../tool.ts';
import { expand, type Instance } from './recurrence.ts';

function zone(ctx: ToolContext, tz: string | undefined): string {
  const z = tz ?? ctx.state.user.timezone;
  if (!isValidTimeZone(z)) throw new ToolError('invalid_argument', `Unknown time zone ${JSON.stringify(z)}; use an IANA name like "Europe/Berlin".`);
  return z;
}

function time(text: string, tz: string, field: string): number {
  const ms = parseTime(text, tz);
  if (ms === null) throw new ToolError('invalid_argument', `${field}: ${JSON.stringify(text)} is not a time; use "2026-03-10T15:00" (in timezone) or ISO-8601 with an offset.`);
  return ms;
}

function view(i: Instance, tz: string) {
  const e = i.event;
  return {
    id: i.id,
    event_id: e.id,
    title: e.title,
    start: iso(i.start),
    end: iso(i.end),
    start_local: localIso(i.start, tz),
    end_local: localIso(i.end, tz),
    timezone: e.timezone,
    location: e.location,
    description: e.description,
    organizer: e.organizer,
    attendees: e.attendees,
    recurring: e.recurrence !== undefined,
    recurrence: e.recurrence ?? null,
    status: e.status,
  };
}

function eventById(ctx: ToolContext, id: string): CalEvent {
  // An instance id ("evt_x_20260310") addresses its series.
  const base = ctx.state.calendar.events.find((e) => e.id === id) ?? ctx.state.calendar.events.find((e) => id.startsWith(`${e.id}_`));
  if (!base) throw new ToolError('not_found', `Event ${JSON.stringify(id)} not found.`);
  return base;
}

/** Busy intervals of one person in [from, to): own events (organizer or accepted/tentative) + known busy blocks. */
function busyOf(ctx: ToolContext, email: string, from: number, to: number): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  const me = ctx.state.user.email;
  for (const e of ctx.state.calendar.events) {
    if (e.status === 'cancelled') continue;
    const att = e.attendees.find((a) => a.email === email);
    const involved = e.organizer === email ? email === me || !att || att.response !== 'declined' : att && (att.response === 'accepted' || att.response === 'tentative');
    if (!involved) continue;
    for (const i of expand(e, from, to)) out.push({ start: i.start, end: i.end });
  }
  for (const b of ctx.state.calendar.busy[email] ?? []) {
    const s = Date.parse(b.start);
    const en = Date.parse(b.end);
    if (s < to && en > from) out.push({ start: s, end: en });
  }
  out.sort((a, b) => a.start - b.start);
  const merged: { start: number; end: number }[] = [];
  for (const b of out) {
    const last = merged[merged.length - 1];
    if (last && b.start <= last.end) last.end = Math.max(last.end, b.end);
    else merged.push({ ...b });
  }
  return merged;
}

const MAX_WINDOW = 370 * 86_400_000;

function window(ctx: ToolContext, a: { start: string; end: string; timezone?: string }) {
  const tz = zone(ctx, a.timezone);
  const from = time(a.start, tz, 'start');
  const to = time(a.end, tz, 'end');
  if (to <= from) throw new ToolError('invalid_argument', 'end must be after start.');
  if (to - from > MAX_WINDOW) throw new ToolError('invalid_argument', 'The window may span at most 370 days.');
  return { tz, from, to };
}

const TimeArg = z.string().min(1).max(40);
const EventFields = {
  title: z.string().trim().min(1).max(300),
  start: TimeArg.describe('Start: "YYYY-MM-DDTHH:MM" in `timezone`, or ISO-8601 with offset.'),
  end: TimeArg.describe('End, same forms as start; must be after start.'),
  timezone: z.string().optional().describe('IANA time zone of start/end (default: the user\'s).'),
  location: z.string().max(500).default(''),
  description: z.string().max(10_000).default(''),
  attendees: z.array(Email).max(100).default([]).describe('Emails to invite (each gets an invitation).'),
  recurrence: Recurrence.optional(),
};

export const calendarTools = [
  defineTool({
    name: 'calendar_list_events',
    app: 'calendar',
    description: 'List event instances overlapping a window (recurring events expanded), earliest first; optional text query.',
    input: z.object({ start: TimeArg, end: TimeArg, timezone: z.string().optional(), query: z.string().max(200).optional(), include_cancelled: z.boolean().default(false), ...PageArgs }),
    mutates: false,
    handler(ctx, a) {
      const { tz, from, to } = window(ctx, a);
      const all = ctx.state.calendar.events
        .filter((e) => a.include_cancelled || e.status !== 'cancelled')
        .filter((e) => !a.query || includesText([e.title, e.description, e.location, ...e.attendees.map((x) => x.email)], a.query))
        .flatMap((e) => expand(e, from, to))
        .sort((x, y) => x.start - y.start);
      const page = paginate(all, a, { from, to, q: a.query ?? '', c: a.include_cancelled });
      return { events: page.items.map((i) => view(i, tz)), next_page_token: page.next_page_token, total: page.total, timezone: tz };
    },
  }),
  defineTool({
    name: 'calendar_get_event',
    app: 'calendar',
    description: 'Get one event (an instance id addresses its series).',
    input: z.object({ event_id: z.string().min(1), timezone: z.string().optional() }),
    mutates: false,
    handler(ctx, a) {
      const e = eventById(ctx, a.event_id);
      const s = Date.parse(e.start);
      return { event: view({ event: e, id: e.id, start: s, end: Date.parse(e.end) }, zone(ctx, a.timezone)) };
    },
  }),
  defineTool({
    name: 'calendar_create_event',
    app: 'calendar',
    description: 'Create an event; attendees receive invitations (response needs_action). Optional weekly/daily/monthly recurrence.',
    input: z.object(EventFields),
    mutates: true,
    handler(ctx, a) {
      const tz = zone(ctx, a.timezone);
      const s = time(a.start, tz, 'start');
      const e = time(a.end, tz, 'end');
      if (e <= s) throw new ToolError('invalid_argument', 'end must be after start.');
      if (e - s > 14 * 86_400_000) throw new ToolError('invalid_argument', 'An event may last at most 14 days.');
      if (a.recurrence?.until && Date.parse(a.recurrence.until) < s) throw new ToolError('invalid_argument', 'recurrence.until is before the first occurrence.');
      const me = ctx.state.user.email;
      const ev: CalEvent = CalEvent.parse({
        id: ctx.newId('evt'),
        title: a.title,
        start: iso(s),
        end: iso(e),
        timezone: tz,
        location: a.location,
        description: a.description,
        organizer: me,
        attendees: [...new Set(a.attendees.filter((x) => x !== me))].map((email) => ({ email, response: 'needs_action' })),
        recurrence: a.recurrence,
      });
      ctx.state.calendar.events.push(ev);
      return { event: view({ event: ev, id: ev.id, start: s, end: e }, tz), invitations_sent: ev.attendees.map((x) => x.email) };
    },
  }),
  defineTool({
    name: 'calendar_update_event',
    app: 'calendar',
    description: 'Change an event you organize (whole series for recurring events). New attendees are invited.',
    input: z.object({ event_id: z.string().min(1), ...Object.fromEntries(Object.entries(EventFields).map(([k, v]) => [k, (v as z.ZodType).optional()])) }) as z.ZodType<
      { event_id: string; title?: string; start?: string; end?: string; timezone?: string; location?: string; description?: string; attendees?: string[]; recurrence?: z.infer<typeof Recurrence> }
    >,
    mutates: true,
    handler(ctx, a) {
      const ev = eventById(ctx, a.event_id);
      if (ev.organizer !== ctx.state.user.email) throw new ToolError('permission_denied', `Only the organizer (${ev.organizer}) can change this event; respond with calendar_respond instead.`);
      const tz = zone(ctx, a.timezone ?? ev.timezone);
      const s = a.start !== undefined ? time(a.start, tz, 'start') : Date.parse(ev.start);
      const e = a.end !== undefined ? time(a.end, tz, 'end') : a.start !== undefined ? s + (Date.parse(ev.end) - Date.parse(ev.start)) : Date.parse(ev.end);
      if (e <= s) throw new ToolError('invalid_argument', 'end must be after start.');
      ev.start = iso(s);
      ev.end = iso(e);
      ev.timezone = tz;
      if (a.title !== undefined) ev.title = a.title;
      if (a.location !== undefined) ev.location = a.location;
      if (a.description !== undefined) ev.description = a.description;
      if (a.recurrence !== undefined) ev.recurrence = a.recurrence;
      const invited: string[] = [];
      if (a.attendees !== undefined) {
        ev.attendees = a.attendees.filter((x) => x !== ev.organizer).map((email) => {
          const old = ev.attendees.find((x) => x.email === email);
          if (!old) invited.push(email);
          return old ?? { email, response: 'needs_action' as const };
        });
      }
      return { event: view({ event: ev, id: ev.id, start: s, end: e }, tz), invitations_sent: invited };
    },
  }),
  defineTool({
    name: 'calendar_delete_event',
    app: 'calendar',
    description: 'Delete an event you organize (attendees are notified of the cancellation), or remove an invitation from your calendar.',
    input: z.object({ event_id: z.string().min(1) }),
    mutates: true,
    handler(ctx, a) {
      const ev = eventById(ctx, a.event_id);
      if (ev.organizer === ctx.state.user.email) {
        ctx.state.calendar.events = ctx.state.calendar.events.filter((x) => x !== ev);
        return { deleted: ev.id, cancellations_sent: ev.attendees.map((x) => x.email) };
      }
      const me = ev.attendees.find((x) => x.email === ctx.state.user.email);
      if (me) me.response = 'declined';
      ev.status = 'cancelled';
      return { deleted: ev.id, cancellations_sent: [] };
    },
  }),
  defineTool({
    name: 'calendar_respond',
    app: 'calendar',
    description: 'Answer an invitation: accepted, declined or tentative.',
    input: z.object({ event_id: z.string().min(1), response: z.enum(['accepted', 'declined', 'tentative']), comment: z.string().max(1000).default('') }),
    mutates: true,
    handler(ctx, a) {
      const ev = eventById(ctx, a.event_id);
      if (ev.organizer === ctx.state.user.email) throw new ToolError('failed_precondition', 'You organize this event; there is no invitation to answer.');
      const me = ev.attendees.find((x) => x.email === ctx.state.user.email);
      if (!me) throw new ToolError('permission_denied', 'You are not invited to this event.');
      me.response = a.response;
      return { event_id: ev.id, response: a.response };
    },
  }),
  defineTool({
    name: 'calendar_free_busy',
    app: 'calendar',
    description: 'Busy intervals of people (the user and contacts) in a window, in UTC and in `timezone`.',
    input: z.object({ emails: z.array(Email).min(1).max(20), start: TimeArg, end: TimeArg, timezone: z.string().optional() }),
    mutates: false,
    handler(ctx, a) {
      const { tz, from, to } = window(ctx, a);
      const calendars: Record<string, { start: string; end: string; start_local: string; end_local: string }[]> = {};
      for (const email of a.emails) {
        calendars[email] = busyOf(ctx, email, from, to).map((b) => ({ start: iso(b.start), end: iso(b.end), start_local: localIso(b.start, tz), end_local: localIso(b.end, tz) }));
      }
      return { timezone: tz, calendars };
    },
  }),
];
