// Per-repository test specifications. SWE-bench instances carry no test command: its harness looks them up by
// repository (and version) in a table, with the log parser that reads the output. This is Grove's table; add a
// repository here to grade its instances.
import type { LogParserName } from './log-parsers.ts';

export interface RepoSpec {
  /** Runs the instance's test directives (appended, shell-quoted) from the repository root. */
  test_cmd: string;
  log_parser: LogParserName;
  /** How test files of the test patch become test directives: file paths (pytest) or dotted modules (unittest). */
  directives: 'paths' | 'modules';
  /** Commands run once after checkout (installing the package, building). */
  install: string[];
  /** Seconds the test run may take. */
  test_timeout_s: number;
}

const SPECS: Record<string, Record<string, RepoSpec>> = {
  // The fixture repository of this project (swe-env/fixtures/textkit): standard-library unittest.
  'grove/textkit': {
    '0.1': { test_cmd: 'python3 -m unittest -v', log_parser: 'unittest', directives: 'modules', install: [], test_timeout_s: 120 },
  },
  // Common pytest projects, with the flags SWE-bench's harness uses for a readable per-test summary.
  'pytest-dev/pytest': { '*': { test_cmd: 'pytest -rA', log_parser: 'pytest', directives: 'paths', install: ['pip install -e .'], test_timeout_s: 1800 } },
  'psf/requests': { '*': { test_cmd: 'pytest -rA', log_parser: 'pytest', directives: 'paths', install: ['pip install -e .'], test_timeout_s: 1800 } },
  'django/django': {
    '*': { test_cmd: './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1', log_parser: 'unittest', directives: 'modules', install: ['pip install -e .'], test_timeout_s: 1800 },
  },
};

/** The spec of a repository at a version ('*' matches any version); undefined when the table has none. */
export function specFor(repo: string, version: string | number | undefined): RepoSpec | undefined {
  const byVersion = SPECS[repo];
  if (!byVersion) return undefined;
  return byVersion[String(version ?? '')] ?? byVersion['*'];
}

/** The files a unified diff touches (its `+++ b/…` side; deletions by their old path). */
export function diffFiles(patch: string): string[] {
  const files = new Set<string>();
  for (const m of patch.matchAll(/^diff --git a\/(\S+) b\/(\S+)$/gm)) files.add(m[2]);
  return [...files];
}

/** Test directives of a test patch: its files, as paths or as dotted modules (Django style drops `tests/`). */
export function testDirectives(testPatch: string, spec: RepoSpec, repo?: string): string[] {
  const files = diffFiles(testPatch).filter((f) => f.endsWith('.py'));
  if (spec.directives === 'paths') return files;
  return files.map((f) => {
    let mod = f.replace(/\.py$/, '').replaceAll('/', '.');
    if (repo === 'django/django' && mod.startsWith('tests.')) mod = mod.slice('tests.'.length);
    return mod;
  });
}
