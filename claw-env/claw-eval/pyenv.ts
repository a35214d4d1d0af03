// One Python environment per Claw-Eval checkout, built once from the user's package index (pip as configured on the
// machine, or --index-url) and cached under the caller's cache folder, keyed by the checkout's path, its
// requirements.txt and the interpreter. Requirements pip cannot find are recorded, not fatal: the tasks that import
// them are skipped with missing_python_dep:<module> (probe). Also writes Grove's driver (driver-source.ts).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { DRIVER_PY } from './driver-source.ts';

const run = promisify(execFile);

/** Requirements of requirements.txt Grove leaves out: the Docker sandbox client (Grove has its own sandboxes). */
const NOT_NEEDED = new Set(['docker']);

export interface ClawEvalPython {
  /** The venv's interpreter. */
  python: string;
  venv: string;
  /** The interpreter's installation (sys.base_prefix), bound read-only into service sandboxes. */
  base_prefix: string;
  /** Requirements pip could not install. */
  missing: string[];
}

export interface PythonEnvOptions {
  cacheDir: string;
  /** Interpreter the venv is made from (default python3). */
  python?: string;
  /** Passed to pip as --index-url (default: pip's own configuration). */
  indexUrl?: string;
  log?: (line: string) => void;
  /** The requirements file under DIR (default requirements.txt). */
  requirements?: string;
  /** The cached folder's name prefix (default claw-eval-). */
  prefix?: string;
}

export function requirementNames(root: string, file = 'requirements.txt'): string[] {
  const f = path.join(root, file);
  const names = existsSync(f)
    ? readFileSync(f, 'utf8')
        .split('\n')
        .map((l) => l.replace(/#.*/, '').trim())
        .filter((l) => /^[A-Za-z0-9][A-Za-z0-9._-]*/.test(l))
    : ['pydantic', 'pyyaml', 'openai', 'httpx', 'fastapi', 'uvicorn'];
  return names.filter((l) => !NOT_NEEDED.has(l.match(/^[A-Za-z0-9._-]+/)![0].toLowerCase()));
}

async function pip(python: string, args: string[], indexUrl: string | undefined): Promise<boolean> {
  try {
    await run(python, ['-m', 'pip', 'install', '--disable-pip-version-check', '-q', ...(indexUrl ? ['--index-url', indexUrl] : []), ...args], { timeout: 900_000, maxBuffer: 16 << 20 });
    return true;
  } catch {
    return false;
  }
}

/** The checkout's venv, built on first use (minutes) and reused after (one stat). */
export async function ensureClawEvalPython(root: string, opts: PythonEnvOptions): Promise<ClawEvalPython> {
  const python = opts.python ?? 'python3';
  const reqs = requirementNames(root, opts.requirements);
  const { stdout: version } = await run(python, ['-c', 'import sys; print(sys.version)']);
  const key = createHash('sha256').update(`${realpathSync(root)}\n${reqs.join('\n')}\n${version}\n${opts.indexUrl ?? ''}`).digest('hex').slice(0, 16);
  const venv = path.join(opts.cacheDir, `${opts.prefix ?? 'claw-eval-'}${key}`);
  const meta = path.join(venv, 'grove-env.json');
  if (existsSync(meta)) return JSON.parse(readFileSync(meta, 'utf8')) as ClawEvalPython;
  mkdirSync(opts.cacheDir, { recursive: true });
  const tmp = `${venv}.tmp-${process.pid}-${Date.now()}`;
  try {
    opts.log?.(`building the Claw-Eval Python environment in ${venv} (once per checkout)\n`);
    await run(python, ['-m', 'venv', tmp]);
    const tmpPy = path.join(tmp, 'bin', 'python');
    const missing: string[] = [];
    if (!(await pip(tmpPy, reqs, opts.indexUrl))) {
      for (const r of reqs) if (!(await pip(tmpPy, [r], opts.indexUrl))) missing.push(r);
    }
    const { stdout: base } = await run(tmpPy, ['-c', 'import sys; print(sys.base_prefix)']);
    // Another process may have finished the same env meanwhile: keep theirs (it may be in use), drop ours.
    if (existsSync(meta)) {
      rmSync(tmp, { recursive: true, force: true });
      return JSON.parse(readFileSync(meta, 'utf8')) as ClawEvalPython;
    }
    // venvs hold their own path in scripts; the interpreter itself is position-independent, which is all Grove runs.
    rmSync(venv, { recursive: true, force: true });
    renameSync(tmp, venv);
    const env: ClawEvalPython = { python: path.join(venv, 'bin', 'python'), venv, base_prefix: realpathSync(base.trim()), missing };
    writeFileSync(meta, JSON.stringify(env));
    if (missing.length) opts.log?.(`not installable from the package index: ${missing.join(', ')}\n`);
    return env;
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** Where the sandbox tools' environment is cached by default: a folder a sandbox's uid can read (the host's /var is
 * bound read-only into shell sandboxes; a home folder is not). */
export const SANDBOX_PYTHON_CACHE = '/var/cache/grove';

/**
 * The Python that runs the checkout's sandbox server (src/claw_eval/sandbox/server.py) inside a Grove shell sandbox:
 * a venv from DIR's requirements-sandbox-server.txt (what Claw-Eval's Dockerfile.agent installs), made from the
 * system interpreter so that the sandbox, which sees the host's /usr and /var read-only, can run it.
 */
export async function ensureClawEvalSandboxPython(root: string, opts: { cacheDir?: string; python?: string; indexUrl?: string; log?: (line: string) => void }): Promise<ClawEvalPython> {
  const cacheDir = opts.cacheDir ?? SANDBOX_PYTHON_CACHE;
  mkdirSync(cacheDir, { recursive: true, mode: 0o755 });
  return ensureClawEvalPython(root, { cacheDir, python: opts.python ?? '/usr/bin/python3', indexUrl: opts.indexUrl, log: opts.log, requirements: 'requirements-sandbox-server.txt', prefix: 'claw-eval-sandbox-' });
}

/** Writes the driver into `dir` (a per-run temp folder) and returns its path. */
export function writeDriver(dir: string): string {
  const p = path.join(dir, 'grove_claw_eval_driver.py');
  writeFileSync(p, DRIVER_PY);
  return p;
}

/** First missing third-party module per task (grader.py and its services' scripts), from the checkout's venv. */
export async function probeDeps(py: ClawEvalPython, driver: string, root: string, tasks: { id: string; files: string[] }[]): Promise<Record<string, string | null>> {
  return new Promise((resolve, reject) => {
    const child = execFile(py.python, [driver, 'probe', root], { cwd: root, maxBuffer: 16 << 20, timeout: 120_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`probe failed: ${stderr.slice(-500) || err.message}`));
      try {
        resolve(JSON.parse(stdout) as Record<string, string | null>);
      } catch {
        reject(new Error(`probe answered no JSON: ${stdout.slice(0, 200)}`));
      }
    });
    child.stdin!.end(JSON.stringify({ tasks }));
  });
}
