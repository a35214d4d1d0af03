// Sandbox records on worker pods (k8s/records.ts): the annotation encoding every orchestrator replica reads.
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import {
  closedRecord,
  decodeRecord,
  encodeRecord,
  liveCount,
  podRecords,
  pruneTombstones,
  recordDeadline,
  recordKey,
  RECORD_PREFIX,
  safeName,
  TOMBSTONE_MS,
  type SandboxRecord,
} from '../../k8s/records.ts';
import { validateK8sObject } from '../../k8s/sim/schema.ts';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');

function rec(over: Partial<SandboxRecord> = {}): SandboxRecord {
  return {
    v: 1,
    id: 'sb_0123456789abcdef',
    type: 'browser',
    template: 'browser',
    owner: 'orch-a',
    state: 'ready',
    worker: 'sb_fedcba9876543210',
    created: new Date(T0).toISOString(),
    ttl: 3600,
    idle: 600,
    seen: new Date(T0).toISOString(),
    labels: { run: 'r1' },
    ...over,
  };
}

function pod(records: SandboxRecord[], extra: Record<string, string> = {}): V1Pod {
  const annotations: Record<string, string> = { ...extra };
  for (const r of records) annotations[recordKey(r.id)] = encodeRecord(r);
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'grove-browser-0123456789', namespace: 'grove', annotations }, spec: { containers: [{ name: 'worker', image: 'w' }] } };
}

describe('encode / decode', () => {
  test('a record survives the round trip, and the pod carrying it is a valid Pod', () => {
    const r = rec();
    expect(decodeRecord(encodeRecord(r))).toEqual(r);
    const p = pod([r, rec({ id: 'sb_1111111111111111', state: 'creating', worker: null })]);
    validateK8sObject(p);
    expect([...podRecords(p).keys()].sort()).toEqual(['sb_0123456789abcdef', 'sb_1111111111111111']);
  });

  test('the key is the id when it is a valid annotation name, else a stable hash of it', () => {
    expect(recordKey('sb_0123456789abcdef')).toBe(`${RECORD_PREFIX}sb_0123456789abcdef`);
    const odd = 'my sandbox/ü:1';
    expect(safeName(odd)).toMatch(/^x-[0-9a-f]{40}$/);
    expect(safeName(odd)).toBe(safeName(odd));
    expect(safeName(odd)).not.toBe(safeName(odd + ' '));
    expect(safeName('a'.repeat(64))).toMatch(/^x-/);
    expect(safeName('-leading')).toMatch(/^x-/);
    // A pod with such a record is still valid (annotation names are checked by the schema's consumers: here by hand).
    const r = rec({ id: odd });
    const p = pod([r]);
    expect(Object.keys(p.metadata!.annotations!)[0]!.split('/')[1]!.length).toBeLessThanOrEqual(63);
    expect(podRecords(p).get(odd)).toEqual(r);
  });

  test('no secrets: only the listed fields are written (the create spec, e.g. shell env, is not)', () => {
    const withSpec = { ...rec(), env: { TOKEN: 'secret' } } as unknown as SandboxRecord;
    expect(encodeRecord(withSpec)).not.toContain('secret');
    const decoded = decodeRecord(encodeRecord(withSpec))!;
    expect(decoded).not.toHaveProperty('env');
    expect(Object.keys(decoded).sort()).toEqual(['created', 'id', 'idle', 'labels', 'owner', 'seen', 'state', 'template', 'ttl', 'type', 'v', 'worker']);
  });

  test('corrupt, foreign or misfiled annotations are ignored, not thrown on', () => {
    expect(decodeRecord('{not json')).toBeNull();
    expect(decodeRecord(JSON.stringify({ v: 2, id: 'x' }))).toBeNull();
    expect(decodeRecord(JSON.stringify({ ...rec(), created: 'yesterday' }))).toBeNull();
    expect(decodeRecord(undefined)).toBeNull();
    const misfiled = { [recordKey('sb_other')]: encodeRecord(rec()) };
    const p = pod([], { ...misfiled, [`${RECORD_PREFIX}junk`]: '42', 'example.com/note': 'hello' });
    expect(podRecords(p).size).toBe(0);
  });

  test('labels too large for an annotation are left out, the rest of the record kept', () => {
    const big = rec({ labels: { blob: 'x'.repeat(10_000) } });
    const d = decodeRecord(encodeRecord(big))!;
    expect(d.labels).toEqual({});
    expect(d.worker).toBe(big.worker);
    expect(encodeRecord(big).length).toBeLessThan(1000);
  });
});

describe('load, deadlines, tombstones', () => {
  test('load counts live records (creating and ready), not tombstones', () => {
    const p = pod([rec(), rec({ id: 'sb_2', state: 'creating', worker: null }), closedRecord(rec({ id: 'sb_3' }), 'deleted', T0)]);
    expect(liveCount(p)).toBe(2);
    expect(liveCount(undefined)).toBe(0);
  });

  test('the deadline is the earlier of TTL and idle timeout after the last recorded use', () => {
    expect(recordDeadline(rec())).toEqual({ at: T0 + 600_000, reason: 'expired_idle' });
    expect(recordDeadline(rec({ seen: new Date(T0 + 3_500_000).toISOString() }))).toEqual({ at: T0 + 3_600_000, reason: 'expired_ttl' });
  });

  test('a closed record keeps the reason and time, drops the labels; old tombstones are pruned', () => {
    const c = closedRecord(rec(), 'expired_idle', T0 + 1000);
    expect(c).toMatchObject({ state: 'closed', reason: 'expired_idle', closed: new Date(T0 + 1000).toISOString(), labels: {} });
    expect(decodeRecord(encodeRecord(c))).toEqual(c);
    const old = closedRecord(rec({ id: 'sb_old' }), 'deleted', T0);
    const fresh = closedRecord(rec({ id: 'sb_new' }), 'deleted', T0 + TOMBSTONE_MS);
    const p = pod([old, fresh, rec({ id: 'sb_live' })]);
    expect(pruneTombstones(p, T0 + TOMBSTONE_MS + 1)).toEqual({ [recordKey('sb_old')]: null });
    expect(pruneTombstones(p, T0 + TOMBSTONE_MS + 1, 'sb_old')).toEqual({});
  });
});
