// Field matching for graders: dotted paths descend into objects, arrays match when any element does.
import type { Matcher, Where } from '../tasks/format.ts';

function values(rec: unknown, path: string[]): unknown[] {
  if (path.length === 0) return Array.isArray(rec) ? [rec, ...rec] : [rec];
  if (Array.isArray(rec)) return rec.flatMap((x) => values(x, path));
  if (rec === null || typeof rec !== 'object') return [];
  const v = (rec as Record<string, unknown>)[path[0]];
  if (v === undefined) return [];
  return values(v, path.slice(1));
}

const lc = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v);

function one(v: unknown, m: Matcher): boolean {
  if (m === null || typeof m !== 'object') return lc(v) === lc(m);
  if ('contains' in m) return typeof v === 'string' && v.toLowerCase().includes(m.contains.toLowerCase());
  if ('in' in m) return m.in.some((x) => lc(x) === lc(v));
  if ('at' in m) return typeof v === 'string' && Date.parse(v) === Date.parse(m.at);
  return false;
}

function fieldMatches(rec: unknown, path: string, m: Matcher): boolean {
  const vs = values(rec, path.split('.'));
  if (m !== null && typeof m === 'object' && 'exists' in m) return (vs.length > 0) === m.exists;
  if (m !== null && typeof m === 'object' && 'not' in m) return !fieldMatches(rec, path, m.not);
  return vs.some((v) => one(v, m));
}

export function matches(rec: unknown, where: Where | undefined): boolean {
  if (!where) return true;
  return Object.entries(where).every(([path, m]) => fieldMatches(rec, path, m));
}
