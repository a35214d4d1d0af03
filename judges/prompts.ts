// Judge prompt sets. By default every judge sends Grove's own prompt texts (the originals' texts are not copied
// here). `loadPromptDir(dir)` reads the texts a user supplies instead — e.g. the original harnesses' prompts — so
// such a user gets the original requests exactly; which set a verdict used is recorded with it (`PromptSource`).
//
// Files in the folder: `<judge>.<slot>.txt` (e.g. `webvoyager.system.txt`, `webjudge.outcome_user.txt`); a slot
// without a file keeps Grove's text. Templates name their fields `{field}` or `<field>` (the Online-Mind2Web
// scripts fill `{task}` with str.format, WebVoyager's auto_eval.py replaces `<task>`, `<answer>`, `<num>`), so an
// original text can be pasted as it is.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256 } from './cache.ts';

export interface PromptSource {
  /** "grove" (built in) or "user" (loaded from `dir`). */
  source: 'grove' | 'user';
  dir?: string;
  /** The slots whose text came from the folder, with the SHA-256 of each text. */
  files?: Record<string, string>;
}

/** Slot texts per judge: `texts['webvoyager.system']`. */
export interface PromptSet {
  source: PromptSource;
  texts: Record<string, string>;
}

export const GROVE_PROMPTS: PromptSet = { source: { source: 'grove' }, texts: {} };

/** Every slot a judge reads, with the fields its template may use (for `loadPromptDir`'s check and the docs). */
const PROMPT_SLOTS: Record<string, string[]> = {
  'webvoyager.system': [],
  'webvoyager.user': ['task', 'answer', 'num'],
  'webvoyager.closing': [],
  'deepshop.system': [],
  'deepshop.user': ['task', 'answer', 'num'],
  'deepshop.closing': [],
  'webjudge.key_points_system': [],
  'webjudge.key_points_user': ['task'],
  'webjudge.image_system': [],
  'webjudge.image_user': ['task', 'key_points'],
  'webjudge.outcome_system': [],
  'webjudge.outcome_user': ['task', 'key_points', 'last_actions', 'thoughts'],
  'webjudge.outcome_user_no_images': ['task', 'key_points', 'last_actions'],
  'autonomous.system': [],
  'autonomous.user': ['task', 'last_actions'],
};

export class PromptDirError extends Error {
  readonly code = 'bad_prompt_dir';
}

/** Reads `<judge>.<slot>.txt` files from `dir`; unknown file names are an error (a typo would silently do nothing). */
export async function loadPromptDir(dir: string): Promise<PromptSet> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    throw new PromptDirError(`--judge-prompts ${dir}: cannot read the folder (${(err as Error).message})`);
  }
  const texts: Record<string, string> = {};
  const files: Record<string, string> = {};
  for (const name of names.filter((n) => n.endsWith('.txt')).sort()) {
    const slot = name.slice(0, -'.txt'.length);
    if (!(slot in PROMPT_SLOTS)) {
      throw new PromptDirError(`--judge-prompts ${dir}: unknown prompt file ${name} (known: ${Object.keys(PROMPT_SLOTS).map((s) => `${s}.txt`).join(', ')})`);
    }
    const text = await readFile(join(dir, name), 'utf8');
    texts[slot] = text;
    files[slot] = sha256(text);
  }
  if (!Object.keys(texts).length) throw new PromptDirError(`--judge-prompts ${dir}: no <judge>.<slot>.txt files found`);
  return { source: { source: 'user', dir, files }, texts };
}

/** The slot's text: the user's when the set has it, else Grove's. */
export function promptText(set: PromptSet, slot: string, grove: string): string {
  return set.texts[slot] ?? grove;
}

/** Fills `{field}` and `<field>` for the given fields only (other braces stay as they are). */
export function fill(template: string, fields: Record<string, string | number>): string {
  let out = template;
  for (const [k, v] of Object.entries(fields)) out = out.split(`{${k}}`).join(String(v)).split(`<${k}>`).join(String(v));
  return out;
}

/** What a verdict records about its prompts: the source, and for user texts which slots and their hashes. */
export function promptRecord(set: PromptSet, judge: string): PromptSource {
  if (set.source.source === 'grove') return { source: 'grove' };
  const files = Object.fromEntries(Object.entries(set.source.files ?? {}).filter(([slot]) => slot.startsWith(`${judge}.`)));
  return Object.keys(files).length ? { source: 'user', dir: set.source.dir, files } : { source: 'grove' };
}
