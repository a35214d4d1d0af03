// Test-log parsers: a test runner's output → status per test id, as SWE-bench's harness reads logs (its
// log_parsers: one per repository family, named here as there; the statuses PASSED, FAILED, SKIPPED, ERROR,
// XFAIL). Written here from that behaviour; a test absent from the log counts as failed at grading.

type TestStatus = 'PASSED' | 'FAILED' | 'SKIPPED' | 'ERROR' | 'XFAIL';
export type StatusMap = Record<string, TestStatus>;

const STATUSES: TestStatus[] = ['FAILED', 'PASSED', 'SKIPPED', 'ERROR', 'XFAIL'];
const statusAtStart = (line: string) => STATUSES.find((s) => line.startsWith(s));
const statusAtEnd = (line: string) => STATUSES.find((s) => line.endsWith(s));
const words = (line: string) => line.split(/\s+/).filter(Boolean);

/**
 * `pytest -rA` summary lines, read as SWE-bench reads them: a line starting with a status word; for FAILED the
 * " - message" separator is dropped; the second word is the test id, the first its status.
 */
export function parsePytest(log: string): StatusMap {
  const out: StatusMap = {};
  for (let line of log.split('\n')) {
    if (!statusAtStart(line)) continue;
    if (line.startsWith('FAILED')) line = line.replaceAll(' - ', ' ');
    const w = words(line);
    if (w.length > 1) out[w[1]] = w[0] as TestStatus;
  }
  return out;
}

/** pytest with parametrized ids whose option is a path: only the path's last component is kept (`[/a/b/c]` → `[/c]`). */
export function parsePytestOptions(log: string): StatusMap {
  const out: StatusMap = {};
  for (let line of log.split('\n')) {
    if (!statusAtStart(line)) continue;
    if (line.startsWith('FAILED')) line = line.replaceAll(' - ', ' ');
    const w = words(line);
    if (w.length <= 1) continue;
    let id = w[1];
    const m = /^(.*?)\[(.*)\]/.exec(id);
    if (m) {
      let option = m[2];
      if (option.startsWith('/') && !option.startsWith('//') && !option.includes('*')) option = `/${option.split('/').pop()}`;
      id = `${m[1]}[${option}]`;
    }
    out[id] = w[0] as TestStatus;
  }
  return out;
}

/** Later pytest: colour codes and control characters removed; also `id STATUS` lines (verbose output). */
export function parsePytestV2(log: string): StatusMap {
  const out: StatusMap = {};
  for (const raw of log.split('\n')) {
    // eslint-disable-next-line no-control-regex
    let line = raw.replace(/\[(\d+)m/g, '').replace(/[\x01-\x1f]/g, '');
    if (statusAtStart(line)) {
      if (line.startsWith('FAILED')) line = line.replaceAll(' - ', ' ');
      const w = words(line);
      if (w.length >= 2) out[w[1]] = w[0] as TestStatus;
    } else if (statusAtEnd(line)) {
      const w = words(line);
      if (w.length >= 2) out[w[0]] = w[1] as TestStatus;
    }
  }
  return out;
}

/** Django's runner (`--verbosity 2`): `name (module.Class) ... ok|FAIL|ERROR|skipped`, and FAIL:/ERROR: blocks. */
export function parseDjango(log: string): StatusMap {
  const out: StatusMap = {};
  let prev: string | null = null;
  for (let line of log.split('\n')) {
    line = line.trim();
    if (line.includes('--version is equivalent to version')) out['--version is equivalent to version'] = 'PASSED';
    if (line.includes(' ... ')) prev = line.split(' ... ')[0];
    for (const suffix of [' ... ok', ' ... OK', ' ...  OK']) {
      if (line.endsWith(suffix)) {
        if (line.startsWith('Applying sites.0002_alter_domain_unique...test_no_migrations')) line = line.slice(line.indexOf('...') + 3).trim();
        out[line.slice(0, line.lastIndexOf(suffix))] = 'PASSED';
        break;
      }
    }
    if (line.includes(' ... skipped')) out[line.split(' ... skipped')[0]] = 'SKIPPED';
    if (line.endsWith(' ... FAIL')) out[line.split(' ... FAIL')[0]] = 'FAILED';
    if (line.startsWith('FAIL:')) out[words(line)[1] ?? ''] = 'FAILED';
    if (line.endsWith(' ... ERROR')) out[line.split(' ... ERROR')[0]] = 'ERROR';
    if (line.startsWith('ERROR:')) out[words(line)[1] ?? ''] = 'ERROR';
    if (line.startsWith('ok') && prev !== null) out[prev] = 'PASSED';
  }
  // A test's "ok" pushed to the next line by output Django prints in between.
  const split = [
    /^(.*?)\s\.\.\.\sTesting against Django installed in ([\s\S]*?) silenced\)\.\nok$/gm,
    /^(.*?)\s\.\.\.\sInternal Server Error: \/(.*)\/\nok$/gm,
    /^(.*?)\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok$/gm,
  ];
  for (const re of split) for (const m of log.matchAll(re)) out[m[1]] = 'PASSED';
  return out;
}

