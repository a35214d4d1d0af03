// Per-repository, per-version specifications, as SWE-bench's harness keeps them: instances carry no test command,
// Python version or pins; the harness looks them up by (repository, version). The table is data: the rows shipped
// in specs/swe-bench.json (SWE-bench Lite/Verified repositories, facts from SWE-bench's constants) and
// specs/grove.json (the fixture repository), and any file a user adds (`--specs FILE`), in SWE-bench's own spec
// shape. A later file's row replaces an earlier one (per repository and version).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { LOG_PARSER_NAMES, type LogParserName } from './log-parsers.ts';

/** One (repository, version) row in SWE-bench's shape (keys it names; others are kept but unused). */
const SweSpecRow = z.looseObject({
  python: z.string().regex(/^\d+\.\d+$/, 'python is a version like "3.9"').optional(),
  packages: z.string().optional(),
  pre_install: z.array(z.string()).optional(),
  install: z.string().optional(),
  pip_packages: z.array(z.string()).optional(),
  eval_commands: z.array(z.string()).optional(),
  test_cmd: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  /** Grove: this row's log parser (default: the repository's). */
  log_parser: z.enum(LOG_PARSER_NAMES).optional(),
  /** Grove: seconds the test run may take (default 1800). */
  test_timeout_s: z.number().int().positive().optional(),
});
export type SweSpecRow = z.infer<typeof SweSpecRow>;

const RepoEntry = z.object({
  log_parser: z.enum(LOG_PARSER_NAMES),
  /** Where a `packages: "requirements.txt"` row's file is in the repository, first found wins (SWE-bench's MAP_REPO_TO_REQS_PATHS). */
  requirements_paths: z.array(z.string().regex(/^[\w./-]+$/).refine((p) => !p.split('/').includes('..'))).optional(),
  /** Same for `packages: "environment.yml"` (MAP_REPO_TO_ENV_YML_PATHS). */
  environment_yml_paths: z.array(z.string().regex(/^[\w./-]+$/).refine((p) => !p.split('/').includes('..'))).optional(),
  versions: z.record(z.string(), SweSpecRow),
});
const SpecFile = z.object({ source: z.string().optional(), repos: z.record(z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'repository names are owner/name'), RepoEntry) });
type SpecTable = Record<string, z.infer<typeof RepoEntry>>;

/** What evaluation and setup use of a row. */
export interface RepoSpec {
  /** The row as written (python, pre_install, pip_packages, ...: what the environment is built from). */
  row: SweSpecRow;
  /** Commands before the tests (eval_commands, then the last test command gets the directives). */
  test_cmd: string;
  log_parser: LogParserName;
  /** How test files of the test patch become test directives: file paths, or dotted modules (Django). */
  directives: 'paths' | 'modules';
  /** Commands run in the checkout before the tests: the row's pre_install commands that edit the repository's files
   * (editsRepository), then its `install`. */
  install: string[];
  /** The repository's requirements file paths (rows whose packages is "requirements.txt"). */
  requirements_paths: string[];
  test_timeout_s: number;
}

const SHIPPED = ['swe-bench.json', 'grove.json'].map((f) => path.join(path.dirname(fileURLToPath(import.meta.url)), 'specs', f));

/** Reads and checks a spec file; the message names the file and the first problem. */
export function parseSpecFile(text: string, name: string): SpecTable {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${name}: not JSON (${(err as Error).message})`);
  }
  const r = SpecFile.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new Error(`${name}: ${i.path.join('.') || '(top level)'}: ${i.message} (expected {"repos": {"owner/name": {"log_parser": ..., "versions": {"1.0": {"test_cmd": ..., ...}}}}})`);
  }
  return r.data.repos;
}

/** The table: shipped rows, then each user file's rows over them. */
export function loadSpecs(userFiles: string[] = []): SpecTable {
  const table: SpecTable = {};
  for (const file of [...SHIPPED, ...userFiles]) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(`cannot read spec file ${file}: ${(err as Error).message}`);
    }
    for (const [repo, entry] of Object.entries(parseSpecFile(text, file))) {
      const had = table[repo];
      table[repo] = { ...had, ...entry, versions: { ...(had?.versions ?? {}), ...entry.versions } };
    }
  }
  return table;
}

let shipped: SpecTable | null = null;

/** The spec of a repository at a version; undefined when the table has no such row. */
export function specFor(repo: string, version: string | number | undefined, table?: SpecTable): RepoSpec | undefined {
  const t = table ?? (shipped ??= loadSpecs());
  const entry = t[repo];
  const row = entry?.versions[String(version ?? '')];
  if (!entry || !row) return undefined;
  const cmds = Array.isArray(row.test_cmd) ? row.test_cmd : [row.test_cmd];
  return {
    row,
    test_cmd: [...(row.eval_commands ?? []), ...cmds].join('\n'),
    log_parser: row.log_parser ?? entry.log_parser,
    directives: repo === 'django/django' ? 'modules' : 'paths',
    install: [...(row.pre_install ?? []).filter(editsRepository), ...(row.install ? [row.install] : [])],
    requirements_paths: entry.requirements_paths ?? [],
    test_timeout_s: row.test_timeout_s ?? 1800,
  };
}

/**
 * A pre_install command that edits the repository's own files (`sed -i 's/>=>=/>=/' setup.cfg`, astropy's
 * pyproject.toml, sphinx's tox.ini): SWE-bench runs pre_install in the checkout (/testbed) before the install, so
 * Grove runs these there too. The others (apt-get, locales) change the system: they build the environment image.
 */
export function editsRepository(cmd: string): boolean {
  const words = cmd.trim().split(/\s+/);
  return words[0] === 'sed' && words.includes('-i') && words.length > 2 && !words[words.length - 1].startsWith('/');
}

/** The files a unified diff touches (its `b/` side), in order, as SWE-bench reads them. */
export function diffFiles(patch: string): string[] {
  const files: string[] = [];
  for (const m of patch.matchAll(/^diff --git a\/.* b\/(.*)$/gm)) if (!files.includes(m[1])) files.push(m[1]);
  return files;
}

/** Files SWE-bench never passes to the test runner. */
const NON_TEST_EXTS = ['.json', '.png', 'csv', '.txt', '.md', '.jpg', '.jpeg', '.pkl', '.yml', '.yaml', '.toml'];

/** Test directives of a test patch, as SWE-bench derives them: its files minus data files; Django: dotted modules without `tests/`. */
export function testDirectives(testPatch: string, spec: Pick<RepoSpec, 'directives'>): string[] {
  const files = diffFiles(testPatch).filter((f) => !NON_TEST_EXTS.some((ext) => f.endsWith(ext)));
  if (spec.directives === 'paths') return files;
  return files.map((f) => {
    let d = f.endsWith('.py') ? f.slice(0, -3) : f;
    if (d.startsWith('tests/')) d = d.slice('tests/'.length);
    return d.replaceAll('/', '.');
  });
}
