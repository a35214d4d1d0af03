// `--images swebench`: SWE-bench's own per-instance images, used unchanged. Their layout: the repository at
// /testbed at the base commit, a conda environment `testbed` under /opt/miniconda3, everything installed. The
// sandbox runs on the image (a copy-on-write root, shell-env/overlay.ts) and the evaluation is their harness's:
// the model patch from /tmp/patch.diff through the same chain of apply commands, then `/bin/bash` on the
// instance's eval script (the dataset's `eval_script` where it has one, SWE-bench 5; else the script their
// harness wrote for the row, SWE-bench 4's make_eval_script_list_py), the log cut between the start and end
// markers and parsed by the repository's parser. Text and logic here are Grove's own.
import type { ExecInput, ExecResult } from '../protocol/shell.ts';
import type { Evaluation } from './evaluate.ts';
import { isImageRef } from '../shell-env/image-root.ts';
import { pinnedRef } from './registry.ts';
import { describesRun, grade } from './grading.ts';
import { timeoutNote } from './infra-failure.ts';
import { LOG_PARSERS } from './log-parsers.ts';
import { testDirectives, type RepoSpec } from './specs.ts';
import type { SweInstance } from './types.ts';

export const TESTBED = '/testbed';
const ENV_NAME = 'testbed';
const PATCH_FILE = '/tmp/patch.diff';
const START = '>>>>> Start Test Output';
const END = '>>>>> End Test Output';
/** Strings whose presence in a log means no status map (SWE-bench's bad codes). */
const BAD_CODES = ['>>>>> Patch Apply Failed', '>>>>> Reset Failed', '>>>>> Tests Errored', '>>>>> Tests Timed Out'];
/** The test command's own exit status, printed after the end marker (outside the parsed part), as SWE-bench 5 does. */
const EXIT_CODE = '>>>>> Test Exit Code';

export interface OfficialImageOptions {
  /** Registry namespace (SWE-bench's `--namespace`, default "swebench"; null: locally built names). */
  namespace: string | null;
  /** SWE-bench's `--instance_image_tag` (default "latest"). */
  tag: string;
  arch?: 'x86_64' | 'arm64';
}

/** A path component of an image name (the reference grammar). */
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
/** A registry host: a domain or IPv4 address, an optional port. */
const HOST = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*(?::[0-9]{1,5})?$/;
/** An instance id as the datasets write them (`owner__repo-1234`): it becomes part of an image name. */
export const INSTANCE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,200}$/;
export const IMAGE_TAG = /^[\w][\w.-]{0,127}$/;

/**
 * Why `ns` is not a namespace (null: it is). A namespace is `[host[:port]/]path` (SWE-bench's `--namespace`:
 * `swebench`, `registry.example.com/team`, `127.0.0.1:5000/swebench`): path components of the reference
 * grammar, a first component with `.` or `:` (or `localhost`) being the registry. No option, no `..`, no scheme.
 */
export function namespaceProblem(ns: string): string | null {
  if (ns.length > 200) return 'longer than 200 characters';
  const parts = ns.split('/');
  // As docker reads a name: a first component with `.` or `:`, or `localhost`, is the registry (alone, it is all).
  const host = parts[0].includes('.') || parts[0].includes(':') || parts[0] === 'localhost' ? parts.shift()! : null;
  if (host !== null && !HOST.test(host)) return `"${host}" is not a registry host[:port]`;
  const bad = parts.find((p) => !COMPONENT.test(p));
  return bad === undefined ? null : `"${bad}" is not a name component (lower-case letters and digits, joined by . _ __ or -)`;
}

export class ImageNameError extends Error {
  readonly code = 'invalid_image_name';
}

/**
 * The image of an instance as SWE-bench names it (their TestSpec.instance_image_key): `sweb.eval.<arch>.<id, lower
 * case>:<tag>`; with a namespace, `<namespace>/` before it and every `__` of the whole name turned into `_1776_`.
 * A dataset's own `image` wins (a digest-pinned one as `name@sha256:…`). An id, namespace or tag that would make something else of the name is refused.
 */
