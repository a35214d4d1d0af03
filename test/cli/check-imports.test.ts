// The import-boundary check on a small fixture tree: violations come out as file:line with the rule.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkImports, importsOf } from '../../scripts/check-imports.mjs';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'grove-imports-'));
  made.push(root);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  return root;
}

describe('check-imports', () => {
  it('finds static, type, re-export and dynamic imports with line numbers, ignoring comments', () => {
    const src = [
      "import { a } from './a.ts';",
      "import type { B } from '../b.ts';",
      '// import { c } from "./commented.ts";',
      "export { d } from './d.ts';",
      "const e = await import('./e.ts');",
      "import './side-effect.ts';",
    ].join('\n');
    expect(importsOf(src)).toEqual([
      { spec: './a.ts', line: 1 },
      { spec: '../b.ts', line: 2 },
      { spec: './d.ts', line: 4 },
      { spec: './e.ts', line: 5 },
      { spec: './side-effect.ts', line: 6 },
    ]);
  });

  it('reports each crossing arrow and allows the declared ones', () => {
    const root = tree({
      'protocol/a.ts': "import { z } from 'zod';\nimport { x } from '../sandbox/registry.ts';\n",
      'sandbox/registry.ts': "import { GroveError } from '../protocol/errors.ts';\nimport { app } from '../server/app.ts';\n",
      'server/app.ts': "import { b } from '../browser-env/index.ts';\nimport { s } from '../sandbox/registry.ts';\n",
      'browser-env/index.ts': "import type { Sandbox } from '../sandbox/types.ts';\n",
      'client/index.ts': "import Fastify from 'fastify';\nimport type { A } from '../protocol/a.ts';\n",
      'judges/j.ts': "import { h } from '../test/support/openai-server.ts';\n",
      'vlm-client/policy.ts': "import type { Policy } from '../protocol/policy.ts';\nimport { r } from '../runner/episode.ts';\n",
    });
    const { files, violations } = checkImports(root);
    expect(files).toBe(7);
    expect(violations.map((v) => v.split(';')[0]).sort()).toEqual([
      'client/index.ts:1: client/ may not use the package "fastify"',
      'judges/j.ts:1: judges/ may not import test/ ("../test/support/openai-server.ts")',
      'protocol/a.ts:2: protocol/ may not import sandbox/ ("../sandbox/registry.ts")',
      'sandbox/registry.ts:2: sandbox/ may not import server/ ("../server/app.ts")',
      'vlm-client/policy.ts:2: vlm-client/ may not import runner/ ("../runner/episode.ts")',
    ]);
  });
});
