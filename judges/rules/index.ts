// Rule judges (state-based, no model): the offline sites' judge.
export {
  OFFLINE_JUDGE_NAME,
  answerMatches,
  answerTokens,
  checkGroundTruth,
  fetchOfflineState,
  fieldMatches,
  offlineRuleJudge,
  runCheck,
  type CheckResult,
  type OfflineJudgeInput,
  type OfflineRuleJudge,
} from './offline.ts';
