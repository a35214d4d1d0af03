import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTasks } from '../../cli/commands/tasks.ts';
import { loadTasks, presentDimensions, streamTasks, TaskFileError } from '../../tasks/index.ts';
import { DATASETS } from '../support/datasets.ts';

// The real benchmark files live beside the repo (../shared/datasets).
const DATA = DATASETS;
const haveData = existsSync(DATA);
if (!haveData) console.warn(`[test/tasks] ${DATA} is absent: the real-file loader tests are skipped`);

describe.skipIf(!haveData)('real benchmark files', () => {
  it('WebVoyager: 643 tasks on 15 sites, every one joined to its reference answer', async () => {
    const res = await loadTasks('webvoyager', join(DATA, 'webvoyager/WebVoyager_data.jsonl'));
    expect(res.tasks).toHaveLength(643);
    expect(res.issues).toEqual([]);
    expect(new Set(res.tasks.map((t) => t.site)).size).toBe(15);
    expect(res.tasks.filter((t) => t.reference?.[0].type === 'golden')).toHaveLength(143);
    expect(res.tasks.filter((t) => t.reference?.[0].type === 'possible')).toHaveLength(500);
    // The file's last line has no newline: the last row still loads.
    const last = res.tasks.at(-1)!;
    expect(last.site).toBe('Wolfram Alpha');
    expect(res.tasks[0]).toMatchObject({
      id: 'Allrecipes--0',
      suite: 'webvoyager',
      site: 'Allrecipes',
      start_url: 'https://www.allrecipes.com/',
      reference: [{ type: 'possible', answer: "'Vegetarian Four Cheese Lasagna', 4.6-star, 181 reviews, Servings 8" }],
      flags: [],
    });
  });

  it('Online-Mind2Web: 300 tasks, level split 80/143/77; the older copy loads all 300 rows', async () => {
    const res = await loadTasks('online-mind2web', join(DATA, 'online-mind2web/Online_Mind2Web.json'));
    expect(res.tasks).toHaveLength(300);
    const split = (ts: { level?: string }[]) =>
      ts.reduce<Record<string, number>>((m, t) => ({ ...m, [t.level!]: (m[t.level!] ?? 0) + 1 }), {});
    expect(split(res.tasks)).toEqual({ easy: 80, medium: 143, hard: 77 });
    expect(res.tasks[0]).toMatchObject({
      id: 'b7258ee05d75e6c50673a59914db412e_110325',
      site: 'traderjoes.com',
      start_url: 'https://www.traderjoes.com/',
      level: 'medium',
      extra: { reference_length: 6 },
    });
    const old = await loadTasks('online-mind2web', join(DATA, 'online-mind2web/Online_Mind2Web.v2025.json'));
    expect(old.tasks).toHaveLength(300);
    expect(split(old.tasks)).toEqual({ easy: 83, medium: 143, hard: 74 });
    // 280 unique task_ids: the 20 repeats stay usable under a suffixed id and are flagged.
    expect(new Set(old.tasks.map((t) => t.id)).size).toBe(300);
    expect(old.tasks.filter((t) => t.flags.some((f) => f.startsWith('duplicate_id:')))).toHaveLength(20);
  });

  it('DeepShop: 150 tasks, 50 per difficulty, "None" dimensions absent, 3 scrambled rows flagged', async () => {
    const res = await loadTasks('deepshop', join(DATA, 'deepshop/deepshop_test.jsonl'));
    expect(res.tasks).toHaveLength(150);
    expect(res.issues).toEqual([]);
    for (const l of ['easy', 'medium', 'hard']) expect(res.tasks.filter((t) => t.level === l)).toHaveLength(50);
    const flagged = Object.fromEntries(res.tasks.filter((t) => t.flags.length).map((t) => [t.id, t.flags]));
    expect(flagged).toEqual({
      'Amazon--541': ['scrambled:filter', 'scrambled:sort'],
      'Amazon--595': ['scrambled:attribute', 'scrambled:filter'],
      'Amazon--539': ['scrambled:attribute', 'scrambled:sort'],
    });
    const a49 = res.tasks.find((t) => t.id === 'Amazon--49')!;
    expect(a49.extra.filter).toBeNull();
    expect(a49.extra.sort).toBeNull();
    expect(presentDimensions(a49).map((d) => d.dimension)).toEqual(['attribute']);
    const cats = new Set(res.tasks.map((t) => t.extra.category));
    expect(cats).toEqual(new Set(['Electronics', 'Fashion', 'Sports', 'Home', 'Books']));
  });

  // Load time is measured by `npm run bench:tasks`, not asserted here; loading all three at once must give the
  // same tasks as loading them one by one (the loaders share no state).
  it('all three real files load side by side with the same results as alone', async () => {
    const files = [
      ['webvoyager', join(DATA, 'webvoyager/WebVoyager_data.jsonl')],
      ['online-mind2web', join(DATA, 'online-mind2web/Online_Mind2Web.json')],
      ['deepshop', join(DATA, 'deepshop/deepshop_test.jsonl')],
    ] as const;
    const together = await Promise.all(files.map(([s, f]) => loadTasks(s, f)));
    const alone = [];
    for (const [s, f] of files) alone.push(await loadTasks(s, f));
    expect(together.map((r) => r.tasks.length)).toEqual([643, 300, 150]);
    expect(together.map((r) => r.tasks.map((t) => t.id))).toEqual(alone.map((r) => r.tasks.map((t) => t.id)));
  });
});

