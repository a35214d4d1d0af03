// Reading task files: JSONL streamed line by line, JSON arrays parsed whole (the real ones are < 200 KB).
// Tolerates a UTF-8 BOM, CRLF line ends and a last line without a newline (WebVoyager_data.jsonl has none).
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';

export type TaskFileErrorCode = 'file_not_found' | 'not_a_file' | 'not_json' | 'wrong_shape';

/** The file itself could not be used (as opposed to single unusable rows, which are LoadIssues). */
export class TaskFileError extends Error {
  readonly code: TaskFileErrorCode;
  readonly file: string;
  constructor(code: TaskFileErrorCode, file: string, message: string, opts: { cause?: unknown } = {}) {
    super(`${file}: ${message}`, { cause: opts.cause });
    this.name = 'TaskFileError';
    this.code = code;
    this.file = file;
  }
}

/** One raw row: its value, or why it could not be parsed. `where` is "line N" or "index N". */
export type RawRow = { where: string; value: unknown } | { where: string; error: string };

const BOM = '\uFEFF';

async function checkFile(file: string): Promise<void> {
  let st;
  try {
    st = await stat(file);
  } catch (err) {
    throw new TaskFileError('file_not_found', file, 'no such file (check the --file path)', { cause: err });
  }
  if (!st.isFile()) throw new TaskFileError('not_a_file', file, 'is not a regular file');
}

/** First non-whitespace character of the file (after a BOM), or '' for an empty file. */
async function firstChar(file: string): Promise<string> {
  const stream = createReadStream(file, { encoding: 'utf8', start: 0, end: 4095 });
  let head = '';
  for await (const chunk of stream) head += chunk;
  return head.replace(BOM, '').trimStart().charAt(0);
}

/**
 * Rows of a task file, auto-detecting a JSON array (first char `[`) or JSONL. JSONL rows that do not
 * parse are yielded as errors (the rest of the file still loads). A JSON array that does not parse
 * makes the whole file unusable (`not_json`). A JSON value that is neither array nor object rows is
 * `wrong_shape`.
 */
export async function* readRows(file: string): AsyncGenerator<RawRow> {
  await checkFile(file);
  const c = await firstChar(file);
  if (c === '') return; // empty file: zero rows, not an error
  if (c === '[') {
    const text = (await readFile(file, 'utf8')).replace(BOM, '');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new TaskFileError('not_json', file, `not valid JSON (${(err as Error).message})`, { cause: err });
    }
    if (!Array.isArray(value)) throw new TaskFileError('wrong_shape', file, 'expected a JSON array of task objects');
    for (let i = 0; i < value.length; i++) yield { where: `index ${i}`, value: value[i] };
    return;
  }
  if (c !== '{') {
    throw new TaskFileError('not_json', file, 'neither a JSON array nor JSON lines (first character is not "[" or "{")');
  }
  const rl = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let n = 0;
  let parsedAny = false;
  // Errors before the first good row are held back: if the first three non-empty lines all fail, the
  // file is pretty-printed JSON or not JSON at all, and that is one file error rather than many row errors.
  const pending: RawRow[] = [];
  for await (let line of rl) {
    n++;
    if (n === 1) line = line.replace(BOM, '');
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      const row = { where: `line ${n}`, error: `invalid JSON (${(err as Error).message})` };
      if (parsedAny) {
        yield row;
        continue;
      }
      pending.push(row);
      if (pending.length >= 3) {
        rl.close();
        // Pretty-printed JSON that is not an array (e.g. a reference-answer object) has the wrong shape.
        let whole = true;
        try {
          JSON.parse((await readFile(file, 'utf8')).replace(BOM, ''));
        } catch {
          whole = false;
        }
        if (whole) throw new TaskFileError('wrong_shape', file, 'a single JSON object: expected a JSON array of tasks or JSON lines');
        throw new TaskFileError('not_json', file, 'not JSON lines: the first lines do not parse as JSON');
      }
      continue;
    }
    if (!parsedAny) {
      parsedAny = true;
      yield* pending;
      pending.length = 0;
    }
    yield { where: `line ${n}`, value };
  }
  yield* pending;
}

/** Read a whole small JSON file (reference answers), BOM-tolerant. */
export async function readJsonFile(file: string): Promise<unknown> {
  await checkFile(file);
  const text = (await readFile(file, 'utf8')).replace(BOM, '');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new TaskFileError('not_json', file, `not valid JSON (${(err as Error).message})`, { cause: err });
  }
}
