// The shared argument handling of the commands (cli/args.ts): every message starts `grove <name>: `, --help says
// `usage: `, the option tables, comma lists and integer options.
import { describe, expect, it } from 'vitest';
import { failure, intOption, list, listFilters, options, parseCommandArgs, showUsage, usageError, valueError } from '../../cli/args.ts';

function capture() {
  const io = { outText: '', errText: '', out: (s: string) => void (io.outText += s), err: (s: string) => void (io.errText += s) };
  return io;
}

describe('parseCommandArgs', () => {
  const config = (args: string[]) => ({ args, options: options(['out', 'ids'], ['json']) });

  it('returns the typed values, with -h/--help and booleans from the table', () => {
    const io = capture();
    const r = parseCommandArgs(config(['--out', 'o', '--json']), { usage: 'grove x', io, name: 'x' });
    expect(typeof r === 'number' ? r : r.values).toEqual({ out: 'o', json: true });
    expect(io.outText + io.errText).toBe('');
  });

  it('answers --help with the usage (exit 0) and a bad option with the message and usage (exit 2)', () => {
    const a = capture();
    expect(parseCommandArgs(config(['-h']), { usage: 'grove x', io: a, name: 'x' })).toBe(0);
    expect(a.outText).toBe('usage: grove x\n');
    const b = capture();
    expect(parseCommandArgs(config(['--nope']), { usage: 'grove x', io: b, name: 'x' })).toBe(2);
    expect(b.errText).toBe("grove x: Unknown option '--nope'\nusage: grove x\n");
    const c = capture();
    expect(parseCommandArgs(config(['stray']), { usage: 'grove x', io: c, name: 'x' })).toBe(2);
    expect(c.errText).toMatch(/^grove x: Unexpected argument 'stray'/);
  });

  it('messages start "grove <name>: " and --help says "usage: "; failure() is exit 1 with the same prefix', () => {
    const u = (io: ReturnType<typeof capture>) => ({ usage: 'grove demo [--out DIR]', io, name: 'demo' });
    const a = capture();
    expect(parseCommandArgs(config(['--help', '--out', 'x']), u(a))).toBe(0);
    expect(a.outText).toBe('usage: grove demo [--out DIR]\n');
    const b = capture();
    expect(parseCommandArgs(config(['--nope']), u(b))).toBe(2);
    expect(b.errText).toBe("grove demo: Unknown option '--nope'\nusage: grove demo [--out DIR]\n");
    const c = capture();
    expect(valueError(u(c), '--concurrency must be an integer >= 1')).toBe(2);
    expect(c.errText).toBe('grove demo: --concurrency must be an integer >= 1\n');
    const d = capture();
    expect(usageError(u(d), 'bad')).toBe(2);
    expect(showUsage(u(d))).toBe(0);
    expect([d.errText, d.outText]).toEqual(['grove demo: bad\nusage: grove demo [--out DIR]\n', 'usage: grove demo [--out DIR]\n']);
    const e = capture();
    expect(failure(u(e), 'runs/x: no such directory')).toBe(1);
    expect(e.errText).toBe('grove demo: runs/x: no such directory\n');
  });
});

describe('option values', () => {
  it('list: trimmed comma items, empty ones dropped; undefined when absent or empty', () => {
    expect(list(' a, b,,c ,')).toEqual(['a', 'b', 'c']);
    expect(list('')).toBeUndefined();
    expect(list(undefined)).toBeUndefined();
    expect(listFilters({ site: 'shop', ids: 'x,y' })).toEqual({ site: ['shop'], level: undefined, ids: ['x', 'y'] });
  });

  it('intOption: undefined when absent, an Error naming the flag below the minimum or not an integer', () => {
    expect(intOption(undefined, 'k', 1)).toBeUndefined();
    expect(intOption('3', 'k', 1)).toBe(3);
    expect(intOption('0', 'retries', 0)).toBe(0);
    for (const v of ['0', '1.5', 'x']) expect(intOption(v, 'k', 1)).toEqual(new Error('--k must be an integer >= 1'));
  });
});
