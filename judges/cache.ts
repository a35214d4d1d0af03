// Judge result cache, keyed by a SHA-256 of the judge inputs (model, prompt text, image hashes, parameters).
// Only usable results are stored: a judge_error is retried next time, never replayed.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface JudgeCache {
  get(key: string): Promise<unknown | undefined>;
  set(key: string, value: unknown): Promise<void>;
}

export function memoryCache(): JudgeCache & { size(): number } {
  const m = new Map<string, unknown>();
  return {
    get: async (k) => (m.has(k) ? structuredClone(m.get(k)) : undefined),
    set: async (k, v) => void m.set(k, structuredClone(v)),
    size: () => m.size,
  };
}

/** One JSON file per key under `<dir>/<2 hex>/<hash>.json`, written atomically (rename). */
export function fileCache(dir: string): JudgeCache {
  const path = (k: string) => join(dir, k.slice(0, 2), `${k}.json`);
  return {
    async get(k) {
      try {
        return JSON.parse(await readFile(path(k), 'utf8'));
      } catch {
        return undefined;
      }
    },
    async set(k, v) {
      const p = path(k);
      await mkdir(join(dir, k.slice(0, 2)), { recursive: true });
      const tmp = `${p}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      await writeFile(tmp, JSON.stringify(v));
      await rename(tmp, p);
    },
  };
}

/** SHA-256 of a value's canonical JSON (object keys sorted, Buffers as their own hash). */
export function hashOf(value: unknown): string {
  return createHash('sha256').update(canonical(value)).digest('hex');
}

export function sha256(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function canonical(v: unknown): string {
  if (Buffer.isBuffer(v)) return JSON.stringify(`sha256:${sha256(v)}`);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
