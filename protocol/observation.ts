// Observation and step-result shapes returned by the browser environment and the REST API.
import { z } from 'zod';
import { Action, CoordinateSpace } from './action.ts';

export const ImageFormat = z.enum(['jpeg', 'png', 'webp']);
export type ImageFormat = z.infer<typeof ImageFormat>;

export const Tab = z.object({
  index: z.number().int(),
  url: z.string(),
  title: z.string(),
  active: z.boolean(),
});
export type Tab = z.infer<typeof Tab>;

/** Things that happened during a step, in order. */
export const EnvEvent = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('dialog'),
    dialog_type: z.enum(['alert', 'confirm', 'prompt', 'beforeunload']),
    message: z.string(),
    /** How the watchdog answered it. */
    handled: z.enum(['accepted', 'dismissed']),
    prompt_value: z.string().optional(),
  }),
  z.object({
    type: z.literal('download'),
    filename: z.string(),
    size: z.number().int().nonnegative(),
    id: z.string(),
    url: z.string(),
    failure: z.string().optional(),
  }),
  z.object({ type: z.literal('popup'), url: z.string(), tab_index: z.number().int(), switched: z.boolean() }),
  z.object({ type: z.literal('navigation'), url: z.string() }),
  z.object({ type: z.literal('tab_closed'), tab_index: z.number().int() }),
  z.object({ type: z.literal('crash'), message: z.string(), recovered: z.boolean() }),
  z.object({ type: z.literal('network_blocked'), url: z.string(), reason: z.string() }),
  /** A per-sandbox limit was hit (tabs, downloads, bytes per download); what exceeded it was refused. */
  z.object({ type: z.literal('limit'), limit: z.enum(['tabs', 'downloads', 'download_bytes']), max: z.number().int(), message: z.string() }),
]);
export type EnvEvent = z.infer<typeof EnvEvent>;

export const ActionError = z.object({ code: z.string(), message: z.string() });
export type ActionError = z.infer<typeof ActionError>;

export const Timings = z.object({
  action: z.number(),
  settle: z.number(),
  capture: z.number(),
  encode: z.number(),
  total: z.number(),
  /** With the frame cache on (a sandbox's `frame_cache`, else the server's `frameCache`, off by default): true when nothing had painted since the last capture
   * and that capture was answered again (`capture` is then the damage check's ms, `encode` 0); false: captured. */
  cached: z.boolean().optional(),
});
export type Timings = z.infer<typeof Timings>;

/** What the settle after the step's actions waited for, and why it stopped. */
export const SettleReport = z.object({
  ms: z.number(),
  /** caused_done: the work the action caused finished; navigation: ... including a navigation it started,
   * whose document loaded; cap: settle_max_ms (or the step's deadline) was reached first. */
  stopped: z.enum(['caused_done', 'navigation', 'cap']),
  /** Caused work seen, by kind (timer, fetch, xhr, message, animation frame, websocket reply, navigation,
   * document load, request; `frame …` for child frames), with counts. */
  waited_for: z.record(z.string(), z.number().int()),
});
export type SettleReport = z.infer<typeof SettleReport>;

export const SomElement = z.object({
  label: z.number().int(),
  tag: z.string(),
  role: z.string().optional(),
  text: z.string(),
  /** An <input>'s type attribute (checkbox, submit, ...). */
  type: z.string().optional(),
  /** A checkbox or radio input: whether it is checked. */
  checked: z.boolean().optional(),
  /** Bounding box in CSS px of the viewport. */
  x: z.number(),
  y: z.number(),
  width: z.number(),
  height: z.number(),
});
export type SomElement = z.infer<typeof SomElement>;

/** The page's scroll position and extent (CSS px), read with the SoM list. */
export const ScrollState = z.object({ x: z.number(), y: z.number(), max_x: z.number(), max_y: z.number() });
export type ScrollState = z.infer<typeof ScrollState>;

