// Exporters: Online-Mind2Web and WebVoyager result layouts, SFT samples, animated WebP/GIF.
export { exportOnlineMind2Web, OM2W_V1_FIELDS, OM2W_V2_FIELDS, OM2W_V2_STEP_FIELDS } from './online-mind2web.ts';
export { exportWebVoyager } from './webvoyager.ts';
export { exportSft, keepEpisode } from './sft.ts';
export type { SftSample } from './sft.ts';
export { exportAnimation } from './animation.ts';
