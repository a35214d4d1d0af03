// The orchestrator's part of a Claw-Eval episode on a worker pod (kubernetes backend, k8s/remote-claw-eval.ts): its
// own checkout (--claw-eval DIR, a copy of which the pods' image holds at /opt/grove-claw-eval/checkout) checks a task at creation,
// describes its tools to MCP, grades the trace the worker hands back with the task's grader.py (the judge is this
// server's --judge-url/--judge-model) and answers the simulated user of user_agent tasks on this server's user model.
// None of their keys enters a pod. Tasks with the sandbox tools (Bash, Read, …) run them here over a shell pod of
// their own (k8s/claw-eval-tools.ts): the checkout's sandbox server file and the task's files put in, each call its
// endpoint function run there (claw-env/claw-eval/sandbox.ts, as on one machine), the env snapshot collected there.
import { randomUUID } from 'node:crypto';
import { episodeGrade } from '../claw-env/claw-eval/episode.ts';
import { GRADE_BUDGET_MS, gradeClawEvalTrial, type ClawEvalMessage, type ClawEvalTrace } from '../claw-env/claw-eval/grade.ts';
import { clawEvalSandboxTools } from '../claw-env/claw-eval/prompt.ts';
import { ClawEvalSandbox, type ClawEvalShell, type SandboxCallResult } from '../claw-env/claw-eval/sandbox.ts';
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
  admit(taskId: string): { sandbox: boolean };
  sandboxTools(taskId: string): Promise<string[]>;
  openSandbox(taskId: string, shell: ClawEvalShell, python: string, fresh: boolean): Promise<{ call(name: string, args: Record<string, unknown>): Promise<SandboxCallResult>; snapshot(): Promise<Record<string, unknown>> }>;
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
      // the sandbox tools run on a shell pod (the backend's), not a shell of this server
      return { sandbox: host.check(taskId, { shellsElsewhere: true }).sandbox };
    },
    async sandboxTools(taskId) {
      const { task, prepared } = await host.task(taskId);
      return task.sandbox ? (await clawEvalSandboxTools(prepared)).map((t) => t.name) : [];
    },
    async openSandbox(taskId, shell, python, fresh) {
      const { task, prepared } = await host.task(taskId);
      const sb = fresh ? await ClawEvalSandbox.open(shell, { root: prepared.root, python, task }) : ClawEvalSandbox.attach(shell, python);
      return {
        // the tool_use id as the local episode's callTool makes it (session.ts)
        call: (name, args) => sb.call(`toolu_${randomUUID().replace(/-/g, '').slice(0, 24)}`, name, args),
        snapshot: () => sb.snapshot(prepared.root, task),
      };
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
