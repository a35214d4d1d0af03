// Building a task's starting world on the seeded fixture (fixtures/world.ts): the mail and calendar items a task
// adds, seeded picks, and the dates and times tasks speak of. Shared by the templates and the hand-written tasks.
import { contactByName, PEOPLE, type World } from '../fixtures/world.ts';
import { iso, wallToUtc } from '../time.ts';

export const H = 3_600_000;
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'];
export const pad = (n: number) => String(n).padStart(2, '0');

/** One of `xs`, drawn from the world's seeded generator. */
export const pick = <T>(w: World, xs: readonly T[]): T => xs[Math.floor(w.rand() * xs.length)];

/** A weekday of the week after "now" (2026-03-16 is a Monday), as YYYY-MM-DD and its name. */
export function nextWeekDay(w: World): { date: string; name: string; day: number } {
  const i = Math.floor(w.rand() * 5);
  const base = Date.parse(w.state.now);
  const d = new Date(base + (7 - new Date(base).getUTCDay() + 1 + i) * 24 * H);
  return { date: d.toISOString().slice(0, 10), name: DAYS[i], day: d.getUTCDate() };
}

/** The UTC instant of a wall-clock time on `date` in time zone `tz`. */
export function utcOf(date: string, hour: number, tz: string, minute = 0): string {
  const [y, m, d] = date.split('-').map(Number);
  return iso(wallToUtc({ year: y, month: m, day: d, hour, minute, second: 0 }, tz));
}

/** A seeded pick among the fixture's people, as their contact record. */
export function person(w: World) {
  const p = pick(w, PEOPLE);
  return contactByName(w.state, p.name);
}

export interface InboxExtra {
  labels?: string[];
  attachments?: { filename: string; mime: string; size: number }[];
  /** How long ago it arrived (default 1 hour). */
  hoursAgo?: number;
  to?: string[];
  cc?: string[];
  read?: boolean;
}

/** Puts an unread (unless `read`) message from `from` into the user's inbox. */
export function addInbox(w: World, from: { email: string; name: string }, subject: string, body: string, extra: InboxExtra = {}) {
  const m = {
    id: w.id('msg'), thread_id: w.id('thr'), folder: 'inbox', labels: extra.labels ?? [], from: from.email, from_name: from.name, to: extra.to ?? [w.state.user.email], cc: extra.cc ?? [], subject, body,
    date: iso(Date.parse(w.state.now) - (extra.hoursAgo ?? 1) * H), read: extra.read ?? false, starred: false, attachments: extra.attachments ?? [],
  };
  w.state.mail.messages.push(m);
  return m;
}

export interface EventExtra {
  organizer: string;
  attendees: { email: string; response: 'needs_action' | 'accepted' | 'declined' | 'tentative' }[];
  location: string;
  status: 'confirmed' | 'cancelled';
  timezone: string;
}

/** Puts an event on the user's calendar (organised by the user unless told otherwise). */
export function addEvent(w: World, title: string, start: string, end: string, extra: Partial<EventExtra> = {}) {
  const e = { id: w.id('evt'), title, start, end, timezone: extra.timezone ?? 'America/New_York', location: extra.location ?? '', description: '', organizer: extra.organizer ?? w.state.user.email, attendees: extra.attendees ?? [], status: extra.status ?? 'confirmed' };
  w.state.calendar.events.push(e);
  return e;
}
