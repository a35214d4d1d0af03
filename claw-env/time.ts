// Time zones without a dependency: IANA zones through Intl. Wall times ("2026-03-10T15:00") in a zone are
// converted to UTC by asking Intl for the zone's offset at that instant (twice, for DST edges).

const fmtCache = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = fmtCache.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'short',
    });
    fmtCache.set(tz, f);
  }
  return f;
}

export function isValidTimeZone(tz: string): boolean {
  try {
    formatter(tz);
    return true;
  } catch {
    return false;
  }
}

export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** 0 = Sunday. */
  weekday: number;
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** The wall time in `tz` at the instant `ms`. */
export function wallTime(ms: number, tz: string): WallTime {
  const parts: Record<string, string> = {};
  for (const p of formatter(tz).formatToParts(new Date(ms))) parts[p.type] = p.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: WEEKDAYS.indexOf(parts.weekday),
  };
}

/** Offset of `tz` from UTC at instant `ms`, in ms (east positive). */
function zoneOffset(ms: number, tz: string): number {
  const w = wallTime(ms, tz);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/** UTC instant of a wall time in `tz` (a wall time skipped by DST resolves forward). */
export function wallToUtc(w: Omit<WallTime, 'weekday'>, tz: string): number {
  const guess = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  let ms = guess - zoneOffset(guess, tz);
  ms = guess - zoneOffset(ms, tz);
  return ms;
}

const LOCAL_RE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/;
const ZONED_RE = /(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * Parses "2026-03-10T15:00" (a wall time in `tz`) or a full ISO time with offset/Z (tz ignored).
 * Returns null when it is neither.
 */
export function parseTime(text: string, tz: string): number | null {
  const s = text.trim();
  if (ZONED_RE.test(s)) {
    const ms = Date.parse(s);
    return Number.isNaN(ms) ? null : ms;
  }
  const m = LOCAL_RE.exec(s);
  if (!m) return null;
  const [y, mo, d, h, mi, se] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59) return null;
  return wallToUtc({ year: y, month: mo, day: d, hour: h, minute: mi, second: se }, tz);
}

export function iso(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

const pad = (n: number) => String(n).padStart(2, '0');

/** "2026-03-10T15:00:00-04:00" style local rendering of an instant in `tz`. */
export function localIso(ms: number, tz: string): string {
  const w = wallTime(ms, tz);
  const off = zoneOffset(ms, tz) / 60000;
  const sign = off < 0 ? '-' : '+';
  const a = Math.abs(off);
  return `${w.year}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}${sign}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}

/** "YYYY-MM-DD" of an instant in `tz`. */
export function localDate(ms: number, tz: string): string {
  const w = wallTime(ms, tz);
  return `${w.year}-${pad(w.month)}-${pad(w.day)}`;
}