describe('edge cases', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'grove-tasks-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const file = async (name: string, text: string) => {
    const p = join(dir, name);
    await writeFile(p, text);
    return p;
  };
  const wv = (id: string, extra = '') =>
    `{"web_name": "Site", "id": "Site--${id}", "ques": "Q${id}", "web": "https://site.example/"${extra}}`;

  it('BOM, CRLF, blank lines and no final newline', async () => {
    const p = await file('bom.jsonl', `\uFEFF${wv('0')}\r\n\r\n${wv('1')}\r\n${wv('2')}`);
    const res = await loadTasks('webvoyager', p);
    expect(res.tasks.map((t) => t.id)).toEqual(['Site--0', 'Site--1', 'Site--2']);
    expect(res.issues).toEqual([]);
  });

  it('empty file: zero tasks, no error', async () => {
    const res = await loadTasks('deepshop', await file('empty.jsonl', ''));
    expect(res).toMatchObject({ tasks: [], issues: [], rows: 0 });
    const ws = await loadTasks('deepshop', await file('ws.jsonl', '\n\n  \n'));
    expect(ws.rows).toBe(0);
  });

  it('malformed rows are reported with their line and reason; the rest loads', async () => {
    const p = await file(
      'bad.jsonl',
      [wv('0'), '{"web_name": "Site", "id": "Site--1", "ques": "Q"', wv('2').replace('"https://site.example/"', '"not a url"'), '[1,2]', wv('4')].join('\n'),
    );
    const res = await loadTasks('webvoyager', p);
    expect(res.tasks.map((t) => t.id)).toEqual(['Site--0', 'Site--4']);
    expect(res.issues.map((i) => i.where)).toEqual(['line 2', 'line 3', 'line 4']);
    expect(res.issues[0].reason).toMatch(/^invalid JSON/);
    expect(res.issues[1]).toMatchObject({ id: 'Site--2' });
    expect(res.issues[1].reason).toMatch(/^web: /);
    expect(res.issues[2].reason).toBe('row is not a JSON object');
  });

  it('WebVoyager: references beside the file are joined; missing ones flagged; GAIA rows load', async () => {
    const sub = join(dir, 'wv');
    await import('node:fs/promises').then((fs) => fs.mkdir(sub, { recursive: true }));
    await writeFile(
      join(sub, 'reference_answer.json'),
      JSON.stringify({ Site: { notice: '', answers: [{ id: 0, type: 'golden', ans: 'forty-two' }] } }),
    );
    const gaia = '{"task_id": "abc", "Level": 2, "Final answer": "17", "id": "level2-0", "web": "https://www.google.com/", "ques": "How many?"}';
    await writeFile(join(sub, 'data.jsonl'), [wv('0'), wv('1'), gaia].join('\n'));
    const res = await loadTasks('webvoyager', join(sub, 'data.jsonl'));
    expect(res.tasks[0].reference).toEqual([{ type: 'golden', answer: 'forty-two' }]);
    expect(res.tasks[1].flags).toEqual(['no_reference']);
    expect(res.tasks[2]).toMatchObject({
      id: 'level2-0',
      site: 'google.com',
      level: '2',
      reference: [{ type: 'golden', answer: '17' }],
      extra: { gaia_task_id: 'abc' },
    });
    const noRef = await loadTasks('webvoyager', join(sub, 'data.jsonl'), { references: false });
    expect(noRef.tasks[0].reference).toBeUndefined();
    await expect(loadTasks('webvoyager', join(sub, 'data.jsonl'), { references: join(sub, 'nope.json') })).rejects.toMatchObject({
      code: 'file_not_found',
    });
  });

  it('Online-Mind2Web: task_description (older copies) and JSONL form both load', async () => {
    const rows = [
      { task_id: 'a', confirmed_task: 'Do A', website: 'https://www.a.example/', reference_length: 3, level: 'easy' },
      { task_id: 'b', task_description: 'Do B', website: 'https://b.example/x', level: 'hard' },
      { task_id: 'c', website: 'https://c.example/' },
    ];
    const arr = await loadTasks('online-mind2web', await file('om2w.json', JSON.stringify(rows, null, 2)));
    expect(arr.tasks.map((t) => [t.id, t.question, t.site, t.level])).toEqual([
      ['a', 'Do A', 'a.example', 'easy'],
      ['b', 'Do B', 'b.example', 'hard'],
    ]);
    expect(arr.issues).toEqual([{ where: 'index 2', id: 'c', reason: 'confirmed_task (or task_description): missing' }]);
    // A BOM and CRLF line ends in a JSON array, and the --site filter on a host name.
    const bom = await loadTasks('online-mind2web', await file('om2w-bom.json', `\uFEFF${JSON.stringify(rows.slice(0, 2), null, 2).replace(/\n/g, '\r\n')}`), {
      filter: { site: ['WWW.B.example'] },
    });
    expect(bom.tasks.map((t) => t.id)).toEqual(['b']);
    expect(bom.usable).toBe(2);
    const jsonl = await loadTasks('online-mind2web', await file('om2w.jsonl', rows.slice(0, 2).map((r) => JSON.stringify(r)).join('\n')));
    expect(jsonl.tasks).toHaveLength(2);
  });

  it('DeepShop: missing dimension fields, null and "None" are absent; scrambled text is flagged not fatal', async () => {
    const base = { web_name: 'Amazon', ques: 'Find X', web: 'https://www.amazon.com/', category: 'Books', difficulty: 'easy' };
    const rows = [
      { ...base, id: 'Amazon--1', attribute: 'Red running shoes', filter: 'None', sort: null },
      { ...base, id: 'Amazon--2', attribute: '**', filter: 'rated 4 stars or more rated 4 stars or more', sort: 'Price low to high' },
    ];
    const res = await loadTasks('deepshop', await file('ds.jsonl', rows.map((r) => JSON.stringify(r)).join('\n')));
    expect(res.tasks[0].extra).toEqual({ attribute: 'Red running shoes', filter: null, sort: null, category: 'Books' });
    expect(res.tasks[0].flags).toEqual([]);
    expect(res.tasks[1].flags).toEqual(['scrambled:attribute', 'scrambled:filter']);
  });

  it('SWE-bench: JSON-encoded test lists are decoded; undecodable ones make the row unusable', async () => {
    const base = { repo: 'astropy/astropy', base_commit: 'abc123', problem_statement: 'Fix it', patch: 'diff', version: '4.3' };
    const rows = [
      { ...base, instance_id: 'astropy__astropy-1', FAIL_TO_PASS: '["t::a", "t::b"]', PASS_TO_PASS: '[]' },
      { ...base, instance_id: 'astropy__astropy-2', FAIL_TO_PASS: ['t::c'] },
      { ...base, instance_id: 'astropy__astropy-3', FAIL_TO_PASS: '["t::a"', PASS_TO_PASS: '[]' },
    ];
    const res = await loadTasks('swe-bench', await file('swe.jsonl', rows.map((r) => JSON.stringify(r)).join('\n')));
    expect(res.tasks.map((t) => [t.id, t.site, t.extra.FAIL_TO_PASS, t.extra.PASS_TO_PASS])).toEqual([
      ['astropy__astropy-1', 'astropy/astropy', ['t::a', 't::b'], []],
      ['astropy__astropy-2', 'astropy/astropy', ['t::c'], []],
    ]);
    expect(res.tasks[0].extra).toMatchObject({ base_commit: 'abc123', patch: 'diff', version: '4.3' });
    expect(res.issues).toEqual([{ where: 'line 3', id: 'astropy__astropy-3', reason: 'FAIL_TO_PASS: not a JSON-encoded list' }]);
  });

  it('Claw: id + instruction + app, the rest kept in extra', async () => {
    const rows = [{ id: 'mail-1', instruction: 'Reply to Bob', app: 'mail', initial_state: { inbox: [] } }, { id: 'x' }];
    const res = await loadTasks('claw', await file('claw.json', JSON.stringify(rows)));
    expect(res.tasks).toEqual([
      { id: 'mail-1', suite: 'claw', site: 'mail', question: 'Reply to Bob', level: undefined, extra: { app: 'mail', initial_state: { inbox: [] } }, flags: [] },
    ]);
    expect(res.issues[0].reason).toMatch(/instruction/);
  });

  it('file-level failures are TaskFileErrors with a code', async () => {
    await expect(loadTasks('deepshop', join(dir, 'missing.jsonl'))).rejects.toMatchObject({ code: 'file_not_found' });
    await expect(loadTasks('deepshop', await file('text.txt', 'hello world\n'))).rejects.toMatchObject({ code: 'not_json' });
    await expect(loadTasks('online-mind2web', await file('badarr.json', '[{"task_id": 1,'))).rejects.toMatchObject({ code: 'not_json' });
    await expect(loadTasks('deepshop', await file('obj.json', '{\n  "a": 1,\n  "b": 2\n}\n'))).rejects.toMatchObject({ code: 'wrong_shape' });
    const err = await loadTasks('webvoyager', await file('om.json', '[{"task_id": "a", "confirmed_task": "x", "website": "https://a/"}]')).catch((e) => e);
    expect(err).toBeInstanceOf(TaskFileError);
    expect(err.code).toBe('wrong_shape');
    expect(err.message).toMatch(/none of its 1 rows is a webvoyager task \(index 0: neither a WebVoyager row/);
  });

  it('streamTasks yields in file order without reading ahead of the consumer', async () => {
    const p = await file('stream.jsonl', [wv('0'), 'oops', wv('2')].join('\n'));
    const kinds: string[] = [];
    for await (const ev of streamTasks('webvoyager', p, { references: false })) kinds.push(ev.kind);
    expect(kinds).toEqual(['task', 'issue', 'task']);
  });

  it('grove tasks list: JSON lines on stdout, issues and summary on stderr, filters, exit codes', async () => {
    const p = await file('cli.jsonl', [wv('0'), 'oops', wv('2'), wv('3').replace('"Site"', '"Other"')].join('\n'));
    const run = async (...argv: string[]) => {
      let out = '';
      let err = '';
      const code = await runTasks(argv, { out: (s) => (out += s), err: (s) => (err += s) });
      return { code, out, err };
    };
    const all = await run('list', '--suite', 'webvoyager', '--file', p);
    expect(all.code).toBe(0);
    expect(all.out.trim().split('\n').map((l) => JSON.parse(l).id)).toEqual(['Site--0', 'Site--2', 'Site--3']);
    expect(all.err).toContain(`${p}: line 2: skipped: invalid JSON`);
    expect(all.err).toMatch(/webvoyager: 4 rows, 3 usable, 1 unusable, 0 flagged; printed 3/);
    const f = await run('list', '--suite', 'webvoyager', '--file', p, '--site', 'other');
    expect(f.out.trim().split('\n').map((l) => JSON.parse(l).id)).toEqual(['Site--3']);
    const ids = await run('list', '--suite', 'webvoyager', '--file', p, '--ids', 'Site--2,Site--0', '--limit', '1');
    expect(ids.out.trim().split('\n').map((l) => JSON.parse(l).id)).toEqual(['Site--0']);
    const missing = await run('list', '--suite', 'webvoyager', '--file', join(dir, 'nope.jsonl'));
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/no such file .*\[file_not_found\]/);
    expect((await run('list', '--suite', 'nope', '--file', p)).code).toBe(2);
    expect((await run('list', '--suite', 'webvoyager')).code).toBe(2);
    expect((await run('list', '--suite', 'webvoyager', '--file', p, '--limit', 'x')).code).toBe(2);
  });
});
