// A browser sandbox's tools over MCP, computer-use style: pointer, keyboard, scroll and navigation tools whose
// coordinates are pixels of the last screenshot (image_px, unless `space` says otherwise), each answering with the
// new screenshot as MCP image content beside the page's URL, title, tabs and the action's error. Every call is one
// step of the sandbox through the stepper the host gives (the server's step path: hooks, recording, admission), and
// each action is validated by Grove's canonical action schema (protocol/action.ts), limits included.
import { z } from 'zod';
import { Action, CoordinateSpace } from '../protocol/action.ts';
import type { StepResult } from '../protocol/observation.ts';
import type { Logger } from '../sandbox/log.ts';
import type { BrowserSandbox } from '../browser-env/types.ts';
import { defineTool, issuesText, listing, runTool, type AnyToolDef } from './define.ts';
import { errorResult, type McpTool, type ToolResult, type ToolSource } from './types.ts';

/** Runs canonical actions as one step and answers with a screenshot (the server gives its step path). */
export type BrowserStepper = (actions: Action[]) => Promise<StepResult>;

interface Ctx {
  step: BrowserStepper;
}

const num = z.number().finite();
const point = {
  x: num.describe('x in pixels of the last screenshot'),
  y: num.describe('y in pixels of the last screenshot'),
  space: CoordinateSpace.optional().describe('coordinate space of x/y (default image_px: the screenshot\'s pixels)'),
};

/** The result of a step: the screenshot as image content, then what a model needs to read about the page. */
export function stepContent(r: StepResult): ToolResult {
  const o = r.observation;
  const error = r.actions.find((a) => a.error)?.error ?? o.last_action_error;
  const facts = { url: o.url, title: o.title, tabs: o.tabs.map((t) => ({ index: t.index, url: t.url, title: t.title, active: t.active })), error: error ?? null, events: o.events, ...(r.done ? { done: true, answer: r.answer } : {}) };
  const content: ToolResult['content'] = [];
  if (o.screenshot?.base64) content.push({ type: 'image', data: o.screenshot.base64, mimeType: o.screenshot.mime });
  content.push({ type: 'text', text: JSON.stringify(facts) });
  return { content, ...(error ? { isError: true } : {}), structuredContent: { ...facts, screenshot: o.screenshot ? { width: o.screenshot.width, height: o.screenshot.height, mime: o.screenshot.mime } : null } };
}

/** Validates a canonical action (Grove's limits) and runs it; a bad one is an invalid_arguments result. */
async function act(ctx: Ctx, tool: string, action: Record<string, unknown>): Promise<ToolResult> {
  const withSpace = 'x' in action || 'y' in action ? { space: 'image_px', ...action } : action;
  const parsed = Action.safeParse(Object.fromEntries(Object.entries(withSpace).filter(([, v]) => v !== undefined)));
  if (!parsed.success) return errorResult('invalid_arguments', `Invalid arguments for ${tool}: ${issuesText(parsed.error)}`);
  return stepContent(await ctx.step([parsed.data]));
}

