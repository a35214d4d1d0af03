// The canonical action: one zod discriminated union on `action`.
// Every policy format (vlm-client/formats) parses to and prints from this type; the browser
// environment executes it; recordings store it. Types come only from z.infer.
import { z } from 'zod';

/**
 * Coordinate spaces.
 * - `rel1000`: a 0..divisor grid over the viewport (Qwen3-VL / Orchard-GUI). The divisor is 1000 by
 *   default; a sandbox may select 999 (`rel_divisor`), and an action may override it.
 * - `image_px`: pixels of the screenshot as returned to the policy, after any resize.
 * - `css_px`: CSS pixels of the viewport.
 */
export const CoordinateSpace = z.enum(['rel1000', 'image_px', 'css_px']);
export type CoordinateSpace = z.infer<typeof CoordinateSpace>;

/**
 * Every numeric field is bounded to what makes sense (issue 8): a scroll of 3.4e38 px used to jam every later
 * input on the page. Coordinates outside the viewport are refused later (`invalid_coordinates`); the schema only
 * keeps numbers in a range any viewport, image or grid could use.
 */
const MAX_COORD = 100_000;
/** Largest scroll in CSS px per action (dx, dy, or a direction's amount in px). */
export const MAX_SCROLL_PX = 50_000;
/** Largest scroll in wheel notches (100 CSS px each) per action. */
export const MAX_SCROLL_NOTCHES = 500;
/** Largest scroll in viewports (unit "viewport") per action. */
const MAX_SCROLL_VIEWPORTS = 20;
/** Largest tab index and SoM label accepted. */
const MAX_TAB_INDEX = 999;
const MAX_LABEL = 99_999;

const coord = z.number().finite().min(-MAX_COORD).max(MAX_COORD);

/** Fields shared by every action that carries a point. `space` defaults to the sandbox's default space. */
const pointFields = {
  x: coord.describe('horizontal coordinate in `space`'),
  y: coord.describe('vertical coordinate in `space`'),
  space: CoordinateSpace.optional().describe('coordinate space; defaults to the sandbox default'),
  rel_divisor: z.union([z.literal(1000), z.literal(999)]).optional().describe('grid divisor for rel1000'),
};

const Modifier = z.enum(['Alt', 'Control', 'Meta', 'Shift']);

const ClickAction = z.object({
  action: z.literal('click'),
  ...pointFields,
  button: z.enum(['left', 'middle', 'right']).optional(),
  modifiers: z.array(Modifier).max(4).optional(),
});
const DoubleClickAction = z.object({ action: z.literal('double_click'), ...pointFields });
const TripleClickAction = z.object({ action: z.literal('triple_click'), ...pointFields });
const RightClickAction = z.object({ action: z.literal('right_click'), ...pointFields });
const HoverAction = z.object({ action: z.literal('hover'), ...pointFields });
const DragAction = z.object({
  action: z.literal('drag'),
  ...pointFields,
  to_x: coord,
  to_y: coord,
  /** Optional intermediate points (same space) for a drawn path. */
  path: z.array(z.object({ x: coord, y: coord })).max(64).optional(),
});

const TypeAction = z.object({
  action: z.literal('type'),
  text: z.string().max(20_000),
  /** Optional point to click first (focus). */
  x: coord.optional(),
  y: coord.optional(),
  space: CoordinateSpace.optional(),
  rel_divisor: z.union([z.literal(1000), z.literal(999)]).optional(),
  /** Select-all and delete the focused field's content before typing. */
  clear: z.boolean().optional(),
  /** Press Enter after typing. */
  submit: z.boolean().optional(),
});

/**
 * Key press or combination, Playwright-style names joined with '+': "Enter", "Control+a",
 * "Shift+Tab". Common aliases (ctrl, cmd, esc, return, pgdn…) are normalised by the executor.
 * `keys` may hold several combos pressed in sequence.
 */
const KeyAction = z.object({
  action: z.literal('key'),
  keys: z.union([z.string().min(1).max(100), z.array(z.string().min(1).max(100)).min(1).max(16)]),
});

