// Grading a trial with the checkout's own code: the trace Claw-Eval's graders expect (messages in its content-block
// shape, tool dispatches with their real HTTP statuses, audit data by service), handed to Grove's driver, which calls
// tasks/<id>/grader.py (with the judge the checkout's LLMJudge builds on the caller's judge endpoint) and the
// checkout's compute_task_score / is_pass. A grader that throws is an errored trial, not a zero.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ClawEvalTask } from './checkout.ts';
import type { ClawEvalPython } from './pyenv.ts';
import type { DispatchRecord } from './services.ts';
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
  relay?: (req: ClawEvalJudgeRequest) => Promise<string>;
}

/** One chat call of the checkout's judge, as it made it (OpenAI chat-completions fields). */
export interface ClawEvalJudgeRequest {
  model: string;
  messages: { role: string; content: unknown }[];
  temperature?: number;
  max_tokens?: number;
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
  const dir = clawEvalTempDir('grade');
  try {
    const inPath = path.join(dir, 'in.json');
    const outPath = path.join(dir, 'out.json');
    const j = o.judge;
    writeFileSync(inPath, JSON.stringify({ ...trace, judge: j ? { model: j.model, base_url: j.base_url, api_key: j.api_key, relay: !!j.relay } : null }));
    const stderr = await new Promise<string>((resolve) => {
      const child = spawn(o.python.python, [o.driver, 'grade', o.root, task.yaml_path, inPath, outPath], { cwd: o.root, stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: '/usr/bin:/bin', HOME: tmpdir(), LANG: 'C.UTF-8', PYTHONDONTWRITEBYTECODE: '1' } });
      let err = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 600_000);
      child.stderr!.on('data', (c: Buffer) => (err = (err + c.toString('utf8')).slice(-8000)));
      child.stdin!.on('error', () => {});
      // the judge relay: one request line from the driver, one answer line back
      createInterface({ input: child.stdout! }).on('line', (line) => {
        let req: ClawEvalJudgeRequest | undefined;
        try {
          req = (JSON.parse(line) as { judge_request?: ClawEvalJudgeRequest }).judge_request;
        } catch {
          return;
        }
        if (!req || !j?.relay) return;
        j.relay(req).then(
          (content) => child.stdin!.write(`${JSON.stringify({ content })}\n`),
          (e: Error) => child.stdin!.write(`${JSON.stringify({ error: e.message })}\n`),
        );
      });
      child.on('close', () => {
        clearTimeout(timer);
        resolve(err);
      });
      child.on('error', (e) => {
        clearTimeout(timer);
        resolve(e.message);
      });
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
