// A parse failure: what a parser throws to abort with a readable message (parseWith in output.ts turns it into
// `{ ok: false, error }`), and how a wrong value is described in that message.

/** Thrown inside a parser to abort with a structured failure; `parseWith` turns it into `{ ok: false }`. */
export class ParseFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ParseFailure';
  }
}

export function fail(message: string): never {
  throw new ParseFailure(message);
}

export function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/** A short description of a value for an error message ("the string \"abc\"", "an array [1]", "nothing"). */
export function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return `an array ${clip(JSON.stringify(v), 40)}`;
  if (typeof v === 'string') return `the string ${JSON.stringify(clip(v, 40))}`;
  return `${typeof v} ${clip(JSON.stringify(v), 40)}`;
}
