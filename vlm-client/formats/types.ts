// The shape every policy output format implements: a prompt, optional tool definitions, a parser from model
// output to canonical actions, and a printer back (for SFT export and round-trip tests).
import type { Action, CoordinateSpace } from '../../protocol/action.ts';
import type { Observation, ResolvedAction, SomElement } from '../../protocol/observation.ts';
import type { BrowserCreateInput } from '../../protocol/sandbox.ts';
import type { ToolDef } from '../client.ts';

/** A tool call as the model emitted it; `arguments` is JSON text (or an already-parsed object). */
export interface OutputToolCall {
  id?: string;
  name?: string;
  arguments?: string | Record<string, unknown>;
  /** OpenAI wire shape is accepted too: { function: { name, arguments } }. */
  function?: { name?: string; arguments?: string | Record<string, unknown> };
  /** OpenAI Responses `computer_call` items carry an `action` object instead. */
  action?: Record<string, unknown>;
  type?: string;
}

/**
 * Model output as given to `parse`: plain text, or an assistant message with tool calls.
 * Callers that only have a string (the runner, the step endpoint, recordings) pass the message JSON-encoded:
 * `JSON.stringify({ content, tool_calls: [{ id, name, arguments }] })`; see `decodeOutput` in common.ts.
 */
export type ModelOutput = string | { content?: string | null; tool_calls?: OutputToolCall[] | null };

export type ParseResult =
  | { ok: true; actions: Action[]; thought?: string }
  | { ok: false; error: string; thought?: string };

export interface FormatOptions {
  /** Screenshot size as sent to the model (image_px formats put it in their prompt/tool). */
  width?: number;
  height?: number;
  /** rel1000 grid divisor (1000 default; 999 for models trained on 0..999). */
  rel_divisor?: 1000 | 999;
  /** Language for free-text thoughts (UI-TARS convention). */
  language?: string;
  /** Tools are passed through the API (`tools`), so the system prompt need not describe them. */
  native_tools?: boolean;
  /** Set-of-Mark elements of the observation the output answers (WebVoyager `Scroll [n]` needs their boxes). */
  som?: SomElement[];
  /** Format-specific print variant (UI-TARS: 'point' (default, UI-TARS-1.5) or 'box' (UI-TARS 1.0)). */
  variant?: string;
  /**
   * Where the last pointer action left the mouse (the environment knows it): a bare `left_click` after `mouse_move`
   * in an earlier turn (Anthropic's reference loop) clicks there.
   */
  pointer?: { x: number; y: number; space: 'css_px' | 'image_px' | 'rel1000' };
}

export interface PolicyFormat {
  readonly name: string;
  readonly description: string;
  /** Coordinate space of the coordinates this format emits; 'label' for Set-of-Mark formats. */
  readonly space: CoordinateSpace | 'label';
  /** Canonical action kinds this format can express (print) and produce (parse). */
  readonly actions: readonly Action['action'][];
  /** Environment settings the format's models were trained with (viewport, screenshot format...), as defaults. */
  readonly sandbox?: Partial<Pick<BrowserCreateInput, 'viewport' | 'screenshot_format' | 'coordinate_space' | 'resize'>>;
  systemPrompt(opts?: FormatOptions): string;
  /** The text next to each screenshot, when the format lays out its observation (and feedback) its own way. */
  observationText?(obs: Observation, opts?: { parseError?: string; lastActions?: ResolvedAction[] }): string;
  /** OpenAI tool definitions when the format is driven by function calling. */
  tools?(opts?: FormatOptions): ToolDef[];
  parse(output: ModelOutput, opts?: FormatOptions): ParseResult;
  /**
   * Renders actions as the model would have written them. Coordinates are taken as already being in the
   * format's space. Throws UnsupportedActionError for an action the format cannot express.
   */
  print(actions: Action[], opts?: FormatOptions & { thought?: string }): string;
}

export class UnsupportedActionError extends Error {
  constructor(format: string, action: string, hint?: string) {
    super(`The ${format} format cannot express the "${action}" action${hint ? `: ${hint}` : ''}.`);
    this.name = 'UnsupportedActionError';
  }
}
