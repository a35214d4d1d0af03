// Which harness wrote a directory, judged from its files, and the episode directories under a root.
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { EPISODE_FILE } from '../recorder.ts';
import type { Layout } from './view.ts';

/** The layout a directory with these entries holds, if any. */
function layoutOf(names: Set<string>): Layout | undefined {
  if (names.has(EPISODE_FILE)) return 'grove';
  if (names.has('interact_messages.json')) return 'webvoyager';
  if (names.has('result.json') && names.has('trajectory')) return 'online-mind2web';
  return undefined;
}

/** What a directory holds, judged from its files. */
export async function detectLayout(dir: string): Promise<Layout | undefined> {
  const names = await readdir(dir).catch(() => undefined);
  return names && layoutOf(new Set(names));
}

export interface FoundEpisode {
  id: string;
  dir: string;
  layout: Layout;
}

/** Finds episode directories under `root` (the root itself may be one), breadth-first, up to `maxDepth`. */
export async function findEpisodes(root: string, maxDepth = 4): Promise<FoundEpisode[]> {
  const out: FoundEpisode[] = [];
  let level = [root];
  for (let depth = 0; depth <= maxDepth && level.length; depth++) {
    const next: string[] = [];
    await Promise.all(
      level.map(async (dir) => {
        let entries;
        try {
          entries = await readdir(dir, { withFileTypes: true });
        } catch {
          return;
        }
        const names = new Set(entries.map((e) => e.name));
        const layout = layoutOf(names);
        if (layout) {
          out.push({ id: relative(root, dir).split(sep).join('/') || '.', dir, layout });
          return;
        }
        for (const e of entries) {
          if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules') next.push(join(dir, e.name));
        }
      }),
    );
    level = next;
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
