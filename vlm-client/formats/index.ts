// Registry of policy output formats. `parseModelOutput` is the never-throwing entry point used by the runner and
// the step endpoint (raw model text + format name).
import type { Action } from '../../protocol/action.ts';
import { anthropic } from './anthropic.ts';
import { openaiCua } from './openai_cua.ts';
import { orchard } from './orchard.ts';
import { qwen3vl } from './qwen3vl.ts';
import type { FormatOptions, ModelOutput, PolicyFormat } from './types.ts';
import { uitars, uitars15 } from './uitars.ts';
import { webvoyager } from './webvoyager.ts';

export type { FormatOptions, ModelOutput, PolicyFormat } from './types.ts';
export { UnsupportedActionError } from './types.ts';

export { somText } from './webvoyager.ts';

export const FORMATS: Record<string, PolicyFormat> = {
  [qwen3vl.name]: qwen3vl,
  [orchard.name]: orchard,
  [uitars.name]: uitars,
  [uitars15.name]: uitars15,
  [webvoyager.name]: webvoyager,
  [openaiCua.name]: openaiCua,
  [anthropic.name]: anthropic,
};

export const FORMAT_NAMES: string[] = Object.keys(FORMATS);

/** Other spellings people use for the same formats. */
const ALIASES: Record<string, string> = {
  qwen: 'qwen3vl', qwen3: 'qwen3vl', qwen25vl: 'qwen3vl', qwenvl: 'qwen3vl', computeruse: 'qwen3vl',
  orchardgui: 'orchard',
  uitars10: 'uitars', uitars1: 'uitars',
  webvoyagersom: 'webvoyager', som: 'webvoyager',
  openaicua: 'openai_cua', cua: 'openai_cua', openai: 'openai_cua', computercall: 'openai_cua',
  anthropiccomputer: 'anthropic', claude: 'anthropic',
};

/** The format for a name; case, '-', '_', '.' and spaces are ignored ("Qwen3-VL", "ui_tars", "openai-cua"). */
export function getFormat(name: string): PolicyFormat | undefined {
  if (typeof name !== 'string') return undefined;
  if (Object.hasOwn(FORMATS, name)) return FORMATS[name];
  const key = name.toLowerCase().replace(/[-_.\s]/g, '');
  for (const f of Object.values(FORMATS)) if (f.name.replace(/_/g, '') === key) return f;
  return Object.hasOwn(ALIASES, key) ? FORMATS[ALIASES[key]] : undefined;
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
