// The policy contract lives in protocol/policy.ts (below vlm-client and runner); re-exported for the runner's users.
export type { Policy, PolicyDecision, PolicyStepContext } from '../protocol/policy.ts';
