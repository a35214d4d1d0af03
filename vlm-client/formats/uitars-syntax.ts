// UI-TARS' action-call syntax, both ways: reading `name(k='v', k2="v2", k3=bare)` calls one after another (quoted
// values with Python escapes), and writing quoted values and numbers back.
import { fail } from './failure.ts';

/** `wait()`: a pause of this long, the documented UI-TARS meaning. */
export const WAIT_MS = 5000;

export interface Call {
  name: string;
  args: Record<string, string>;
}

/** Reads `name(k='v', k2="v2", k3=bare)` calls one after another. Quoted values use Python escapes. */
export function readCalls(src: string): Call[] {
  const calls: Call[] = [];
  let i = 0;
  const ws = () => {
    while (i < src.length && /\s/.test(src[i])) i++;
  };
  for (;;) {
    ws();
    if (i >= src.length) break;
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (!m) fail(`Expected an action call at ${JSON.stringify(src.slice(i, i + 40))}.`);
    const name = m[0];
    i += name.length;
    ws();
    if (src[i] !== '(') fail(`Expected "(" after ${name}.`);
    i++;
    const args: Record<string, string> = {};
    for (;;) {
      ws();
      if (i >= src.length) fail(`Truncated action: ${name}( is not closed.`);
      if (src[i] === ')') {
        i++;
        break;
      }
      const k = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
      if (!k) fail(`Expected an argument name in ${name}(…) at ${JSON.stringify(src.slice(i, i + 30))}.`);
      i += k[0].length;
      ws();
      if (src[i] !== '=') fail(`Expected "=" after argument ${k[0]} of ${name}.`);
      i++;
      ws();
      let value = '';
      const q = src[i];
      if (q === "'" || q === '"') {
        i++;
        let closed = false;
        while (i < src.length) {
          const c = src[i];
          if (c === '\\' && i + 1 < src.length) {
            const n = src[i + 1];
            value += n === 'n' ? '\n' : n === 't' ? '\t' : n === 'r' ? '\r' : n;
            i += 2;
            continue;
          }
          if (c === q) {
            closed = true;
            i++;
            break;
          }
          value += c;
          i++;
        }
        if (!closed) fail(`Truncated action: the ${k[0]} value of ${name} has no closing quote.`);
      } else {
        const b = /^[^,)]*/.exec(src.slice(i))![0];
        value = b.trim();
        i += b.length;
      }
      args[k[0]] = value;
      ws();
      if (src[i] === ',') i++;
    }
    calls.push({ name, args });
  }
  return calls;
}

export function q(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\t/g, '\\t').replace(/\r/g, '\\r')}'`;
}

export function fmt(n: number): string {
  return String(Math.round(n * 100) / 100);
}
