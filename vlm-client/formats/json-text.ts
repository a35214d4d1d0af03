// JSON in model output: parsing with a message that tells truncated from malformed, finding a balanced JSON value or
// a tool-call object inside free text, and the items of a JSON-native output.
import { clip, fail } from './failure.ts';

type JsonObject = Record<string, unknown>;

/**
 * The items of a JSON-native output (Anthropic content blocks, OpenAI Responses items): the objects of an array, or
 * of the array under `list` in a wrapper object (`{ role, content: [...] }`, `{ output: [...] }`), or one object as
 * `one` reads it (the item itself, or a bare action wrapped into an item). undefined when nothing is recognised.
 */
export function jsonItems(json: unknown, list: string, one: (o: JsonObject) => JsonObject | undefined): JsonObject[] | undefined {
  const objects = (a: unknown[]) => a.filter((x): x is JsonObject => !!x && typeof x === 'object');
  if (Array.isArray(json)) return objects(json);
  if (!json || typeof json !== 'object') return undefined;
  const o = json as JsonObject;
  if (Array.isArray(o[list])) return objects(o[list]);
  const item = one(o);
  return item && [item];
}

/** Parses JSON text from a model, with an error that says what went wrong (truncated vs malformed). */
export function parseJsonText(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const msg = (e as Error).message;
    const truncated = /end of (JSON )?input|Unterminated|Unexpected end/i.test(msg) || unbalanced(text);
    fail(`${truncated ? 'Truncated' : 'Malformed'} JSON in ${what}: ${msg} (${JSON.stringify(clip(text, 120))})`);
  }
}

function unbalanced(text: string): boolean {
  let depth = 0;
  let inStr = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inStr) {
      if (c === '\\') i++;
      else if (c === '"') inStr = false;
    } else if (c === '"') inStr = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return depth > 0 || inStr;
}

/** Finds the first balanced JSON array or object starting at or after `from`; returns its text or undefined. */
function findJson(text: string, opener: '[' | '{', from = 0): { text: string; start: number; end: number } | undefined {
  const closer = opener === '[' ? ']' : '}';
  const start = text.indexOf(opener, from);
  if (start < 0) return undefined;
  let depth = 0;
  let inStr = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inStr) {
      if (c === '\\') i++;
      else if (c === '"') inStr = false;
      continue;
    }
    if (c === '"') inStr = true;
    else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') {
      depth--;
      if (depth === 0) {
        if (c !== closer) return undefined;
        return { text: text.slice(start, i + 1), start, end: i + 1 };
      }
    }
  }
  // Opened but never closed: the caller reports a truncation.
  return { text: text.slice(start), start, end: text.length };
}

/**
 * The first JSON tool call (`{"name": …}`) or list of them in free text. Every `[` and `{` is tried in order, so a
 * bracket in the thought ("the [Search] button", "[1] result") is skipped rather than read as the list. A candidate
 * that opens a call but is never closed is reported as truncated.
 */
export function findCallJson(text: string): { value: unknown; start: number } | undefined {
  const isCall = (v: unknown) => !!v && typeof v === 'object' && !Array.isArray(v) && typeof (v as { name?: unknown }).name === 'string';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== '[' && c !== '{') continue;
    const found = findJson(text, c, i);
    if (!found) continue;
    let v: unknown;
    try {
      v = JSON.parse(found.text);
    } catch {
      if (found.end === text.length && /^[[{]\s*(\{\s*)?"name"\s*:/.test(found.text)) parseJsonText(found.text, 'the tool call');
      continue;
    }
    if (isCall(v) || (Array.isArray(v) && v.length > 0 && v.every(isCall))) return { value: v, start: i };
  }
  return undefined;
}
