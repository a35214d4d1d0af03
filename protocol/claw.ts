// Wire schemas of Claw sandboxes (mock productivity apps, claw-env): creation options, the info a sandbox
// reports, and the tool-call / state / audit / reset routes.
import { z } from 'zod';

const CLAW_APPS = ['mail', 'calendar', 'contacts', 'docs', 'todo'] as const;

export const ClawFaults = z.object({
  /** Share of tool calls answered 429 (Retry-After: 1) without running. */
  rate_429: z.number().min(0).max(1).default(0),
  /** Share answered 500 without running. */
  rate_500: z.number().min(0).max(1).default(0),
  /** Share answered after `slow_ms`. */
  rate_slow: z.number().min(0).max(1).default(0),
  slow_ms: z.number().int().min(0).max(30_000).default(1500),
  /** Seed of the fault sequence (the same seed gives the same faults on the same calls). */
  seed: z.number().int().default(1),
});

export const ClawCreateOptions = z.strictObject({
  type: z.literal('claw'),
  /** A built-in Claw task (`grove claw tasks`): the sandbox starts from its seed, apps, tools and faults. */
  task_id: z.string().min(1).max(200).optional(),
  /** Or a task of the server's Claw-Eval checkout (`grove serve --claw-eval DIR`), by its yaml's task_id: one trial with
   * the checkout's own services, tools and grader (claw-env/claw-eval/episode.ts). */
  claw_eval_task: z.string().min(1).max(200).optional(),
  /** Or an inline fixture in claw-env's state format (user, now, mail, calendar, contacts, docs, todos). */
  state: z.record(z.string(), z.unknown()).optional(),
  /** Or the seeded fixture world with this seed (the default: seed 1). */
  world_seed: z.number().int().optional(),
  apps: z.array(z.enum(CLAW_APPS)).min(1).optional(),
  /** Tool names offered to tool-calling agents (default: every tool of the apps). */
  tools: z.array(z.string().min(1)).max(200).optional(),
  faults: ClawFaults.optional(),
  ttl_seconds: z.number().int().min(1).max(7 * 86400).optional(),
  idle_timeout_seconds: z.number().int().min(1).max(86400).optional(),
  labels: z.record(z.string(), z.string()).default({}),
});
export type ClawCreateOptions = z.infer<typeof ClawCreateOptions>;

export const ClawDetails = z.object({
  /** The sandbox's own origin (web UI and /api/...), e.g. http://127.0.0.1:40123. */
  origin: z.string(),
  /** Opens the web UI in a browser (sets the token cookie, then redirects to /). */
  login_url: z.string(),
  /** The per-sandbox token (Authorization: Bearer … on the origin's /api routes). */
  token: z.string(),
  apps: z.array(z.enum(CLAW_APPS)),
  task_id: z.string().nullable(),
});
export type ClawDetails = z.infer<typeof ClawDetails>;

/** A Claw sandbox created with `claw_eval_task`: what the agent is told (its tools are served by /claw/tools and MCP). */
export const ClawEvalDetails = z.object({
  task_id: z.string(),
  /** The text of the task's first user message, as the checkout's loop builds it. */
  prompt: z.string(),
  /** The task yaml's tool names. */
  tools: z.array(z.string()),
  /** True once /claw/grade ran: the episode is over. */
  graded: z.boolean(),
  /** A multi-turn task (Claw-Eval's user_agent): the agent's text turns go to /claw-eval/reply, up to this many
   * simulated-user messages. */
  user_agent: z.object({ max_rounds: z.number().int() }).optional(),
});
export type ClawEvalDetails = z.infer<typeof ClawEvalDetails>;

const OpenAIToolDef = z.object({
  type: z.literal('function'),
  function: z.object({ name: z.string(), description: z.string(), parameters: z.record(z.string(), z.unknown()) }),
});
export const ClawToolsResponse = z.object({ tools: z.array(OpenAIToolDef) });

export const ClawCallRequest = z.object({
  tool: z.string().min(1).max(200),
  /** The tool's arguments: an object, or the JSON text a model produced. */
  arguments: z.union([z.record(z.string(), z.unknown()), z.string().max(1_000_000)]).default({}),
  /** Recorded in the audit log (default "tool"). */
  actor: z.string().min(1).max(40).default('tool'),
});

const RecordChange = z.object({
  collection: z.string(),
  id: z.string(),
  op: z.enum(['added', 'removed', 'changed']),
  fields: z.record(z.string(), z.tuple([z.unknown(), z.unknown()])).optional(),
  record: z.unknown().optional(),
});