const ScrollAction = z.object({
  action: z.literal('scroll'),
  x: coord.optional(),
  y: coord.optional(),
  space: CoordinateSpace.optional(),
  rel_divisor: z.union([z.literal(1000), z.literal(999)]).optional(),
  /** Pixel deltas (CSS px). Either dx/dy or direction+amount. */
  dx: z.number().finite().min(-MAX_SCROLL_PX).max(MAX_SCROLL_PX).optional().describe(`CSS px, |dx| <= ${MAX_SCROLL_PX}`),
  dy: z.number().finite().min(-MAX_SCROLL_PX).max(MAX_SCROLL_PX).optional().describe(`CSS px, |dy| <= ${MAX_SCROLL_PX}`),
  direction: z.enum(['up', 'down', 'left', 'right']).optional(),
  /**
   * Amount for `direction`, in wheel notches (1 notch = 100 CSS px) unless `unit` says pixels, or `viewport`: a
   * fraction of the viewport's height (up/down) or width (left/right), as Orchard-GUI's scroll amount.
   */
  amount: z
    .number()
    .positive()
    .max(MAX_SCROLL_PX)
    .optional()
    .describe(
      `notches (<= ${MAX_SCROLL_NOTCHES}, 100 CSS px each), or with unit "px" CSS px (<= ${MAX_SCROLL_PX}), or with unit "viewport" viewports (<= ${MAX_SCROLL_VIEWPORTS})`,
    ),
  unit: z.enum(['notches', 'px', 'viewport']).optional(),
}).refine((a) => a.amount === undefined || a.unit === 'px' || a.amount <= (a.unit === 'viewport' ? MAX_SCROLL_VIEWPORTS : MAX_SCROLL_NOTCHES), {
  message: `amount must be <= ${MAX_SCROLL_NOTCHES} notches, ${MAX_SCROLL_PX} px or ${MAX_SCROLL_VIEWPORTS} viewports`,
  path: ['amount'],
});

const GotoAction = z.object({ action: z.literal('goto'), url: z.string().min(1).max(8192) });
const BackAction = z.object({ action: z.literal('back') });
const ForwardAction = z.object({ action: z.literal('forward') });
const ReloadAction = z.object({ action: z.literal('reload') });

const NewTabAction = z.object({ action: z.literal('new_tab'), url: z.string().max(8192).optional() });
const SwitchTabAction = z.object({ action: z.literal('switch_tab'), index: z.number().int().min(0).max(MAX_TAB_INDEX) });
const CloseTabAction = z.object({ action: z.literal('close_tab'), index: z.number().int().min(0).max(MAX_TAB_INDEX).optional() });

const WaitAction = z.object({
  action: z.literal('wait'),
  /** Milliseconds to wait (default 1000); the step's deadline counts it in full. */
  ms: z.number().int().min(0).max(60_000).optional().describe('milliseconds, at most 60000 (default 1000)'),
});

/** Set-of-Mark label actions: labels come from the last observation's `som` list. */
const ClickLabelAction = z.object({ action: z.literal('click_label'), label: z.number().int().min(0).max(MAX_LABEL) });
const TypeLabelAction = z.object({
  action: z.literal('type_label'),
  label: z.number().int().min(0).max(MAX_LABEL),
  text: z.string().max(20_000),
  clear: z.boolean().optional(),
  submit: z.boolean().optional(),
});

/** Terminal actions end the episode; the environment records them and does nothing to the page. */
const AnswerAction = z.object({ action: z.literal('answer'), text: z.string().max(100_000) });
const TerminateAction = z.object({
  action: z.literal('terminate'),
  status: z.enum(['success', 'failure']).optional(),
  reason: z.string().max(10_000).optional(),
});

export const Action = z.discriminatedUnion('action', [
  ClickAction,
  DoubleClickAction,
  TripleClickAction,
  RightClickAction,
  HoverAction,
  DragAction,
  TypeAction,
  KeyAction,
  ScrollAction,
  GotoAction,
  BackAction,
  ForwardAction,
  ReloadAction,
  NewTabAction,
  SwitchTabAction,
  CloseTabAction,
  WaitAction,
  ClickLabelAction,
  TypeLabelAction,
  AnswerAction,
  TerminateAction,
]);
export type Action = z.infer<typeof Action>;
export type ActionName = Action['action'];

/** A step body carries one action or a short list (executed in order; stops at the first error). */
export const ActionList = z.array(Action).min(1).max(16);
