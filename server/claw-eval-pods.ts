// The orchestrator's part of a Claw-Eval episode on a worker pod (kubernetes backend, k8s/remote-claw-eval.ts): its
// own checkout (--claw-eval DIR, the same one the pods' image holds at the same path) checks a task at creation,
// describes its tools to MCP, grades the trace the worker hands back with the task's grader.py (the judge is this
// server's --judge-url/--judge-model) and answers the simulated user of user_agent tasks on this server's user model.
// None of their keys enters a pod. Tasks with the sandbox tools (Bash, Read, …) are refused on pods: their shell
// sandbox would have to run the checkout's sandbox server on another pod, which is not built (docs/kubernetes.md).
import { episodeGrade } from '../claw-env/claw-eval/episode.ts';
import { GRADE_BUDGET_MS, gradeClawEvalTrial, type ClawEvalMessage, type ClawEvalTrace } from '../claw-env/claw-eval/grade.ts';
import type { ClawEvalHost } from '../claw-env/claw-eval/host.ts';
import type { ClawEvalTool } from '../claw-env/claw-eval/checkout.ts';
import { simulatedUserTurn } from '../claw-env/claw-eval/user-agent.ts';
import { clawEvalHostFor } from '../episodes/claw-eval.ts';
import { GroveError } from '../protocol/errors.ts';
import type { GroveConfig } from '../sandbox/config.ts';
import type { Logger } from '../sandbox/log.ts';
import { Progress } from '../sandbox/progress.ts';
import { equipClawEvalHost } from './claw-eval.ts';

/** The shape k8s/remote-claw-eval.ts's ClawEvalOnOrchestrator has (server/ may not import k8s/). */
export interface ClawEvalPodHooks {
  admit(taskId: string): void;
  task(taskId: string, tools: ClawEvalTool[]): unknown;
  userTurn(taskId: string, conversation: { messages: unknown[]; user_rounds: number; user_done: boolean }, text: string, signal: AbortSignal): Promise<string | null>;
  grade(taskId: string, trace: unknown, signal: AbortSignal): Promise<unknown>;
  /** Removes the checkout's driver folder (at shutdown). */
  close(): Promise<void>;
}

/** The hooks over this server's checkout; undefined without --claw-eval. */
export function clawEvalOnOrchestrator(config: GroveConfig, log: Logger): ClawEvalPodHooks | undefined {
  const host = clawEvalHostFor(config, log);
  if (!host) return undefined;
  equipClawEvalHost(host, config, undefined);
  return clawEvalPodHooks(host);
}

export function clawEvalPodHooks(host: ClawEvalHost): ClawEvalPodHooks {
  return {
    admit(taskId) {
      const t = host.peek(taskId);
      if (t?.status === 'ready' && t.sandbox) {
        throw new GroveError(
          'not_supported_on_backend',
          `Claw-Eval task ${t.id} runs with the sandbox tools (Bash, Read, …), which are not available on the kubernetes backend: its shell sandbox would run the checkout's sandbox server on a pod of its own, which is not built. Run it on the local backend (grove serve --claw-eval DIR).`,
        );
      }
      host.check(taskId);
    },
    task(taskId, tools) {
      const t = host.peek(taskId);
      if (!t) throw new GroveError('task_not_found', `No Claw-Eval task "${taskId.slice(0, 200)}" in the server's checkout.`);
      return { ...t, tools };
    },
    async userTurn(taskId, conv, text, signal) {
      const { task, prepared } = await host.task(taskId);
      const ua = task.user_agent;
      if (!ua || conv.user_done || conv.user_rounds >= ua.max_rounds) return null;
      const model = host.o.userModel;
      if (!model) throw new GroveError('invalid_request', `Claw-Eval task ${task.id} talks with a simulated user and this server has no user model.`);
      const messages = [...(conv.messages as ClawEvalMessage[]), { role: 'assistant', content: text ? [{ type: 'text', text }] : [] } as ClawEvalMessage];
      const progress = Progress.after(task.timeout_s * 1000, `the simulated user of ${task.id}`, { signal });
      try {
        return await simulatedUserTurn(ua.persona, messages, { root: prepared.root, python: prepared.python, driver: prepared.driver, model, progress });
      } finally {
        progress.done();
      }
    },
    async grade(taskId, trace, signal) {
      const { task, prepared } = await host.task(taskId);
      const t = trace as ClawEvalTrace;
      if (!t || !Array.isArray(t.messages) || !Array.isArray(t.dispatches)) throw new GroveError('internal_error', `The worker handed back no trace of ${task.id}.`);
      const progress = Progress.after(GRADE_BUDGET_MS, `grading ${task.id}`, { signal });
      try {
        const g = await gradeClawEvalTrial(task, t, { root: prepared.root, python: prepared.python, driver: prepared.driver, judge: host.o.judge, progress });
        return episodeGrade(task.id, g, t.dispatches.length);
      } finally {
        progress.done();
      }
    },
    close: () => host.close(),
  };
}
