// A row's pins checked against the package index before any build: a wheel folder and a PEP 503 simple index
// (file://) made here; wheels count for the row's Python by their tags, source distributions always.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exactPins, fileServes, missingPins } from '../../swe-env/pins.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-pins-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('pins in the package index, up front', () => {
  it('reads exact pins only; a wheel serves a Python by its tags, an sdist always', () => {
    expect(exactPins(['attrs==23.1.0', 'More_Itertools==10.1.0', 'pluggy>=0.12', 'six', 'requests[socks]==2.31.0', '-e .'])).toEqual([
      { name: 'attrs', version: '23.1.0' },
      { name: 'more-itertools', version: '10.1.0' },
      { name: 'requests', version: '2.31.0' },
    ]);
    const serves = (f: string, python = '3.9') => fileServes(f, 'tomli', '2.0.1', python);
    expect(serves('tomli-2.0.1-py3-none-any.whl')).toBe(true);
    expect(serves('../../files/tomli-2.0.1-py2.py3-none-any.whl#sha256=ab')).toBe(true);
    expect(serves('tomli-2.0.1-cp39-cp39-manylinux_2_17_x86_64.whl')).toBe(true);
    expect(serves('tomli-2.0.1-cp311-cp311-manylinux_2_17_x86_64.whl')).toBe(false);
    expect(serves('tomli-2.0.1-cp311-cp311-manylinux_2_17_x86_64.whl', '3.11')).toBe(true);
    expect(serves('tomli-2.0.1-cp38-abi3-manylinux2014_x86_64.whl')).toBe(true);
    expect(serves('tomli-2.0.1-cp310-abi3-manylinux2014_x86_64.whl')).toBe(false);
    expect(serves('tomli-2.0.1.tar.gz')).toBe(true);
    expect(serves('tomli-2.0.10.tar.gz')).toBe(false);
    expect(serves('tomli_w-2.0.1-py3-none-any.whl')).toBe(false);
  });

  it('a wheel folder and a simple index: the missing pins named with the sources read; none: nothing checked', async () => {
    const wheels = path.join(tmp, 'wheels');
    mkdirSync(wheels);
    for (const f of ['attrs-23.1.0-py3-none-any.whl', 'six-1.16.0.tar.gz', 'tomli-2.0.1-cp311-cp311-linux_x86_64.whl']) writeFileSync(path.join(wheels, f), '');
    expect(await missingPins(['attrs==23.1.0', 'six==1.16.0'], { kind: 'wheels', dir: wheels }, '3.9')).toEqual([]);
    expect(await missingPins(['attrs==23.1.0', 'pluggy==0.13.1', 'tomli==2.0.1'], { kind: 'wheels', dir: wheels }, '3.9')).toEqual([`pluggy==0.13.1, tomli==2.0.1 for Python 3.9: in none of ${wheels}`]);
    const simple = path.join(tmp, 'simple');
    mkdirSync(path.join(simple, 'pluggy'), { recursive: true });
    writeFileSync(path.join(simple, 'pluggy', 'index.html'), '<a href="../../files/pluggy-0.13.1-py2.py3-none-any.whl#sha256=00">pluggy</a>\n<a href="../../files/pluggy-1.6.0-py3-none-any.whl">x</a>');
    const url = `file://${simple}`;
    expect(await missingPins(['pluggy==0.13.1'], { kind: 'url', url }, '3.9')).toEqual([]);
    expect(await missingPins(['pluggy==0.12.0', 'attrs==23.1.0'], { kind: 'url', url }, '3.9')).toEqual([`pluggy==0.12.0, attrs==23.1.0 for Python 3.9: in none of ${url}`]);
    expect(await missingPins(['anything==1.0'], { kind: 'none' }, '3.9')).toEqual([]);
  });
});
