// Rule judges (state-based, no model): the offline sites' judge.
export { answerMatches, fieldMatches, offlineRuleJudge } from './offline.ts';
