// Expands recurring events into instances within a window. Recurrences follow the event's own time zone,
// so a weekly 09:00 New York meeting stays at 09:00 local across a DST change (and moves in UTC).
import type { CalEvent } from '../state.ts';
import { wallTime, wallToUtc } from '../time.ts';

const DAY_CODES = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];

export interface Instance {
  event: CalEvent;
  /** Instance id: the event id, plus "_YYYYMMDD" for an occurrence of a recurring event. */
  id: string;
  start: number;
  end: number;
}

const MAX_INSTANCES = 1000;

export function expand(ev: CalEvent, from: number, to: number): Instance[] {
  const start = Date.parse(ev.start);
  const dur = Date.parse(ev.end) - start;
  if (!ev.recurrence) return start < to && start + dur > from ? [{ event: ev, id: ev.id, start, end: start + dur }] : [];
  const r = ev.recurrence;
  const tz = ev.timezone;
  const w0 = wallTime(start, tz);
  const until = r.until ? Date.parse(r.until) : Infinity;
  const out: Instance[] = [];
  let produced = 0;
  const emit = (y: number, mo: number, d: number): boolean => {
    const s = wallToUtc({ year: y, month: mo, day: d, hour: w0.hour, minute: w0.minute, second: w0.second }, tz);
    if (s < start) return true;
    if (s > until || (r.count !== undefined && produced >= r.count) || s >= to || produced > MAX_INSTANCES * 10) return false;
    produced++;
    if (s + dur > from) {
      const tag = `${y}${String(mo).padStart(2, '0')}${String(d).padStart(2, '0')}`;
      out.push({ event: ev, id: `${ev.id}_${tag}`, start: s, end: s + dur });
    }
    return out.length < MAX_INSTANCES;
  };
  // Walk calendar days in the event's zone (UTC date arithmetic on the wall date is exact).
  const base = Date.UTC(w0.year, w0.month - 1, w0.day);
  const DAY = 86_400_000;
  if (r.freq === 'monthly') {
    for (let i = 0; ; i += r.interval) {
      const d = new Date(Date.UTC(w0.year, w0.month - 1 + i, 1));
      const dim = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
      if (w0.day > dim) continue;
      if (!emit(d.getUTCFullYear(), d.getUTCMonth() + 1, w0.day)) break;
    }
    return out;
  }
  const byDay = r.freq === 'weekly' ? (r.by_day?.length ? r.by_day.map((c) => DAY_CODES.indexOf(c)) : [w0.weekday]) : null;
  for (let day = 0; ; day++) {
    const d = new Date(base + day * DAY);
    if (byDay) {
      const week = Math.floor((day + w0.weekday) / 7);
      if (week % r.interval !== 0 || !byDay.includes(d.getUTCDay())) continue;
    } else if (day % r.interval !== 0) continue;
    if (!emit(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate())) break;
  }
  return out;
}
