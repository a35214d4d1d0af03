// Exporters: Online-Mind2Web and WebVoyager result layouts, SFT samples, animated WebP/GIF.
export { exportOnlineMind2Web, stepActionText, OM2W_V1_FIELDS, OM2W_V2_FIELDS, OM2W_V2_STEP_FIELDS } from './online-mind2web.ts';
export type { Om2wOptions, Om2wV2Step } from './online-mind2web.ts';
export { exportWebVoyager } from './webvoyager.ts';
export type { WebVoyagerMessage } from './webvoyager.ts';
export { exportSft, episodeSamples, assistantMessage, actionInSpace, keepEpisode } from './sft.ts';
export type { SftOptions, SftFilter, SftSample, SftStats, ChatMessage } from './sft.ts';
export { exportAnimation, actionOverlaySvg } from './animation.ts';
export type { AnimationOptions } from './animation.ts';
export { ExportError, finalAnswer } from './common.ts';