export function officialImageName(inst: Pick<SweInstance, 'instance_id' | 'image'>, o: OfficialImageOptions): string {
  if (inst.image) {
    if (!isImageRef(inst.image)) throw new ImageNameError(`invalid_image_name: the instance's image "${inst.image.slice(0, 100)}" is not an image reference ([registry/]name[:tag][@sha256:digest])`);
    // Pinned by digest (`name@sha256:…`): checked, pulled and run by that digest; a tag beside it is dropped.
    return pinnedRef(inst.image);
  }
  if (!INSTANCE_ID.test(inst.instance_id)) throw new ImageNameError(`invalid_image_name: instance id "${inst.instance_id.slice(0, 100)}" cannot name an image (letters, digits, _ . -)`);
  if (!IMAGE_TAG.test(o.tag)) throw new ImageNameError(`invalid_image_name: "${o.tag.slice(0, 100)}" is not an image tag`);
  const ns = o.namespace === null ? null : namespaceProblem(o.namespace);
  if (ns) throw new ImageNameError(`invalid_image_name: namespace "${o.namespace!.slice(0, 100)}": ${ns}`);
  const key = `sweb.eval.${o.arch ?? 'x86_64'}.${inst.instance_id.toLowerCase()}:${o.tag}`;
  const name = o.namespace === null ? key : `${o.namespace}/${key}`.replaceAll('__', '_1776_');
  if (!isImageRef(name)) throw new ImageNameError(`invalid_image_name: instance id "${inst.instance_id.slice(0, 100)}" makes "${name.slice(0, 200)}", not an image reference`);
  return name;
}

/** Files a diff modifies that exist before it (SWE-bench's get_modified_files: source side not /dev/null). */
export function modifiedFiles(patch: string): string[] {
  const out: string[] = [];
  for (const m of patch.matchAll(/^--- (\S+)/gm)) {
    if (m[1] === '/dev/null' || !m[1].startsWith('a/')) continue;
    const f = m[1].slice(2);
    if (!out.includes(f)) out.push(f);
  }
  return out;
}

/** The eval script of an instance: the dataset's, else the one SWE-bench's harness writes from the spec row. */
export function officialEvalScript(inst: SweInstance, spec: RepoSpec): string {
  if (inst.eval_script) return inst.eval_script;
  const row = spec.row;
  const testPatch = inst.test_patch ?? '';
  const heredoc = 'EOF_114329324912';
  const reset = `git checkout ${inst.base_commit} ${modifiedFiles(testPatch).join(' ')}`;
  const cmds = Array.isArray(row.test_cmd) ? row.test_cmd : [row.test_cmd];
  const testCommand = [...cmds.slice(0, -1), [cmds[cmds.length - 1], ...testDirectives(testPatch, spec)].join(' ')].join('\n');
  const activate = ['source /opt/miniconda3/bin/activate', `conda activate ${ENV_NAME}`];
  const lines = [
    ...activate,
    `cd ${TESTBED}`,
    ...(row.eval_commands ?? []),
    `git config --global --add safe.directory ${TESTBED}`,
    `cd ${TESTBED}`,
    'git status',
    'git show',
    `git -c core.fileMode=false diff ${inst.base_commit}`,
    ...activate,
    ...(row.install ? [row.install] : []),
    reset,
    `git apply -v - <<'${heredoc}'\n${testPatch}\n${heredoc}`,
    `: '${START}'`,
    testCommand,
    `: '${END}'`,
    reset,
  ];
  return `${['#!/bin/bash', 'set -uxo pipefail', ...lines].join('\n')}\n`;
}

/**
 * The script with the test command's exit status kept: the script ends with a reset (`git checkout`) and runs without
 * -e, so its own status is the reset's. As SWE-bench 5: `$?` saved before the end marker, printed after it. A script
 * without the end marker stays as it is (the log alone decides then).
 */
export function recordTestExitCode(script: string): string {
  const lines = script.split('\n');
  const i = lines.findIndex((l) => l.includes(END));
  if (i < 0) return script;
  return [...lines.slice(0, i), 'SWEBENCH_TEST_EXIT_CODE=$?', lines[i], `echo "${EXIT_CODE}: $SWEBENCH_TEST_EXIT_CODE"`, ...lines.slice(i + 1)].join('\n');
}

/** The exit status the script recorded, or null. */
export function recordedExitCode(log: string): number | null {
  const m = new RegExp(`${EXIT_CODE}:\\s*(-?\\d+)`).exec(log);
  return m ? Number(m[1]) : null;
}

/** The part of a log between the markers (SWE-bench's get_logs_eval); null when the markers are missing or a bad code is there. */
export function testSection(log: string): string | null {
  if (BAD_CODES.some((c) => log.includes(c))) return null;
  if (!log.includes(START) || !log.includes(END)) return null;
  return log.split(START)[1].split(END)[0];
}

/** What the evaluation runs commands through (a shell sandbox on the instance's image). */
export interface ImageShell {
  exec(req: ExecInput): Promise<ExecResult>;
}

