// The recording proxy: record a harness's own model calls and turn them into training samples.
export { startProxy, writeReward, type RecordingProxy } from './server.ts';
export { exportSamples, samplesOf, turnsOf, extendsTurn, readReward, responseOf, type Sample, type Turn } from './samples.ts';
export { readCalls, listRollouts, RecordStore } from './store.ts';
export { rewriteRequest } from './rewrite.ts';
export { parseSse, assembleStream } from './sse.ts';
export { resolveCall, RolloutKeys, ROLLOUT_HEADER } from './rollout.ts';
export type { CallRecord, ProxyOptions, RewriteOptions } from './types.ts';
