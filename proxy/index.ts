// The recording proxy: record a harness's own model calls and turn them into training samples.
export { startProxy, type RecordingProxy } from './server.ts';
export { exportSamples, samplesOf } from './samples.ts';
export { readCalls, listRollouts, writeReward } from './store.ts';
