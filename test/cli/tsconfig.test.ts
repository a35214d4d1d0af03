// tsconfig.json type-checks exactly the source folders: no include entry for a folder that does not exist (or
// holds no TypeScript), and no top-level folder of TypeScript left out of `npm run check`.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SKIP = new Set(['node_modules', 'python', 'docs', 'runs', 'coverage', 'dist']);

function hasTs(dir: string): boolean {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name) || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory() ? hasTs(p) : /\.(ts|mts|cts)$/.test(name) && !name.endsWith('.d.ts')) return true;
  }
  return false;
}

describe('tsconfig.json include', () => {
  const include = (JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { include: string[] }).include;

  it('names only folders that exist and hold TypeScript', () => {
    const phantom = include.filter((d) => !existsSync(join(ROOT, d)) || !statSync(join(ROOT, d)).isDirectory() || !hasTs(join(ROOT, d)));
    expect(phantom).toEqual([]);
  });

  it('covers every top-level folder of TypeScript', () => {
    const folders = readdirSync(ROOT).filter((n) => !SKIP.has(n) && !n.startsWith('.') && statSync(join(ROOT, n)).isDirectory() && hasTs(join(ROOT, n)));
    expect(folders.filter((f) => !include.includes(f))).toEqual([]);
  });
});
