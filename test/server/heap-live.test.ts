// The live-heap gauge follows full collections: it rises with objects kept alive and falls when they are released,
// whatever garbage lies around between collections.
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { followLiveHeap, liveHeap } from '../../server/heap-live.ts';
import { loadConfig } from '../../sandbox/config.ts';
import { buildApp } from '../../server/app.ts';
import { MemoryBackend } from '../sandbox/memory-backend.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** A full collection, then the observer's entry (delivered a moment later). */
async function collect(): Promise<number> {
  const before = liveHeap()?.at ?? 0;
  for (let i = 0; i < 50; i++) {
    gc();
    await sleep(20);
    const l = liveHeap();
    if (l && l.at >= before && l.at !== before) return l.bytes;
  }
  throw new Error('no full collection was observed');
}

describe('live heap', () => {
  it('measures the objects kept alive after a full collection', async () => {
    followLiveHeap();
    await collect();
    const base = await collect();
    let kept: number[][] | null = Array.from({ length: 40 }, () => Array.from({ length: 100_000 }, (_, i) => i + 0.5));
    const withKept = await collect();
    expect(withKept - base).toBeGreaterThan(20e6);
    expect(kept.length).toBe(40);
    kept = null;
    const released = await collect();
    expect(withKept - released).toBeGreaterThan(20e6);
  });

  it('is the heap at the end of the collection, not what was allocated before its entry arrived', async () => {
    followLiveHeap();
    const base = await collect();
    const before = liveHeap()!.at;
    gc();
    // 16 MB allocated right after the collection, still alive when its entry is delivered (a busy server
    // allocates like this between a collection and the observer's turn on the event loop).
    const fresh = Array.from({ length: 20 }, () => Array.from({ length: 100_000 }, (_, i) => i + 0.5));
    for (let i = 0; i < 50 && liveHeap()!.at === before; i++) await sleep(20);
    expect(liveHeap()!.at).not.toBe(before);
    expect(fresh.length).toBe(20);
    expect(Math.abs(liveHeap()!.bytes - base)).toBeLessThan(4e6);
  });

  it('tells which V8 space the live bytes are in (arrays of doubles past the regular object size: large objects)', async () => {
    followLiveHeap();
    await collect();
    const base = liveHeap()!.spaces;
    let kept: number[][] | null = Array.from({ length: 20 }, () => Array.from({ length: 100_000 }, (_, i) => i + 0.5));
    await collect();
    const withKept = liveHeap()!;
    expect(kept.length).toBe(20);
    // 20 × 100,000 doubles = 16 MB, each array's backing store over the regular page's object limit.
    expect(withKept.spaces.large_object_space - base.large_object_space).toBeGreaterThan(14e6);
    const sum = Object.values(withKept.spaces).reduce((a, b) => a + b, 0);
    expect(Math.abs(sum - withKept.bytes)).toBeLessThan(0.05 * withKept.bytes);
    kept = null;
  });

  it('is exported as grove_process_heap_live_bytes once a full collection ran', async () => {
    const key = 'test-key-0123456789';
    const app = await buildApp({ config: loadConfig({ env: {}, flags: { apiKey: key } }), backend: new MemoryBackend() });
    try {
      await collect();
      const res = await app.inject({ method: 'GET', url: '/metrics', headers: { 'x-api-key': key } });
      const line = res.body.split('\n').find((l) => l.startsWith('grove_process_heap_live_bytes '));
      expect(Number(line?.split(' ')[1])).toBeGreaterThan(1e6);
      const old = res.body.split('\n').find((l) => l.startsWith('grove_process_heap_live_space_bytes{space="old_space"} '));
      expect(Number(old?.split(' ')[1])).toBeGreaterThan(1e6);
    } finally {
      await app.close();
    }
  });
});
