// The SWE environment: SWE-bench instances in shell sandboxes, graded as SWE-bench grades them. See README.md.
export { evaluateInstance, evaluatePredictions, prepare, readPredictions, runTests, type EvaluateOptions, type RunReport, type SandboxProvider } from './evaluate.ts';
export { buildFixture, type Fixture } from './fixture.ts';
export { grade } from './grading.ts';
export { LOG_PARSERS, parsePytest, parseUnittest } from './log-parsers.ts';
export { localProvider } from './provider.ts';
export { RepoBundles, TESTBED, checkoutRepo } from './repo.ts';
export { REPO_SPECS, repoSpec, type RepoSpec } from './specs.ts';
