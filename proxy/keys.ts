// Per-rollout keys: `gk-…` tokens mapped to rollout ids. Kept in memory and, with a records directory, on disk as
// SHA-256 digests (`<dir>/keys/<digest>` holds the rollout id; `<dir>/keys/rollout.<id>` marks a rollout that has a
// key), so a restarted proxy on the same directory still takes the keys it issued, and with keys off still refuses
// a keyed rollout to a path or header alone. The key itself is never written anywhere.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const KEY = /^gk-[A-Za-z0-9_-]{16,64}$/;

function digest(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export class RolloutKeys {
  private readonly byKey = new Map<string, string>();
  private readonly keyed = new Set<string>();
  /** Rollouts whose on-disk marker was looked up already (only this process issues keys for its directory). */
  private readonly checked = new Set<string>();
  private readonly writes = new Set<Promise<void>>();

  constructor(private readonly dir?: string) {}

  issue(rollout: string): string {
    const key = `gk-${randomBytes(18).toString('base64url')}`;
    this.add(key, rollout);
    if (this.dir) {
      const w = this.persist(key, rollout).catch(() => {
        // The key works in this process; only a restart would forget it.
      });
      this.writes.add(w);
      void w.finally(() => this.writes.delete(w));
    }
    return key;
  }

  add(key: string, rollout: string): void {
    this.byKey.set(key, rollout);
    this.keyed.add(rollout);
  }

  lookup(key: string): string | undefined {
    return this.byKey.get(key);
  }

  /** Whether a key was issued for this rollout (then only a key of it records into it). */
  has(rollout: string): boolean {
    return this.keyed.has(rollout);
  }

  /** Resolves when every key issued so far is on disk. */
  async flushed(): Promise<void> {
    await Promise.allSettled([...this.writes]);
  }

  /** Loads what an earlier process issued for these keys and this rollout (nothing to do when already known). */
  async recall(keys: string[], rollout?: string): Promise<void> {
    if (!this.dir) return;
    const dir = path.join(this.dir, 'keys');
    for (const key of keys) {
      if (this.byKey.has(key) || !KEY.test(key)) continue;
      const id = await readFile(path.join(dir, digest(key)), 'utf8').catch(() => '');
      if (ID.test(id)) this.add(key, id);
    }
    if (rollout === undefined || !ID.test(rollout) || this.keyed.has(rollout) || this.checked.has(rollout)) return;
    const marked = await stat(path.join(dir, `rollout.${rollout}`)).then(() => true, () => false);
    this.checked.add(rollout);
    if (marked) this.keyed.add(rollout);
  }

  private async persist(key: string, rollout: string): Promise<void> {
    const dir = path.join(this.dir!, 'keys');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(path.join(dir, digest(key)), rollout, { mode: 0o600 });
    await writeFile(path.join(dir, `rollout.${rollout}`), '', { mode: 0o600 });
  }
}
