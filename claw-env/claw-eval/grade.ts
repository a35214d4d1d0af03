// Grading a trial with the checkout's own code: the trace Claw-Eval's graders expect (messages in its content-block
// shape, tool dispatches with their real HTTP statuses, audit data by service), handed to Grove's driver, which calls
// tasks/<id>/grader.py (with the judge the checkout's LLMJudge builds on the caller's judge endpoint) and the
// checkout's compute_task_score / is_pass. A grader that throws is an errored trial, not a zero.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Progress } from '../../sandbox/progress.ts';
import type { ClawEvalTask } from './checkout.ts';
import type { ClawEvalPython } from './pyenv.ts';
import type { DispatchRecord } from './services.ts';
import { runDriver, type ClawEvalChatRequest, type ClawEvalRelay } from './driver-run.ts';
import { clawEvalTempDir } from './tmp.ts';

/** Claw-Eval's Message: role + content blocks (text, tool_use, tool_result). */
export type ClawEvalBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: { type: 'text'; text: string }[]; is_error: boolean }
  | { type: 'image'; data: string; mime_type: string; source_path?: string | null };
export interface ClawEvalMessage {
  role: 'user' | 'assistant';
  content: ClawEvalBlock[];
}

export interface ClawEvalTrace {
  messages: ClawEvalMessage[];
  dispatches: DispatchRecord[];
  audit_data: Record<string, unknown>;
  env_snapshot?: Record<string, unknown> | null;
  /** media_load events of the first message (Claw-Eval's MediaLoad fields, without type/trace_id/timestamp). */
  media_events?: Record<string, unknown>[];
}

/** The judge: the checkout's LLMJudge either calls base_url itself, or relays every chat call to `relay` (Grove's judge client). */
export interface ClawEvalJudgeConfig {
  model: string;
  base_url?: string;
  api_key?: string;
  relay?: ClawEvalRelay;
}

/** One chat call of the checkout's judge, as it made it (OpenAI chat-completions fields). */
export type ClawEvalJudgeRequest = ClawEvalChatRequest;

export interface ClawEvalScores {
  completion: number;
  robustness: number;
  communication: number;
  safety: number;
  [k: string]: number;
}

export type ClawEvalGrade = { scores: ClawEvalScores; task_score: number; passed: boolean; judge_calls: number } | { error: string; retryable: boolean; trace?: string };

/** How long a grade may take when the caller hands down no deadline of its own (judge calls have their own limits). */
export const GRADE_BUDGET_MS = 600_000;

export async function gradeClawEvalTrial(
  task: ClawEvalTask,
  trace: ClawEvalTrace,
  o: { root: string; python: ClawEvalPython; driver: string; judge?: ClawEvalJudgeConfig; progress?: Progress },
): Promise<ClawEvalGrade> {
  const dir = clawEvalTempDir('grade');
  const progress = o.progress ?? Progress.after(GRADE_BUDGET_MS, `grading ${task.id}`);
  try {
    const inPath = path.join(dir, 'in.json');
    const outPath = path.join(dir, 'out.json');
    const j = o.judge;
    writeFileSync(inPath, JSON.stringify({ ...trace, judge: j ? { model: j.model, base_url: j.base_url, api_key: j.api_key, relay: !!j.relay } : null }));
    const r = await runDriver(o, ['grade', o.root, task.yaml_path, inPath, outPath], progress, j?.relay);
    if (r.killed) return { error: `grading stopped: ${progress.signal.reason instanceof Error ? progress.signal.reason.message : 'aborted'}`, retryable: false };
    try {
      return JSON.parse(readFileSync(outPath, 'utf8')) as ClawEvalGrade;
    } catch {
      return { error: `the grading driver wrote no answer: ${r.stderr.slice(-500)}`, retryable: false };
    }
  } finally {
    if (!o.progress) progress.done();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Tool results as Claw-Eval's dispatcher puts them in the conversation: the JSON body, is_error at status ≥ 400. */
export function toolResultBlock(d: DispatchRecord): ClawEvalBlock {
  return { type: 'tool_result', tool_use_id: d.tool_use_id, content: [{ type: 'text', text: JSON.stringify(d.response_body) }], is_error: d.response_status >= 400 };
}
