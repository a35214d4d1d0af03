// Registry of policy output formats. `parseModelOutput` is the never-throwing entry point used by the runner and
// the step endpoint (raw model text + format name).
import type { Action } from '../../protocol/action.ts';
import type { FormatOptions, ModelOutput, PolicyFormat } from './types.ts';

export type { FormatOptions, ModelOutput, OutputToolCall, ParseResult, PolicyFormat } from './types.ts';
export { UnsupportedActionError } from './types.ts';

export const FORMATS: Record<string, PolicyFormat> = {};

export const FORMAT_NAMES: string[] = Object.keys(FORMATS);

export function getFormat(name: string): PolicyFormat | undefined {
  return Object.hasOwn(FORMATS, name) ? FORMATS[name] : undefined;
}

export function parseModelOutput(
  format: string,
  output: ModelOutput,
  opts?: FormatOptions,
): { ok: true; actions: Action[]; thought?: string } | { ok: false; error: string; thought?: string } {
  const f = getFormat(format);
  if (!f) return { ok: false, error: `Unknown policy output format "${format}"; known formats: ${FORMAT_NAMES.join(', ')}.` };
  try {
    return f.parse(output, opts);
  } catch (e) {
    // A parser bug must not crash the episode loop: report it as a parse failure.
    return { ok: false, error: `The ${format} parser failed: ${e instanceof Error ? e.message : String(e)}` };
  }
}
