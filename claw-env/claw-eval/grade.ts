// Grading a trial with the checkout's own code: the trace Claw-Eval's graders expect (messages in its content-block
// shape, tool dispatches with their real HTTP statuses, audit data by service), handed to Grove's driver, which calls
// tasks/<id>/grader.py (with the judge the checkout's LLMJudge builds on the caller's judge endpoint) and the
// checkout's compute_task_score / is_pass. A grader that throws is an errored trial, not a zero.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ClawEvalTask } from './checkout.ts';
import type { ClawEvalPython } from './pyenv.ts';
import type { DispatchRecord } from './services.ts';

/** Claw-Eval's Message: role + content blocks (text, tool_use, tool_result). */
export type ClawEvalBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: { type: 'text'; text: string }[]; is_error: boolean };
export interface ClawEvalMessage {
  role: 'user' | 'assistant';
  content: ClawEvalBlock[];
}

export interface ClawEvalTrace {
  messages: ClawEvalMessage[];
  dispatches: DispatchRecord[];
  audit_data: Record<string, unknown>;
  env_snapshot?: Record<string, unknown> | null;
}

export interface ClawEvalJudgeConfig {
  base_url: string;
  model: string;
  api_key?: string;
}

export interface ClawEvalScores {
  completion: number;
  robustness: number;
  communication: number;
  safety: number;
  [k: string]: number;
}

export type ClawEvalGrade = { scores: ClawEvalScores; task_score: number; passed: boolean; judge_calls: number } | { error: string; retryable: boolean; trace?: string };

export async function gradeClawEvalTrial(
  task: ClawEvalTask,
  trace: ClawEvalTrace,
  o: { root: string; python: ClawEvalPython; driver: string; judge?: ClawEvalJudgeConfig; timeoutMs?: number },
): Promise<ClawEvalGrade> {
  const dir = mkdtempSync(path.join(tmpdir(), 'grove-claw-eval-grade-'));
  try {
    const inPath = path.join(dir, 'in.json');
    const outPath = path.join(dir, 'out.json');
    writeFileSync(inPath, JSON.stringify({ ...trace, judge: o.judge ?? null }));
    const stderr = await new Promise<string>((resolve) => {
      execFile(o.python.python, [o.driver, 'grade', o.root, task.yaml_path, inPath, outPath], { cwd: o.root, timeout: o.timeoutMs ?? 600_000, maxBuffer: 32 << 20, env: { PATH: '/usr/bin:/bin', HOME: tmpdir(), LANG: 'C.UTF-8', PYTHONDONTWRITEBYTECODE: '1' } }, (_err, _out, err) => resolve(err));
    });
    try {
      return JSON.parse(readFileSync(outPath, 'utf8')) as ClawEvalGrade;
    } catch {
      return { error: `the grading driver wrote no answer: ${stderr.slice(-500)}`, retryable: false };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Tool results as Claw-Eval's dispatcher puts them in the conversation: the JSON body, is_error at status ≥ 400. */
export function toolResultBlock(d: DispatchRecord): ClawEvalBlock {
  return { type: 'tool_result', tool_use_id: d.tool_use_id, content: [{ type: 'text', text: JSON.stringify(d.response_body) }], is_error: d.response_status >= 400 };
}
