// State diffs per step (for recordings and the viewer): which records of which collection were added,
// removed or changed, with the changed fields' old and new values.
import { COLLECTIONS, collection, type AppName, type ClawState, type CollectionName } from './state.ts';

/** The collections each app's tools can change. */
export const APP_COLLECTIONS: Record<AppName, CollectionName[]> = {
  mail: ['mail.messages'],
  calendar: ['calendar.events'],
  contacts: ['contacts'],
  docs: ['docs'],
  todo: ['todos'],
};

export interface RecordChange {
  collection: CollectionName | 'mail.folders';
  id: string;
  op: 'added' | 'removed' | 'changed';
  /** For changed: field → [before, after]. For added/removed: the record. */
  fields?: Record<string, [unknown, unknown]>;
  record?: unknown;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Changes between two states; `only` limits the comparison to some collections (a tool touches its app's). */
export function diffState(before: ClawState, after: ClawState, only: readonly CollectionName[] = COLLECTIONS): RecordChange[] {
  const out: RecordChange[] = [];
  for (const name of only) {
    const a = new Map(collection(before, name).map((r) => [r.id, r as Record<string, unknown>]));
    const b = new Map(collection(after, name).map((r) => [r.id, r as Record<string, unknown>]));
    for (const [id, rec] of b) {
      const old = a.get(id);
      if (!old) {
        out.push({ collection: name, id, op: 'added', record: rec });
        continue;
      }
      const fields: Record<string, [unknown, unknown]> = {};
      for (const k of new Set([...Object.keys(old), ...Object.keys(rec)])) if (!same(old[k], rec[k])) fields[k] = [old[k], rec[k]];
      if (Object.keys(fields).length) out.push({ collection: name, id, op: 'changed', fields });
    }
    for (const [id, rec] of a) if (!b.has(id)) out.push({ collection: name, id, op: 'removed', record: rec });
  }
  if (!only.includes('mail.messages')) return out;
  for (const f of after.mail.folders) if (!before.mail.folders.includes(f)) out.push({ collection: 'mail.folders', id: f, op: 'added' });
  for (const f of before.mail.folders) if (!after.mail.folders.includes(f)) out.push({ collection: 'mail.folders', id: f, op: 'removed' });
  return out;
}
