// Per-repository specs, as SWE-bench's harness keeps them (instances carry no test command): how to prepare a
// checkout and run its tests, and which parser reads the log. Extend the table for other repositories.
import type { LogParserName } from './log-parsers.ts';

export interface RepoSpec {
  /** argv of the test command, run in the repository root. */
  testCmd: string[];
  parser: LogParserName;
  /** Shell commands run once after checkout (installs, builds); none for the fixture. */
  setup: string[];
  testTimeoutS: number;
}

export const REPO_SPECS: Record<string, RepoSpec> = {
  'grove/textkit': { testCmd: ['python3', '-m', 'unittest', '-v'], parser: 'unittest', setup: [], testTimeoutS: 120 },
};

export function repoSpec(repo: string, extra: Record<string, RepoSpec> = {}): RepoSpec {
  const spec = extra[repo] ?? REPO_SPECS[repo];
  if (!spec) throw new Error(`no test spec for repository "${repo}" (known: ${Object.keys({ ...REPO_SPECS, ...extra }).join(', ')})`);
  return spec;
}
