// One SWE episode, mini-swe-agent style: the model answers with one bash command per turn, the command runs in
// the instance's checkout, the model sees its return code and output; the episode ends when a command's output
// starts with the submit line (its remainder is the patch), or on the step limit, three unusable replies in a
// row, or a model/environment failure. Every step is recorded (command, output, exit code, timing, the files it
// changed), which is what the process signals are computed from.
import type { EpisodeRecorder } from '../../recording/recorder.ts';
import type { Termination } from '../../protocol/task.ts';
import { formatErrorText, observationText, parseBashReply, submission, systemPrompt, taskPrompt } from '../../swe-env/bash-format.ts';
import { CHANGED_FILES_COMMAND, diffSnapshots, parseChangedFiles, type CommandStep } from '../../swe-env/signals.ts';
import { REPO_DIR, type ShellTarget, type SweInstance } from '../../swe-env/types.ts';
import type { ChatMessage } from '../../vlm-client/client.ts';

/** The model side of the loop: the conversation so far → the next reply. */
export interface BashPolicy {
  next(messages: ChatMessage[]): Promise<{ text: string; latency_ms?: number; prompt_tokens?: number; completion_tokens?: number }>;
}

export interface SweEpisodeOptions {
  shell: ShellTarget;
  instance: SweInstance;
  policy: BashPolicy;
  maxSteps?: number;
  commandTimeoutS?: number;
  /** Characters of output the model sees per command (head and tail kept). */
  outputChars?: number;
  maxFormatErrors?: number;
  recorder?: EpisodeRecorder;
}

export interface SweEpisodeResult {
  termination: Termination;
  /** The submitted patch ('' when nothing was submitted). */
  patch: string;
  steps: CommandStep[];
  messages: ChatMessage[];
  error?: string;
}

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n[... ${text.length - max} characters elided ...]\n${text.slice(-half)}`;
}

export async function runSweEpisode(o: SweEpisodeOptions): Promise<SweEpisodeResult> {
  const maxSteps = o.maxSteps ?? 30;
  const timeoutS = o.commandTimeoutS ?? 60;
  const outputChars = o.outputChars ?? 10_000;
  const maxFormatErrors = o.maxFormatErrors ?? 3;
  const messages: ChatMessage[] = [
    { role: 'system', content: systemPrompt() },
    { role: 'user', content: taskPrompt(o.instance.problem_statement, REPO_DIR) },
  ];
  const steps: CommandStep[] = [];
  let snapshot = new Map<string, string>();
  let formatErrors = 0;
  const end = (reason: Termination['reason'], patch = '', error?: string): SweEpisodeResult => ({
    termination: { reason, ...(error ? { detail: error } : {}) },
    patch,
    steps,
    messages,
    ...(error ? { error } : {}),
  });

  for (let step = 1; step <= maxSteps; step++) {
    let reply;
    try {
      reply = await o.policy.next(messages);
    } catch (err) {
      return end('generation_error', '', (err as Error).message);
    }
    messages.push({ role: 'assistant', content: reply.text });
    const parsed = parseBashReply(reply.text);
    const ts = new Date().toISOString();
    const policy = { latency_ms: reply.latency_ms, prompt_tokens: reply.prompt_tokens, completion_tokens: reply.completion_tokens };
    if (!parsed.ok) {
      formatErrors++;
      messages.push({ role: 'user', content: formatErrorText(parsed.error) });
      await o.recorder?.recordStep({
        step, ts, model_output: reply.text, format: 'bash', parse_error: parsed.error, actions: [], url: '', title: '', tabs: [], events: [],
        last_action_error: null, timings: { action: 0, settle: 0, capture: 0, encode: 0, total: 0 }, policy,
      });
      if (formatErrors >= maxFormatErrors) return end('consecutive_parse_failures');
      continue;
    }
    formatErrors = 0;
    const t0 = performance.now();
    let result;
    let after;
    try {
      result = await o.shell.exec({ command: parsed.command, cwd: REPO_DIR, timeout_s: timeoutS, merge_stderr: true, max_output_bytes: 1024 * 1024 });
      after = parseChangedFiles((await o.shell.exec({ command: CHANGED_FILES_COMMAND, cwd: REPO_DIR, timeout_s: 60 })).stdout);
    } catch (err) {
      return end('env_error', '', (err as Error).message);
    }
    const duration = performance.now() - t0;
    const changed = diffSnapshots(snapshot, after);
    snapshot = after;
    steps.push({ step, command: parsed.command, exit_code: result.exit_code, changed_files: changed });
    const seen = clip(result.stdout, outputChars);
    await o.recorder?.recordStep({
      step, ts, model_output: reply.text, format: 'bash', thought: parsed.thought, actions: [], url: '', title: '', tabs: [], events: [],
      last_action_error: result.timed_out ? { code: 'timeout', message: `command timed out after ${timeoutS} s` } : null,
      timings: { action: Math.round(duration), settle: 0, capture: 0, encode: 0, total: Math.round(duration) },
      exec: { command: parsed.command, cwd: REPO_DIR, exit_code: result.exit_code, timed_out: result.timed_out, output: seen, duration_ms: Math.round(duration), changed_files: changed },
      policy,
    });
    const submitted = submission(result.stdout, result.exit_code);
    if (submitted !== null) return end('task_completed', submitted);
    messages.push({ role: 'user', content: observationText(result.exit_code, seen, result.timed_out, timeoutS) });
  }
  return end('max_steps_exhausted');
}
