// Routes of a Claw sandbox created with `claw_eval_task` (a task of the server's Claw-Eval checkout): its tools, one
// call through the task's services, and the grade by the task's own grader.py (claw-env/claw-eval/episode.ts). The
// same sandbox is an MCP server at /sandboxes/{id}/mcp (the harness's way in).
import { SandboxIdParams } from '../../protocol/api.ts';
import { ClawEvalCallRequest, ClawEvalCallResponse, ClawEvalGradeResponse, ClawEvalReplyRequest, ClawEvalReplyResponse, ClawGradeRequest, ClawToolsResponse } from '../../protocol/claw.ts';
import { GroveError } from '../../protocol/errors.ts';
import { isClawEvalEpisode, type ClawEvalEpisode } from '../../claw-env/claw-eval/episode.ts';
import type { RouteContext } from '../route.ts';
import { defineRoute } from '../route.ts';
import { errorResponses } from './common.ts';

function episode(ctx: RouteContext, id: string): ClawEvalEpisode {
  const sb = ctx.registry.use(id);
  if (!isClawEvalEpisode(sb)) throw new GroveError('wrong_sandbox_type', `Sandbox ${id} is a ${sb.type} sandbox without a Claw-Eval task; create one with {type: "claw", claw_eval_task: ID}.`);
  return sb;
}

const ERR = errorResponses(400, 401, 403, 404, 409, 410);

const clawEvalTools = defineRoute({
  id: 'clawEvalTools',
  method: 'GET',
  url: '/sandboxes/:id/claw-eval/tools',
  summary: "A Claw-Eval task's tools (its yaml's, in OpenAI function-calling shape)",
  tags: ['claw'],
  params: SandboxIdParams,
  responses: { 200: { description: 'Tools', schema: ClawToolsResponse }, ...ERR },
  async handler({ params, ctx }) {
    return { tools: episode(ctx, params.id).toolDefs() };
  },
});

const clawEvalCall = defineRoute({
  id: 'clawEvalCall',
  method: 'POST',
  url: '/sandboxes/:id/claw-eval/call',
  summary: "Call one tool of a Claw-Eval task: its endpoint on the checkout's service, recorded for the grader",
  description:
    'The call goes to the tool_endpoints URL of the task yaml, served by the checkout\'s own FastAPI service in the ' +
    'sandbox\'s no-network namespace; the answer is the service\'s real status and JSON body, recorded as Claw-Eval\'s ' +
    'dispatcher records it (one assistant tool_use and its tool_result in the trace the grader reads). An unknown tool ' +
    'is a 404 in `status`, as Claw-Eval\'s dispatcher answers it. After /claw-eval/grade the episode is over (400).',
  tags: ['claw'],
  params: SandboxIdParams,
  body: ClawEvalCallRequest,
  responses: { 200: { description: 'Call result', schema: ClawEvalCallResponse }, ...ERR },
  async handler({ params, body, ctx }) {
    const sb = episode(ctx, params.id);
    let args: unknown = body.arguments;
    if (typeof args === 'string') {
      try {
        args = args.trim() === '' ? {} : JSON.parse(args);
      } catch {
        throw new GroveError('invalid_request', '`arguments` is neither an object nor the JSON text of one.');
      }
    }
    if (!args || typeof args !== 'object' || Array.isArray(args)) throw new GroveError('invalid_request', '`arguments` must be a JSON object.');
    try {
      const d = await sb.callTool(undefined, '', body.tool, args as Record<string, unknown>);
      return { status: d.response_status, body: d.response_body, calls: sb.steps };
    } finally {
      ctx.registry.touch(params.id);
    }
  },
});

const clawEvalReply = defineRoute({
  id: 'clawEvalReply',
  method: 'POST',
  url: '/sandboxes/:id/claw-eval/reply',
  summary: "The agent's turn without tool calls: recorded, then the task's simulated user answers (multi-turn tasks)",
  description:
    'As Claw-Eval\'s loop: the text becomes an assistant message of the trace; on a task with a simulated user ' +
    '(user_agent) and rounds left, the checkout\'s UserAgent answers on the server\'s user model and its message ' +
    '(`[user_agent]\\n…`) is returned; when it is done ([DONE]), out of rounds, or the task has none, `done` is true, ' +
    'the text was the final answer, and the episode waits for /claw-eval/grade. 502 model_unavailable when the ' +
    'user model did not answer.',
  tags: ['claw'],
  params: SandboxIdParams,
  body: ClawEvalReplyRequest,
  responses: { 200: { description: 'The user\'s answer', schema: ClawEvalReplyResponse }, ...errorResponses(400, 401, 403, 404, 409, 410, 502) },
  async handler({ params, body, ctx }) {
    const sb = episode(ctx, params.id);
    try {
      return await sb.reply(body.text);
    } finally {
      ctx.registry.touch(params.id);
    }
  },
});

const clawEvalGrade = defineRoute({
  id: 'clawEvalGrade',
  method: 'POST',
  url: '/sandboxes/:id/claw-eval/grade',
  summary: "Grade a Claw-Eval episode with the task's own grader.py and compute_task_score",
  description:
    'Ends the episode: `answer` becomes its last assistant message, the services\' /audit data (and local grader files) ' +
    'are read, the services stop, and the checkout\'s grader scores the trace (its judge calls relayed to the server\'s ' +
    '--judge-url). `score` is null with `errored` when the grader failed (Claw-Eval leaves such trials out). Asked again, ' +
    'the same grade.',
  tags: ['claw'],
  params: SandboxIdParams,
  body: ClawGradeRequest,
  responses: { 200: { description: 'Grade', schema: ClawEvalGradeResponse }, ...ERR },
  async handler({ params, body, ctx }) {
    return episode(ctx, params.id).grade(body.answer);
  },
});

export const clawEvalRoutes = [clawEvalTools, clawEvalCall, clawEvalReply, clawEvalGrade];