export const ClawCallResponse = z.object({
  /** What the app answered: 200, a 4xx for invalid arguments / unknown ids, or an injected 429/500. */
  status: z.number().int(),
  result: z.unknown().optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  /** Seconds to wait before retrying (429). */
  retry_after: z.number().optional(),
  /** What the call changed in the apps' state. */
  changes: z.array(RecordChange),
  /** The call's entry number in the audit log. */
  seq: z.number().int(),
});
export type ClawCallResponse = z.infer<typeof ClawCallResponse>;

const AuditEntry = z.object({
  seq: z.number().int(),
  at: z.string(),
  actor: z.string(),
  tool: z.string(),
  app: z.string().nullable(),
  args: z.unknown(),
  status: z.number().int(),
  result: z.unknown(),
  mutated: z.boolean(),
  fault: z.enum(['429', '500', 'slow']).nullable(),
});
export const ClawAuditQuery = z.object({ since: z.coerce.number().int().min(0).default(0) });
export const ClawAuditResponse = z.object({ entries: z.array(AuditEntry) });
export const ClawStateResponse = z.object({ state: z.record(z.string(), z.unknown()) });
export const ClawResetResponse = z.object({ ok: z.literal(true) });
/** POST /sandboxes/{id}/claw/reset: back to the seed, or (task_id) a new episode of another built-in task. */
export const ClawResetRequest = z
  .object({ task_id: z.string().min(1).max(200).optional().describe('a built-in Claw task: fresh apps from its seed, tools and faults') })
  .strict();

export const ClawGradeRequest = z.object({
  /** The agent's final answer (keyword checks and the judge read it). */
  answer: z.string().max(1_000_000).default(''),
});

/** A tool call as Claw-Eval's dispatcher records it in the trace. */
export const ClawEvalDispatch = z.strictObject({
  tool_use_id: z.string().min(1).max(200),
  tool_name: z.string().min(1).max(200),
  endpoint_url: z.string().max(2000),
  request_body: z.record(z.string(), z.unknown()),
  response_status: z.number().int().min(0).max(999),
  response_body: z.unknown(),
  latency_ms: z.number().min(0),
});
export type ClawEvalDispatch = z.infer<typeof ClawEvalDispatch>;

/**
 * One call of a sandbox tool (Bash, file tools: the checkout's sandbox server): the dispatcher's record and what the
 * model is shown. On one machine claw-env makes it; on pods the orchestrator makes it over the episode's tools
 * shell and posts it to the worker holding the trace (`/worker/claw-eval/{id}/dispatch`).
 */
export const ClawEvalSandboxCall = z.strictObject({
  dispatch: ClawEvalDispatch,
  /** The tool_result text (frames left out of media answers, as Claw-Eval's dispatcher does). */
  text: z.string(),
  is_error: z.boolean(),
  /** Frames of a media answer: images shown to the model after the tool results. */
  images: z.array(z.strictObject({ data: z.string(), mime_type: z.string().max(200) })).max(64),
});
export type ClawEvalSandboxCall = z.infer<typeof ClawEvalSandboxCall>;

/** A call of a Claw-Eval task's tool (`/sandboxes/{id}/claw-eval/call`). */
export const ClawEvalCallRequest = z.strictObject({
  tool: z.string().min(1).max(200),
  /** The tool's arguments: an object, or the JSON text a model produced. */
  arguments: z.union([z.record(z.string(), z.unknown()), z.string().max(1_000_000)]).default({}),
});

export const ClawEvalCallResponse = z.object({
  /** The service's real HTTP status (Claw-Eval's services answer their own errors as 200 with an `error` body). */
  status: z.number().int(),
  /** The service's JSON body, as the grader sees it. */
  body: z.unknown(),
  /** Calls recorded in this episode so far. */
  calls: z.number().int(),
});

export const ClawEvalReplyRequest = z.strictObject({
  /** The agent's turn without tool calls: its text to the user. */
  text: z.string().max(1_000_000),
});

export const ClawEvalReplyResponse = z.object({
  /** The simulated user's next message (as the trace holds it: "[user_agent]\n…"); null when the conversation is over. */
  user: z.string().nullable(),
  /** True when the conversation is over (the user is done, its rounds are used up, or the task has no simulated
   * user): grade next. */
  done: z.boolean(),
  /** Messages the simulated user sent so far. */
  rounds: z.number().int(),
});

export const ClawEvalGradeResponse = z.object({
  task_id: z.string(),
  /** compute_task_score of the checkout; null when the grader failed (an errored trial, left out, never a zero). */
  score: z.number().nullable(),
  task_score: z.number().optional(),
  passed: z.boolean().optional(),
  /** The grader's dimension scores (completion, robustness, communication, safety, …). */
  scores: z.record(z.string(), z.number()).optional(),
  judge_calls: z.number().int().optional(),
  tool_calls: z.number().int(),
  errored: z.boolean().optional(),
  error: z.string().optional(),
});