/** Their harness's chain: each attempt from a clean tree. */
const APPLY = [
  ['git', 'apply', '--verbose', PATCH_FILE],
  ['git', 'apply', '--verbose', '--3way', PATCH_FILE],
  ['git', 'apply', '--verbose', '--reject', PATCH_FILE],
  ['patch', '--batch', '--forward', '--fuzz=5', '-p1', '-i', PATCH_FILE],
];

/**
 * Environment of the evaluation's commands. The sandbox has no network: pip finds nothing remote and builds with
 * what the image's environment has (the harness's containers could reach PyPI). HOME is the sandbox's workspace.
 */
const EVAL_ENV = { PIP_NO_INDEX: '1', PIP_NO_BUILD_ISOLATION: '0', PIP_DISABLE_PIP_VERSION_CHECK: '1' };

/** Evaluates `modelPatch` in a sandbox running the instance's official image, as SWE-bench's run_instance does. */
export async function evaluateInOfficialImage(shell: ImageShell, inst: SweInstance, spec: RepoSpec, modelPatch: string): Promise<Evaluation> {
  const ex = (req: ExecInput) => shell.exec({ ...req, env: { ...EVAL_ENV, ...(req.env ?? {}) } });
  const base = { instance_id: inst.instance_id, patch_is_None: false, patch_exists: true };
  // The image's /testbed belongs to root (their containers run as root); git asks the sandbox's user to trust it.
  const probe = await ex({ command: ['bash', '-c', `git config --global --add safe.directory ${TESTBED} && test -d ${TESTBED}/.git && cat > ${PATCH_FILE}`], stdin: modelPatch, timeout_s: 60 });
  if (probe.exit_code !== 0) {
    return { ...base, patch_successfully_applied: false, resolution: 'NO', resolved: false, report: null, test_log: probe.stderr || probe.stdout, test_exit_code: null, error: 'not_swebench_layout' };
  }
  let output = '';
  let applied = false;
  for (const [k, argv] of APPLY.entries()) {
    if (k) await ex({ command: ['bash', '-c', 'git checkout -- . ; git clean -fd'], cwd: TESTBED, timeout_s: 120 });
    const r = await ex({ command: argv, cwd: TESTBED, merge_stderr: true, timeout_s: 120 });
    output += `$ ${argv.join(' ')}\n${r.stdout}\n`;
    if (r.exit_code === 0) {
      applied = true;
      break;
    }
  }
  if (!applied) {
    // The chain can leave the patch applied while each command failed: their harness checks the reverse.
    const rev = await ex({ command: ['git', 'apply', '--check', '--reverse', PATCH_FILE], cwd: TESTBED, timeout_s: 60 });
    applied = rev.exit_code === 0;
  }
  if (!applied) return { ...base, patch_successfully_applied: false, resolution: 'NO', resolved: false, report: null, test_log: output, test_exit_code: null, error: 'patch_apply_failed' };
  const script = recordTestExitCode(officialEvalScript(inst, spec));
  await ex({ command: ['bash', '-c', 'cat > /tmp/eval.sh'], stdin: script, timeout_s: 60 });
  const r = await ex({ command: ['/bin/bash', '/tmp/eval.sh'], cwd: TESTBED, merge_stderr: true, timeout_s: spec.test_timeout_s, max_output_bytes: 16 * 1024 * 1024 });
  if (r.timed_out) return { ...base, patch_successfully_applied: true, resolution: 'NO', resolved: false, report: null, test_log: r.stdout + timeoutNote(spec.test_timeout_s), test_exit_code: r.exit_code, error: 'tests_timed_out' };
  const section = testSection(r.stdout);
  if (section === null) return { ...base, patch_successfully_applied: true, resolution: 'NO', resolved: false, report: null, test_log: r.stdout, test_exit_code: r.exit_code, error: 'no_test_output' };
  const parse = LOG_PARSERS[spec.log_parser];
  let status = parse(section);
  // Their fallback: results printed outside the markers (stdout/stderr ordering) are read from the whole log.
  if (Object.keys(status).length === 0) status = parse(r.stdout);
  const exitCode = recordedExitCode(r.stdout);
  if (!describesRun(status, r.stdout, exitCode)) return { ...base, patch_successfully_applied: true, resolution: 'NO', resolved: false, report: null, test_log: r.stdout, test_exit_code: exitCode, error: 'no_test_results' };
  const report = grade(inst.FAIL_TO_PASS, inst.PASS_TO_PASS, status);
  return { ...base, patch_successfully_applied: true, resolution: report.resolution, resolved: report.resolved, report, test_log: r.stdout, test_exit_code: r.exit_code };
}
