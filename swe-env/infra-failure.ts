// Why an instance that did not resolve may have failed for reasons outside the patch, as SWE-bench 5.x reports it
// (report.json's `infra_failure` / `infra_failure_reason`; the run report's infra_failure_ids, ambiguous_failure_ids
// and failure_reasons). Advisory only: a flagged instance stays unresolved (or an error) and counts the same.
// The signatures are SWE-bench's (reason, tier, what the log shows), matched in order; the first that matches wins.

/** environment: the environment broke (a patch cannot cause it); ambiguous: the environment or the patch. */
export type FailureTier = 'environment' | 'ambiguous';

export interface FailureClass {
  reason: string;
  tier: FailureTier;
}

const SIGNATURES: readonly (FailureClass & { pattern: RegExp })[] = [
  { reason: 'browser_launch_failed', tier: 'environment', pattern: /Failed to launch|Failed to connect to the bus/m },
  { reason: 'display_unavailable', tier: 'environment', pattern: /cannot open display|Missing X server|unable to open X display/m },
  { reason: 'out_of_memory', tier: 'environment', pattern: /Cannot allocate memory|OutOfMemoryError|^Killed$/m },
  { reason: 'container_unavailable', tier: 'environment', pattern: /Error response from daemon|Cannot connect to the Docker daemon/m },
  { reason: 'network_unreachable', tier: 'environment', pattern: /Could not resolve host|Temporary failure in name resolution/m },
  { reason: 'missing_module', tier: 'ambiguous', pattern: /Cannot find module|MODULE_NOT_FOUND|ModuleNotFoundError/m },
  { reason: 'no_tests_collected', tier: 'ambiguous', pattern: /no tests ran|collected 0 items/m },
  { reason: 'tests_timed_out', tier: 'ambiguous', pattern: /Timeout error: \d+ seconds exceeded/m },
];

/** The first signature the logs show (joined by newlines, as their classifier reads them), or null. */
export function classifyFailure(...logs: (string | undefined)[]): FailureClass | null {
  const text = logs.filter((l): l is string => l !== undefined).join('\n');
  if (!text) return null;
  for (const s of SIGNATURES) if (s.pattern.test(text)) return { reason: s.reason, tier: s.tier };
  return null;
}

/** The line SWE-bench appends to test_output.txt when the tests ran past their time. */
export function timeoutNote(seconds: number): string {
  return `\n\nTimeout error: ${seconds} seconds exceeded.`;
}
