// Claw tasks through the web UI with the browser runner (runBenchmark) and the existing policy formats: each
// episode gets a Claw sandbox for its task and a browser sandbox paired with it (exactly that origin open, the
// login URL as start page); when the episode's browser sandbox is deleted, the apps' final state and audit log
// are kept for the `claw` judge, which grades them with the task's graders.
import { grade } from '../../claw-env/graders/grade.ts';
import type { ClawTask } from '../../claw-env/tasks/format.ts';
import type { AuditEntry } from '../../claw-env/app.ts';
import type { ClawState } from '../../claw-env/state.ts';
import type { BrowserCreateInput } from '../../protocol/sandbox.ts';
import type { Task, Verdict } from '../../protocol/task.ts';
import type { Judge, JudgeInput } from '../../judges/types.ts';
import type { EnvClient, EnvStepBody } from '../env-client.ts';

/** A Claw task as a browser task: the prompt, and the web plan for the scripted policy in extra.plan. */
export function clawBrowserTask(t: ClawTask): Task {
  return {
    id: t.id,
    suite: 'claw',
    site: t.apps.join(','),
    question: `${t.prompt}\n(The user's apps are open in the browser: ${t.apps.join(', ')}.)`,
    extra: { ...(t.web_plan ? { plan: t.web_plan } : {}), claw_source: t.source },
    flags: [],
  };
}

interface Final {
  final: ClawState;
  audit: AuditEntry[];
}

export class ClawWebEnv implements EnvClient {
  private readonly pairs = new Map<string, { claw: string; task: string }>();
  private readonly finals = new Map<string, Final>();
  private readonly tasks: Map<string, ClawTask>;

  constructor(
    private readonly inner: EnvClient,
    private readonly grove: { url: string; apiKey?: string },
    tasks: ClawTask[],
  ) {
    this.tasks = new Map(tasks.map((t) => [t.id, t]));
  }

  private async req(method: string, path: string, body?: unknown): Promise<any> {
    const headers: Record<string, string> = { ...(this.grove.apiKey ? { 'x-api-key': this.grove.apiKey } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
    const res = await fetch(`${this.grove.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 300) throw Object.assign(new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`), { status: res.status });
    return text ? JSON.parse(text) : undefined;
  }

  async createSandbox(body: BrowserCreateInput): Promise<{ sandbox_id: string }> {
    const taskId = body.labels?.task;
    if (!taskId || !this.tasks.has(taskId)) return this.inner.createSandbox(body);
    const c = await this.req('POST', '/sandboxes', { type: 'claw', task_id: taskId, labels: { task: taskId } });
    const ready = await this.req('GET', `/sandboxes/${c.sandbox_id}/wait?timeout=30`);
    if (ready.status !== 'ready') throw new Error(`claw sandbox ${c.sandbox_id}: ${ready.status}`);
    try {
      const b = await this.inner.createSandbox({ ...body, claw_sandbox: c.sandbox_id });
      this.pairs.set(b.sandbox_id, { claw: c.sandbox_id, task: taskId });
      return b;
    } catch (err) {
      await this.req('DELETE', `/sandboxes/${c.sandbox_id}`).catch(() => undefined);
      throw err;
    }
  }

  waitSandbox(id: string, timeoutSec?: number): Promise<unknown> {
    return this.inner.waitSandbox(id, timeoutSec);
  }
  step(id: string, body: EnvStepBody) {
    return this.inner.step(id, body);
  }
  observation(id: string, opts?: { som?: boolean; accessibility?: boolean }) {
    return this.inner.observation(id, opts);
  }

  async deleteSandbox(id: string): Promise<unknown> {
    const pair = this.pairs.get(id);
    const r = await this.inner.deleteSandbox(id);
    if (pair) {
      this.pairs.delete(id);
      const [state, audit] = await Promise.all([this.req('GET', `/sandboxes/${pair.claw}/claw/state`), this.req('GET', `/sandboxes/${pair.claw}/claw/audit`)]);
      this.finals.set(pair.task, { final: state.state, audit: audit.entries });
      await this.req('DELETE', `/sandboxes/${pair.claw}`);
    }
    return r;
  }

  /** For runBenchmark's judgeState: the last finished attempt's apps. */
  judgeState = async (task: Task): Promise<unknown> => this.finals.get(task.id);

  /** Grades with the task's own graders (final state + audit + the answer; no LLM judge here). */
  readonly judge: Judge = {
    name: 'claw',
    judge: async (input: JudgeInput): Promise<Verdict> => {
      const task = this.tasks.get(input.task.id);
      const f = input.state as Final | undefined;
      if (!task || !f) return { judge: 'claw', outcome: 'judge_error', reasoning: 'no Claw state recorded for this episode' };
      const g = await grade(task, { final: f.final, audit: f.audit, answer: input.answer ?? '' });
      return {
        judge: 'claw',
        outcome: g.passed ? 'success' : 'failure',
        score: g.score,
        reasoning: [...g.checks.map((c) => `${c.passed ? '✓' : '✗'} ${c.name}: ${c.detail}`), ...g.safety_violations.map((v) => `UNSAFE: ${v}`)].join('\n'),
        details: g as unknown as Record<string, unknown>,
      };
    },
  };
}