const BROWSER_TOOLS: readonly AnyToolDef<Ctx>[] = [
  defineTool({
    name: 'screenshot',
    description: 'Look at the page without acting: the current screenshot, URL, title and tabs.',
    input: z.strictObject({}),
    annotations: { readOnlyHint: true },
    handler: async (ctx: Ctx) => stepContent(await ctx.step([])),
  }),
  defineTool({
    name: 'click',
    description: 'Click at a point of the screenshot. clicks: 2 for a double click, 3 for a triple click; button right for a context menu.',
    input: z.strictObject({ ...point, button: z.enum(['left', 'middle', 'right']).default('left'), clicks: z.union([z.literal(1), z.literal(2), z.literal(3)]).default(1), modifiers: z.array(z.enum(['Alt', 'Control', 'Meta', 'Shift'])).max(4).optional() }),
    handler: (ctx: Ctx, a) => {
      const at = { x: a.x, y: a.y, space: a.space };
      if (a.clicks === 2) return act(ctx, 'click', { action: 'double_click', ...at });
      if (a.clicks === 3) return act(ctx, 'click', { action: 'triple_click', ...at });
      return act(ctx, 'click', { action: 'click', ...at, button: a.button, modifiers: a.modifiers });
    },
  }),
  defineTool({
    name: 'hover',
    description: 'Move the mouse to a point of the screenshot.',
    input: z.strictObject(point),
    handler: (ctx: Ctx, a) => act(ctx, 'hover', { action: 'hover', ...a }),
  }),
  defineTool({
    name: 'drag',
    description: 'Press at (x, y), move to (to_x, to_y) and release.',
    input: z.strictObject({ ...point, to_x: num, to_y: num }),
    handler: (ctx: Ctx, a) => act(ctx, 'drag', { action: 'drag', ...a }),
  }),
  defineTool({
    name: 'type',
    description: 'Type text into the focused field, or click (x, y) first. clear empties the field first; submit presses Enter after.',
    input: z.strictObject({ text: z.string(), x: num.optional(), y: num.optional(), space: CoordinateSpace.optional(), clear: z.boolean().optional(), submit: z.boolean().optional() }),
    handler: (ctx: Ctx, a) => act(ctx, 'type', { action: 'type', ...a }),
  }),
  defineTool({
    name: 'key',
    description: 'Press a key or combination ("Enter", "Control+a", "Shift+Tab"), or several in sequence.',
    input: z.strictObject({ keys: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]) }),
    handler: (ctx: Ctx, a) => act(ctx, 'key', { action: 'key', keys: a.keys }),
  }),
  defineTool({
    name: 'scroll',
    description: 'Scroll at a point (default: the middle of the page): direction and amount in wheel notches (100 CSS px each), or dx/dy in CSS px.',
    input: z.strictObject({ x: num.optional(), y: num.optional(), space: CoordinateSpace.optional(), direction: z.enum(['up', 'down', 'left', 'right']).optional(), amount: z.number().positive().optional(), dx: num.optional(), dy: num.optional() }),
    handler: (ctx: Ctx, a) => act(ctx, 'scroll', { action: 'scroll', ...a, ...(a.direction && a.amount === undefined ? { amount: 3 } : {}) }),
  }),
  defineTool({
    name: 'goto',
    description: 'Open a URL in the current tab (the sandbox\'s network rules decide what may be opened).',
    input: z.strictObject({ url: z.string().min(1) }),
    handler: (ctx: Ctx, a) => act(ctx, 'goto', { action: 'goto', url: a.url }),
  }),
  defineTool({
    name: 'navigate',
    description: 'Go back, forward, or reload the page.',
    input: z.strictObject({ to: z.enum(['back', 'forward', 'reload']) }),
    handler: (ctx: Ctx, a) => act(ctx, 'navigate', { action: a.to }),
  }),
  defineTool({
    name: 'tab',
    description: 'Open a new tab (optionally at url), switch to the tab at index, or close one (default: the active tab).',
    input: z.strictObject({ op: z.enum(['new', 'switch', 'close']), url: z.string().optional(), index: z.number().int().min(0).optional() }),
    handler: (ctx: Ctx, a) => act(ctx, 'tab', a.op === 'new' ? { action: 'new_tab', url: a.url } : a.op === 'switch' ? { action: 'switch_tab', index: a.index } : { action: 'close_tab', index: a.index }),
  }),
  defineTool({
    name: 'wait',
    description: 'Wait (default 1000 ms, at most 60000) and look again.',
    input: z.strictObject({ ms: z.number().int().min(0).max(60_000).default(1000) }),
    annotations: { readOnlyHint: true },
    handler: (ctx: Ctx, a) => act(ctx, 'wait', { action: 'wait', ms: a.ms }),
  }),
];

export const BROWSER_TOOL_NAMES = BROWSER_TOOLS.map((t) => t.name);

export class BrowserTools implements ToolSource {
  readonly kind = 'grove-browser';
  private readonly ctx: Ctx;
  private readonly log?: Logger;
  constructor(sandbox: BrowserSandbox, opts: { step?: BrowserStepper; log?: Logger } = {}) {
    // Without the server's step path (a library user): the sandbox's own step, or a look for no action.
    const own: BrowserStepper = (actions) => (actions.length ? sandbox.step(actions, { screenshot: 'base64' }) : sandbox.observe({ screenshot: 'base64' }).then((observation) => ({ observation, actions: [], done: false })));
    this.ctx = { step: opts.step ?? own };
    this.log = opts.log;
  }

  tools(): McpTool[] {
    return BROWSER_TOOLS.map(listing);
  }

  call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult> {
    return runTool(BROWSER_TOOLS, this.ctx, name, args, signal, this.log);
  }
}
