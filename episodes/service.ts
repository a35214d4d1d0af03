// What the server's routes call for task-backed sandboxes: prepare a creation body from a task, annotate each
// step answer with terminated / truncated, evaluate an episode with its task's judge and reward rules.
import { EpisodeConfig, type EvaluateResult } from '../protocol/episode.ts';
import { GroveError } from '../protocol/errors.ts';
import type { StepResult } from '../protocol/observation.ts';
import type { BrowserCreateOptions } from '../protocol/sandbox.ts';
import type { Task, Verdict } from '../protocol/task.ts';
import type { Logger } from '../sandbox/log.ts';
import { createJudge, llmJudgeForSuite, type Judge } from '../judges/index.ts';
import { offlineRuleJudge } from '../judges/rules/index.ts';
import { TaskCatalog, type ResolvedTask } from './catalog.ts';
import { decideWithoutJudge, formatGate, fromVerdict } from './rewards.ts';
import { EpisodeState, type StepSource } from './state.ts';

export interface EpisodeServiceOptions {
  taskFiles?: string;
  judge?: { baseURL: string; model: string; apiKey?: string };
  log: Logger;
  /**
   * Set when the offline sites run beside each sandbox (the kubernetes backend's worker pods), not in this process:
   * the state of a sandbox's sites session (undefined when the sites never saw it), for the rule judge.
   */
  siteState?: (sandboxId: string, sessionId: string) => Promise<unknown>;
}

export interface PreparedEpisode {
  /** The body to create the sandbox with (start URL and network access of the task filled in). */
  body: BrowserCreateOptions;
  state: EpisodeState;
}

const DEFAULT_CONFIG = EpisodeConfig.parse({});

export class EpisodeService {
  readonly catalog: TaskCatalog;
  private readonly states = new Map<string, EpisodeState>();
  private readonly judges = new Map<string, Judge>();

  constructor(private readonly opts: EpisodeServiceOptions) {
    this.catalog = new TaskCatalog({ taskFiles: opts.taskFiles, log: opts.log, sitesBesideSandboxes: opts.siteState !== undefined });
  }

  /** Resolves `body.task` (if any) into the creation body and a fresh episode state. */
  async prepare(body: BrowserCreateOptions): Promise<PreparedEpisode> {
    const config = body.episode ?? DEFAULT_CONFIG;
    if (!body.task) return { body, state: new EpisodeState(config) };
    if (body.start_url !== undefined) {
      throw new GroveError('invalid_request', 'Give either `task` (its start URL opens) or `start_url`, not both.');
    }
    const resolved = await this.catalog.resolve(body.task);
    const allow = resolved.allowHost ? [...body.network.allow, resolved.allowHost] : body.network.allow;
    const labels = { ...body.labels, task: resolved.task.id.slice(0, 200), suite: resolved.task.suite };
    return {
      body: { ...body, start_url: resolved.startUrl, network: { ...body.network, allow }, labels },
      state: new EpisodeState(config, resolved),
    };
  }

  attach(sandboxId: string, state: EpisodeState): void {
    this.states.set(sandboxId, state);
  }

  /** The sandbox was reset to its start: a fresh episode of the same task (and config). */
  restart(sandboxId: string): void {
    const s = this.states.get(sandboxId);
    if (s) this.states.set(sandboxId, new EpisodeState(s.config, s.resolved));
  }

  /** Forgets a closed sandbox's episode. */
  forget(sandboxId: string): void {
    this.states.delete(sandboxId);
  }

  private stateOf(sandboxId: string): EpisodeState {
    let s = this.states.get(sandboxId);
    if (!s) {
      s = new EpisodeState(DEFAULT_CONFIG);
      this.states.set(sandboxId, s);
    }
    return s;
  }

  /** The step answer with the episode's terminated / truncated. */
  annotate(sandboxId: string, result: StepResult, source: StepSource): StepResult {
    const flags = this.stateOf(sandboxId).record(result, source);
    return { ...result, ...flags };
  }

