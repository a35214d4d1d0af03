// The judge-model flags, spelled the same in `grove run` and `grove judge` (pure: unit-tested):
//   --judge-url URL --judge-model NAME [--judge-api-key KEY] [--judge-temperature T|none]
//   [--judge-max-tokens N|none] [--judge-max-tokens-field max_tokens|max_completion_tokens] [--judge-prompts DIR]
// Unset request parameters send what the judge's original harness sends; "none" leaves the field out (reasoning
// models such as o4-mini, WebJudge's recommended judge, reject temperature and max_tokens).

export const JUDGE_MODEL_FLAGS = [
  'judge-url',
  'judge-model',
  'judge-api-key',
  'judge-temperature',
  'judge-max-tokens',
  'judge-max-tokens-field',
  'judge-prompts',
] as const;

export const JUDGE_FLAGS_USAGE = `--judge-url URL --judge-model NAME [--judge-api-key KEY (default: $GROVE_JUDGE_API_KEY, $OPENAI_API_KEY)]
    [--judge-temperature T|none] [--judge-max-tokens N|none] [--judge-max-tokens-field max_tokens|max_completion_tokens]
    [--judge-prompts DIR]`;

export const JUDGE_FLAGS_HELP = `Judge request parameters default to the original harness's (WebVoyager/DeepShop: temperature 0, max_tokens 1000,
seed 42; Online-Mind2Web: temperature 0, max_tokens 512); "none" leaves a field out (o4-mini rejects both:
--judge-temperature none --judge-max-tokens none). --judge-prompts DIR: <judge>.<slot>.txt files (e.g.
webvoyager.system.txt, webjudge.outcome_user.txt) replace Grove's own prompt texts, e.g. with the original
harness's; each verdict and judge record says which were used.`;

export interface JudgeModelFlags {
  baseURL?: string;
  model?: string;
  apiKey?: string;
  temperature?: number | null;
  maxTokens?: number | null;
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  promptsDir?: string;
}

/** Reads the judge flags from parsed option values; throws an Error naming the flag on a bad value. */
export function parseJudgeModelFlags(values: Record<string, unknown>): JudgeModelFlags {
  const s = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const numOrNone = (flag: string, int: boolean, min: number, max: number): number | null | undefined => {
    const v = s(flag);
    if (v === undefined) return undefined;
    if (v === 'none') return null;
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n < min || n > max || (int && !Number.isInteger(n))) {
      throw new Error(`--${flag} must be ${int ? 'an integer' : 'a number'} from ${min} to ${max}, or "none" to leave it out (got "${v}")`);
    }
    return n;
  };
  const field = s('judge-max-tokens-field');
  if (field !== undefined && field !== 'max_tokens' && field !== 'max_completion_tokens') {
    throw new Error(`--judge-max-tokens-field must be max_tokens or max_completion_tokens (got "${field}")`);
  }
  const url = s('judge-url');
  if (url !== undefined && !/^https?:\/\//.test(url)) throw new Error(`--judge-url must be an http(s) URL of an OpenAI-compatible API (got "${url}")`);
  return {
    baseURL: url,
    model: s('judge-model'),
    apiKey: s('judge-api-key'),
    temperature: numOrNone('judge-temperature', false, 0, 2),
    maxTokens: numOrNone('judge-max-tokens', true, 1, 1_000_000),
    maxTokensField: field as JudgeModelFlags['maxTokensField'],
    promptsDir: s('judge-prompts'),
  };
}

/** The JudgeModel settings of the flags (the key falls back to the environment's, read by the caller). */
export function judgeModelConfig(f: JudgeModelFlags, envKey: string | undefined) {
  return {
    baseURL: f.baseURL!,
    model: f.model!,
    apiKey: f.apiKey ?? envKey,
    ...(f.temperature !== undefined ? { temperature: f.temperature } : {}),
    ...(f.maxTokens !== undefined ? { maxTokens: f.maxTokens } : {}),
    ...(f.maxTokensField ? { maxTokensField: f.maxTokensField } : {}),
  };
}
