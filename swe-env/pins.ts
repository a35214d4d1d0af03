// Up front: each `name==version` pin of a row is in the package index the user named, for the row's Python, so a
// pin the index does not hold stops the run before any image is built (pip would say it minutes later, inside a
// build). Sources are read as pip reads them: a folder of wheels (find-links), a PEP 503 simple index by URL
// (http(s) or file://), or this machine's pip configuration (index-url, extra-index-url, find-links). A wheel counts
// when its Python tag fits the row's Python (py3, cpXY, abi3 from an older cpXY); a source distribution always.
// A source that cannot be read (a host that does not resolve) is named and holds nothing; behind a proxy (pip
// would use it, Node's fetch does not) remote indexes are not read and may hold anything.
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Progress } from '../sandbox/progress.ts';
import type { PackageIndex } from './env-image.ts';
import { registryEnv } from './registry.ts';

const run = promisify(execFile);
/** The whole check, every source and pin of a run. */
const PINS_BUDGET_MS = 30_000;

/** PEP 503's normalised project name. */
const norm = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

/** `name==version` pins of a row (others, ranges and URLs, are left to pip). */
export function exactPins(specs: string[]): Array<{ name: string; version: string }> {
  return specs.map((s) => /^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([A-Za-z0-9.+!-]+)$/.exec(s.trim())).filter((m) => m !== null).map((m) => ({ name: norm(m![1]), version: m![2] }));
}

/** Does a distribution file serve `name==version` on Python `python` (e.g. "3.9")? */
export function fileServes(file: string, name: string, version: string, python: string): boolean {
  const base = file.split('#')[0].split('/').pop() ?? '';
  const [major, minor] = python.split('.').map(Number);
  if (base.endsWith('.whl')) {
    const parts = base.slice(0, -4).split('-');
    if (parts.length < 5 || norm(parts[0]) !== name || parts[1] !== version) return false;
    const [pyTags, abi] = [parts[parts.length - 3], parts[parts.length - 2]];
    return pyTags.split('.').some((t) => {
      if (t === 'py3' || t === `py${major}${minor}` || t === `cp${major}${minor}`) return true;
      const cp = /^cp(\d)(\d+)$/.exec(t);
      return abi === 'abi3' && cp !== null && Number(cp[1]) === major && Number(cp[2]) <= minor;
    });
  }
  const sdist = /^(.+)-([^-]+)\.(tar\.gz|zip|tar\.bz2)$/.exec(base);
  return sdist !== null && norm(sdist[1]) === name && sdist[2] === version;
}

type Source = { kind: 'links'; where: string } | { kind: 'simple'; where: string };

/** Where pip looks, as this machine's pip configuration says (`pip3 config list`: files and PIP_* merged). */
async function hostSources(progress: Progress): Promise<Source[]> {
  const listed = await run('pip3', ['config', 'list'], { env: { PATH: '/usr/bin:/bin' }, signal: progress.signal }).then((r) => r.stdout, () => '');
  const values = (key: string) => [...listed.matchAll(new RegExp(`^[:\\w-]+\\.${key}='(.*)'$`, 'gm'))].flatMap((m) => m[1].split(/\s+/).filter(Boolean));
  const index = values('index-url');
  return [
    ...(index.length ? index : ['https://pypi.org/simple']).map((where) => ({ kind: 'simple' as const, where })),
    ...values('extra-index-url').map((where) => ({ kind: 'simple' as const, where })),
    ...values('find-links').map((where) => ({ kind: 'links' as const, where })),
  ];
}

/** The file names a source offers for `name` (null: the source could not be read; the reason in `why`). */
async function filesOf(src: Source, name: string, progress: Progress, why: Map<string, string>): Promise<string[] | null> {
  const local = src.where.startsWith('file://') ? src.where.slice('file://'.length) : src.where.startsWith('/') ? src.where : null;
  try {
    if (src.kind === 'links') {
      if (local === null) return null;
      return existsSync(local) && statSync(local).isDirectory() ? await readdir(local) : [];
    }
    const page = local !== null
      ? await readFile(path.join(local, name, 'index.html'), 'utf8').catch(() => '')
      : await fetch(`${src.where.replace(/\/$/, '')}/${name}/`, { signal: progress.signal }).then((r) => (r.ok ? r.text() : ''));
    return [...page.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
  } catch (err) {
    const cause = (err as Error & { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    why.set(src.where, cause);
    return null;
  }
}

/**
 * The pins no readable source of `index` holds for Python `python`, one line each (empty: all there). An index of
 * kind none installs nothing: nothing to check.
 */
export async function missingPins(pins: string[], index: PackageIndex, python: string, given?: Progress): Promise<string[]> {
  const wanted = exactPins(pins);
  if (!wanted.length || index.kind === 'none') return [];
  const progress = given ?? Progress.after(PINS_BUDGET_MS, 'the check of the pins in the package index');
  try {
    const sources: Source[] =
      index.kind === 'wheels' ? [{ kind: 'links', where: index.dir }]
      : index.kind === 'url' ? [{ kind: 'simple', where: index.url }]
      : await hostSources(progress);
    const why = new Map<string, string>();
    const proxied = Object.keys(registryEnv()).some((k) => /^https?_proxy$/i.test(k));
    const remote = (src: Source) => /^https?:/.test(src.where);
    if (proxied && sources.some(remote)) return [];
    const missing: string[] = [];
    for (const pin of wanted) {
      let found = false;
      for (const src of sources) {
        if (why.has(src.where)) continue;
        const files = await filesOf(src, pin.name, progress, why);
        if (files?.some((f) => fileServes(f, pin.name, pin.version, python))) {
          found = true;
          break;
        }
      }
      if (!found) missing.push(`${pin.name}==${pin.version}`);
    }
    if (!missing.length) return [];
    const read = sources.filter((s) => !why.has(s.where)).map((s) => s.where);
    const unread = [...why].map(([w, c]) => `${w} (${c})`);
    return [`${missing.join(', ')} for Python ${python}: in none of ${read.join(', ') || 'no source'}${unread.length ? `; not readable: ${unread.join(', ')}` : ''}`];
  } finally {
    if (!given) progress.done();
  }
}