  /** A step that failed in the environment (5xx): the episode's sample is not the policy's fault. */
  stepFailed(sandboxId: string, err: unknown): void {
    if (err instanceof GroveError && err.status < 500) return;
    this.states.get(sandboxId)?.failEnv(err instanceof Error ? err.message : String(err));
  }

  sandboxFailed(sandboxId: string, detail: string): void {
    this.states.get(sandboxId)?.failEnv(detail);
  }

  async evaluate(sandboxId: string, given: { answer?: string }): Promise<EvaluateResult> {
    const st = this.states.get(sandboxId);
    if (!st?.resolved) throw new GroveError('no_task', `Sandbox ${sandboxId} runs no task: create it with \`task\` to evaluate it.`);
    const task = st.resolved.task;
    const answer = given.answer ?? st.answer;
    const rules = st.config.reward_rules;
    const base = {
      task_id: task.id,
      termination: st.termination,
      steps: st.steps,
      answer: answer ?? null,
      reward_rules: rules,
      format_rewards: rules === 'orchard-gui' ? [...st.formatRewards] : null,
    };
    const decided = decideWithoutJudge({
      rules,
      parseFailurePenalty: st.config.format_failure_penalty,
      termination: st.termination,
      envError: st.envError,
      completed: st.termination?.reason === 'task_completed' || given.answer !== undefined,
    });
    if (decided !== 'judge') return { ...base, ...decided, verdict: null };
    const verdict = await this.judge(sandboxId, st, task, answer);
    return { ...base, ...fromVerdict(rules, verdict, formatGate(st.formatRewards, st.config.format_reward)), verdict };
  }

  private async judge(sandboxId: string, st: EpisodeState, task: Task, answer: string | undefined): Promise<Verdict> {
    const r = st.resolved as ResolvedTask;
    const input = {
      task,
      answer,
      actions: st.actions,
      screenshots: st.screenshots.map((s) => ({ mime: s.mime, bytes: Buffer.from(s.base64, 'base64') })),
    };
    if (task.extra.ground_truth !== undefined) {
      // The offline sites' rule judge: state-based ground truth, read from the sites server by session (through the
      // sandbox when the sites run beside it).
      if (r.sitesBesideSandbox && this.opts.siteState && r.sessionId) {
        const read = this.opts.siteState;
        const sessionId = r.sessionId;
        const viaSandbox: typeof fetch = async () => {
          const state = await read(sandboxId, sessionId);
          return state === undefined ? new Response(null, { status: 404 }) : Response.json(state);
        };
        return offlineRuleJudge('http://sites.beside.sandbox', { fetch: viaSandbox }).judge({ ...input, sessionId });
      }
      const judge = offlineRuleJudge(r.sitesUrl ?? 'http://127.0.0.1:0');
      return judge.judge({ ...input, sessionId: r.sessionId });
    }
    const name = llmJudgeForSuite(task.suite);
    if (!name) return judgeError(`suite ${task.suite} has no LLM judge, and this task has no rule ground truth to judge it by`);
    if (!this.opts.judge) {
      return judgeError(`suite ${task.suite} is judged by the ${name} LLM judge, and this server has no judge endpoint: start it with --judge-url and --judge-model`);
    }
    let judge = this.judges.get(name);
    if (!judge) {
      judge = createJudge(name, { model: { baseURL: this.opts.judge.baseURL, model: this.opts.judge.model, apiKey: this.opts.judge.apiKey }, log: this.opts.log });
      this.judges.set(name, judge);
    }
    return judge.judge(input);
  }

  async close(): Promise<void> {
    this.states.clear();
    await this.catalog.close();
  }
}

function judgeError(message: string): Verdict {
  return { judge: 'none', outcome: 'judge_error', reasoning: message, details: { error_kind: 'bad_input' } };
}