/** The element that has the keyboard focus, read with the SoM list (null: none, the page body). */
export const FocusedElement = z.object({
  tag: z.string(),
  type: z.string().optional(),
  role: z.string().optional(),
  /** aria-label, else placeholder, else its text (first 100 characters). */
  label: z.string(),
  /** A text field's value (an editable element's text); absent for password fields and non-fields. */
  value: z.string().optional(),
});
export type FocusedElement = z.infer<typeof FocusedElement>;

export const Screenshot = z.object({
  mime: z.string(),
  /** Pixel size of the returned image (after any resize). */
  width: z.number().int(),
  height: z.number().int(),
  /** Base64 image bytes (omitted when the client asked for `screenshot: "none"` or "url"). */
  base64: z.string().optional(),
  /** image_px per CSS px horizontally (image width / viewport width); 1 when not resized. Same as `scale_x`. */
  scale: z.number(),
  /** image_px per CSS px horizontally (image width / viewport width). */
  scale_x: z.number(),
  /** image_px per CSS px vertically (image height / viewport height): differs from `scale_x` under smart resize. */
  scale_y: z.number(),
});
export type Screenshot = z.infer<typeof Screenshot>;

export const Observation = z.object({
  step: z.number().int(),
  url: z.string(),
  title: z.string(),
  tabs: z.array(Tab),
  viewport: z.object({ width: z.number().int(), height: z.number().int() }),
  screenshot: Screenshot.optional(),
  last_action_error: ActionError.nullable(),
  events: z.array(EnvEvent),
  som: z.array(SomElement).optional(),
  /** With `som`: the page's scroll position and the focused element, read in the same pass. */
  scroll: ScrollState.optional(),
  focused: FocusedElement.nullable().optional(),
  accessibility: z.string().optional(),
  timings: Timings,
  /** Present when the step settled after its actions. */
  settle: SettleReport.optional(),
});
export type Observation = z.infer<typeof Observation>;

/** What each executed action resolved to (raw and CSS coordinates), for recording and debugging. */
export const ResolvedAction = z.object({
  action: Action,
  space: CoordinateSpace.optional(),
  raw: z.object({ x: z.number(), y: z.number() }).optional(),
  css: z.object({ x: z.number(), y: z.number() }).optional(),
  to_css: z.object({ x: z.number(), y: z.number() }).optional(),
  /**
   * scroll: how far the content moved, in CSS px (the window and the scrollable elements under the pointer that took
   * the wheel, summed); 0 and 0 at a boundary. Absent when it could not be measured (the page navigated away).
   */
  scrolled: z.object({ dx: z.number(), dy: z.number() }).optional(),
  /** type / type_label: the focused field's value after typing (its value, or an editable element's text). */
  field_value: z.string().optional(),
  /**
   * type / type_label: characters that went in as one text insertion (`input` events, no key events) instead of key
   * by key: a text over 300 characters, or the rest of one whose keys would not have fitted in the action's time
   * at the pace they were going (a loaded machine). Absent when every character was typed as a key.
   */
  inserted_chars: z.number().int().optional(),
  error: ActionError.nullable(),
  ms: z.number(),
});
export type ResolvedAction = z.infer<typeof ResolvedAction>;

export const StepResult = z.object({
  observation: Observation,
  actions: z.array(ResolvedAction),
  /** Set when the step contained a terminal action (answer/terminate). */
  done: z.boolean(),
  answer: z.string().optional(),
  /** The episode ended by the agent (answer/terminate) or by too many parse failures in a row. */
  terminated: z.boolean().optional(),
  /** The episode hit its step limit (`episode.max_steps`) without terminating. */
  truncated: z.boolean().optional(),
  /** Present when the step was given raw model text: the parse outcome. */
  parse: z
    .object({ ok: z.boolean(), format: z.string(), error: z.string().optional() })
    .optional(),
});
export type StepResult = z.infer<typeof StepResult>;
