#!/usr/bin/env node
// Import-boundary check (the dependency arrows of ARCHITECTURE.md), in the spirit of Playwright's DEPS.list:
// each top-level folder lists the folders it may import from. Prints violations as file:line and exits 1.
//   node scripts/check-imports.mjs [--list]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const ENVS = ['browser-env', 'shell-env', 'swe-env', 'claw-env'];
const LIBS = ['vlm-client', 'judges', 'tasks', 'recording'];

/**
 * Folder → what it may import (itself is always allowed): folder names, or single contract files
 * ("runner/policy.ts"). '*' = anything but test/ and bench/.
 */
const DEPS = {
  protocol: [],
  sandbox: ['protocol'],
  'browser-env': ['protocol', 'sandbox'],
  'shell-env': ['protocol', 'sandbox'],
  // SWE repo sandboxes run on the shell environment.
  'swe-env': ['protocol', 'sandbox', 'shell-env'],
  'claw-env': ['protocol', 'sandbox'],
  client: ['protocol'],
  'vlm-client': ['protocol', 'sandbox'],
  tasks: ['protocol', 'sandbox'],
  // SFT export prints actions in policy formats.
  recording: ['protocol', 'sandbox', 'vlm-client'],
  // Rule judges of the offline sites read the sites' specs and state.
  judges: ['protocol', 'sandbox', 'vlm-client', 'recording', 'tasks', 'sites'],
  sites: ['protocol', 'sandbox'],
  viewer: ['protocol', 'sandbox', 'recording'],
  k8s: ['protocol', 'sandbox', 'client'],
  // The recording proxy records model calls; it knows nothing of sandboxes beyond the logger contract.
  proxy: ['protocol', 'sandbox'],
  // Task-backed sandboxes (gym episodes): tasks, offline sites and judges behind one service; Claw-Eval episodes are
  // claw-env's, graded with the judge client.
  episodes: ['protocol', 'sandbox', 'tasks', 'judges', 'sites', 'claw-env'],
  // MCP tool servers over the sandboxes' own interfaces (the server mounts them and gives its step path).
  mcp: ['protocol', 'sandbox', ...ENVS],
  // OpenEnv's protocol over the sandboxes (the server mounts it through openenv/host.ts; tools from mcp/).
  openenv: ['protocol', 'sandbox', ...ENVS, 'vlm-client', 'episodes', 'mcp'],
  server: ['protocol', 'sandbox', ...ENVS, 'vlm-client', 'recording', 'episodes', 'mcp', 'openenv'],
  runner: ['protocol', 'sandbox', ...ENVS, ...LIBS, 'client', 'sites', 'proxy'],
  cli: ['protocol', 'sandbox', 'server', ...ENVS, ...LIBS, 'client', 'runner', 'viewer', 'sites', 'k8s', 'proxy'],
  bin: ['cli'],
  scripts: '*',
  bench: '*',
  // Tests may import anything (including test/support) except bench/.
  test: ['*', 'test'],
};

/** npm packages a folder may use (node: builtins always allowed); absent = any installed dependency. */
const PACKAGES = {
  protocol: ['zod'],
  // ws: the step channel's WebSocket (client/step-channel.ts; Node 20 has no WebSocket client of its own).
  client: ['zod', 'ws'],
};

const NEVER = ['test', 'bench'];
const SKIP_DIRS = new Set(['node_modules', '.git', '.grove', 'runs', 'docs', '.ci', 'dist', 'coverage']);
const EXT = /\.(ts|mts|cts|mjs|js|cjs|tsx)$/;

function allowed(from, to, target) {
  if (from === to) return true;
  const deps = DEPS[from];
  if (Array.isArray(deps) && deps.includes(target.split(path.sep).join('/'))) return true;
  if (deps === undefined) return !NEVER.includes(to);
  if (deps === '*') return !NEVER.includes(to);
  if (deps.includes('*')) return deps.includes(to) || !NEVER.includes(to);
  return deps.includes(to);
}

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    if (SKIP_DIRS.has(name) || name.startsWith('.')) continue;
    const p = path.join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) yield* walk(p);
    else if (EXT.test(name) && !name.endsWith('.d.ts')) yield p;
  }
}

/** Blanks comments (keeping newlines, so line numbers stay right). */
function stripComments(src) {
  return src.replace(/\/\*[\s\S]*?\*\/|(^|[^:\\'"`])\/\/.*$/gm, (m, pre = '') =>
    pre + m.slice(pre.length).replace(/[^\n]/g, ' '),
  );
}

const IMPORT_RE = /(?:^|[;\s}])(?:import|export)\s+(?:type\s+)?(?:[\w$*{}\s,]+?\s+from\s+)?['"]([^'"\n]+)['"]|\bimport\s*\(\s*['"]([^'"\n]+)['"]\s*\)/g;

export function importsOf(src) {
  const text = stripComments(src);
  const out = [];
  for (const m of text.matchAll(IMPORT_RE)) {
    const spec = m[1] ?? m[2];
    const line = text.slice(0, m.index + m[0].indexOf(spec)).split('\n').length;
    out.push({ spec, line });
  }
  return out;
}

function packageName(spec) {
  if (spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0])) return null;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Checks every source file under root; returns { files, violations: ["file:line: ..."] }. */
export function checkImports(root = ROOT) {
  const violations = [];
  let files = 0;
  for (const top of readdirSync(root)) {
    const dir = path.join(root, top);
    if (SKIP_DIRS.has(top) || top.startsWith('.') || !statSync(dir).isDirectory()) continue;
    for (const file of walk(dir)) {
      files++;
      const rel = path.relative(root, file);
      for (const { spec, line } of importsOf(readFileSync(file, 'utf8'))) {
        if (spec.startsWith('.')) {
          const target = path.relative(root, path.resolve(path.dirname(file), spec));
          if (target.startsWith('..')) {
            violations.push(`${rel}:${line}: imports "${spec}" from outside the repository`);
            continue;
          }
          const to = target.split(path.sep)[0];
          if (!allowed(top, to, target)) {
            const deps = DEPS[top];
            const list = Array.isArray(deps) ? deps.filter((d) => d !== '*').join(', ') || 'nothing internal' : 'anything but test/, bench/';
            violations.push(`${rel}:${line}: ${top}/ may not import ${to}/ ("${spec}"); ${top}/ may import: ${list}`);
          }
        } else {
          const pkg = packageName(spec);
          const pkgs = PACKAGES[top];
          if (pkg && pkgs && !pkgs.includes(pkg)) {
            violations.push(`${rel}:${line}: ${top}/ may not use the package "${pkg}"; allowed: ${pkgs.join(', ')} and node: builtins`);
          }
        }
      }
    }
  }
  return { files, violations };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--list')) {
    for (const [k, v] of Object.entries(DEPS)) console.log(`${k.padEnd(12)} → ${Array.isArray(v) ? v.join(', ') || '(nothing)' : v}`);
  }
  const { files, violations } = checkImports();
  if (violations.length) {
    console.error(violations.join('\n'));
    console.error(`\n${violations.length} import-boundary violation(s) in ${files} files (rules: scripts/check-imports.mjs DEPS).`);
    process.exitCode = 1;
  } else {
    console.log(`import boundaries ok (${files} files)`);
  }
}
