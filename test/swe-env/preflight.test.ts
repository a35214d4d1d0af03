// A SWE run says what it lacks before any sandbox opens: a source per repository with every base commit, a spec
// row per (repository, version), a Python the base images give, a row Grove can build. Real git; no sandboxes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sweCommand } from '../../cli/commands/swe.ts';
import { preflight } from '../../swe-env/preflight.ts';
import { loadSpecs, parseSpecFile } from '../../swe-env/specs.ts';
import type { SweInstance } from '../../swe-env/types.ts';

let tmp: string;
let repo: string;
let head: string;
const ENV = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x.invalid' };

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'grove-swe-preflight-'));
  repo = path.join(tmp, 'r');
  execFileSync('git', ['init', '-q', repo], { env: ENV });
  writeFileSync(path.join(repo, 'a'), 'a\n');
  execFileSync('git', ['-C', repo, 'add', '-A'], { env: ENV });
  execFileSync('git', ['-C', repo, 'commit', '-q', '-m', 'a'], { env: ENV });
  head = execFileSync('git', ['-C', repo, 'rev-parse', 'HEAD']).toString().trim();
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const inst = (o: Partial<SweInstance>): SweInstance => ({ instance_id: 'x-1', repo: 'pytest-dev/pytest', base_commit: head, problem_statement: '', FAIL_TO_PASS: [], PASS_TO_PASS: [], version: '5.4', ...o });

describe('preflight', () => {
  it('names each missing thing, and nothing when all is there', async () => {
    const specs = loadSpecs();
    expect(await preflight({ instances: [inst({})], sources: { 'pytest-dev/pytest': repo }, specs, index: null })).toEqual([]);
    const problems = await preflight({
      instances: [
        inst({ instance_id: 'a', base_commit: 'f'.repeat(40) }),
        inst({ instance_id: 'b', repo: 'psf/requests', version: '2.0' }),
        inst({ instance_id: 'c', version: '99.9' }),
        inst({ instance_id: 'd', repo: 'django/django', version: '3.0' }),
      ],
      sources: { 'pytest-dev/pytest': repo, 'django/django': path.join(tmp, 'nope') },
      specs,
      index: { kind: 'none' },
    });
    expect(problems.join('\n')).toMatch(/pytest-dev\/pytest: 1 base commit\(s\) not in .* \(f{40}\)/);
    expect(problems.join('\n')).toMatch(/no local source for psf\/requests: add --repo psf\/requests=PATH/);
    expect(problems.join('\n')).toMatch(/c: no spec row for pytest-dev\/pytest version 99\.9/);
    expect(problems.join('\n')).toMatch(/--repo django\/django=.*nope: no such directory/);
    // Django 3.0's row wants Python 3.6: no Debian base image has it.
    expect(problems.join('\n')).toMatch(/django\/django 3\.0 needs Python 3\.6/);
  });

  it('reads a user spec file in SWE-bench\'s shape and refuses a malformed one with its place', () => {
    const f = path.join(tmp, 'specs.json');
    writeFileSync(f, JSON.stringify({ repos: { 'me/tool': { log_parser: 'pytest', versions: { '1.0': { python: '3.11', test_cmd: 'pytest -rA', pip_packages: ['x==1'] } } } } }));
    expect(loadSpecs([f])['me/tool'].versions['1.0'].pip_packages).toEqual(['x==1']);
    expect(loadSpecs([f])['pytest-dev/pytest'].versions['5.4'].python).toBe('3.9');
    expect(() => parseSpecFile('{"repos":{"me/tool":{"log_parser":"nose","versions":{}}}}', 'bad.json')).toThrow(/bad\.json: repos\.me\/tool\.log_parser/);
    expect(() => parseSpecFile('{"repos":{"me/tool":{"log_parser":"pytest","versions":{"1":{"python":"three"}}}}}', 'bad.json')).toThrow(/bad\.json: repos\.me\/tool\.versions\.1\./);
  });

  it('grove swe run fails fast (exit 2) with the list, before any server or sandbox', async () => {
    const file = path.join(tmp, 'instances.json');
    writeFileSync(file, JSON.stringify([{ instance_id: 'pytest-dev__pytest-1', repo: 'pytest-dev/pytest', base_commit: 'f'.repeat(40), problem_statement: 'p', version: '5.4', FAIL_TO_PASS: '["t"]', PASS_TO_PASS: '[]', patch: 'diff' }]));
    let err = '';
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((err += String(chunk)), true));
    try {
      const code = await sweCommand.run(['run', '--instances', file, '--gold', '--images', 'host', '--repo', `pytest-dev/pytest=${repo}`, '--run_id', 'x']);
      expect(code).toBe(2);
      expect(err).toMatch(/cannot run:[\s\S]*base commit\(s\) not in/);
      // SWE-bench's spelling of the gold patches: the same run, the same list.
      err = '';
      expect(await sweCommand.run(['run', '--instances', file, '--predictions_path', 'gold', '--images', 'host', '--repo', `pytest-dev/pytest=${repo}`, '--run_id', 'y'])).toBe(2);
      expect(err).toMatch(/cannot run:[\s\S]*base commit\(s\) not in/);
      const bad = await sweCommand.run(['run', '--instances', file, '--gold', '--run-id', '../x']);
      expect(bad).toBe(2);
      expect(err).toMatch(/--run-id must be letters/);
    } finally {
      spy.mockRestore();
    }
  });
});