/** seaborn: FAILED lines, `id PASSED ...` (verbose) and PASSED summary lines. */
export function parseSeaborn(log: string): StatusMap {
  const out: StatusMap = {};
  for (const line of log.split('\n')) {
    const w = words(line);
    if (line.startsWith('FAILED')) out[w[1]] = 'FAILED';
    else if (line.includes(' PASSED ')) {
      if (w[1] === 'PASSED') out[w[0]] = 'PASSED';
    } else if (line.startsWith('PASSED')) out[w[1]] = 'PASSED';
  }
  return out;
}

/** sympy's bin/test: `test_name ok|F|E` lines, and `____ path.py:test_name ____` failure headers. */
export function parseSympy(log: string): StatusMap {
  const out: StatusMap = {};
  for (const m of log.matchAll(/(_*) (.*)\.py:(.*) (_*)/g)) out[`${m[2]}.py:${m[3]}`] = 'FAILED';
  for (const raw of log.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith('test_')) continue;
    const name = words(line)[0];
    if (line.endsWith(' E')) out[name] = 'ERROR';
    if (line.endsWith(' F')) out[name] = 'FAILED';
    if (line.endsWith(' ok')) out[name] = 'PASSED';
  }
  return out;
}

/** matplotlib: pytest's, with MouseButton names printed as their numbers. */
export function parseMatplotlib(log: string): StatusMap {
  return parsePytest(log.replaceAll('MouseButton.LEFT', '1').replaceAll('MouseButton.RIGHT', '3'));
}

// `test_name (module.Class.test_name) ... ok` (Python 3.11+) or `test_name (module.Class) ... ok` (older).
const UNITTEST_LINE = /^(\w+) \(([\w.]+)\)(?:\s.*?)? \.\.\. (ok|FAIL|ERROR|skipped.*|expected failure|unexpected success)$/;
// The summary blocks after the run: `FAIL: test_name (module.Class.test_name)`.
const UNITTEST_SUMMARY = /^(FAIL|ERROR): (\w+) \(([\w.]+)\)/;

/** Grove: `python -m unittest -v`; ids are `name (qualified)` as printed. */
export function parseUnittest(log: string): StatusMap {
  const out: StatusMap = {};
  for (const raw of log.split('\n')) {
    const line = raw.trimEnd();
    const m = line.match(UNITTEST_LINE);
    if (m) {
      const id = `${m[1]} (${m[2]})`;
      const word = m[3];
      out[id] =
        word === 'ok' ? 'PASSED'
        : word === 'FAIL' || word === 'unexpected success' ? 'FAILED'
        : word === 'ERROR' ? 'ERROR'
        : word === 'expected failure' ? 'XFAIL'
        : 'SKIPPED';
      continue;
    }
    const s = line.match(UNITTEST_SUMMARY);
    // A test whose result line was interleaved with its own output still shows up in the summary.
    if (s) out[`${s[2]} (${s[3]})`] ??= s[1] === 'FAIL' ? 'FAILED' : 'ERROR';
  }
  return out;
}

export const LOG_PARSER_NAMES = ['pytest', 'pytest_options', 'pytest_v2', 'django', 'seaborn', 'sympy', 'matplotlib', 'unittest'] as const;
export type LogParserName = (typeof LOG_PARSER_NAMES)[number];

export const LOG_PARSERS: Record<LogParserName, (log: string) => StatusMap> = {
  pytest: parsePytest,
  pytest_options: parsePytestOptions,
  pytest_v2: parsePytestV2,
  django: parseDjango,
  seaborn: parseSeaborn,
  sympy: parseSympy,
  matplotlib: parseMatplotlib,
  unittest: parseUnittest,
};
