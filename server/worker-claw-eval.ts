// A worker pod's Claw-Eval episode, for its orchestrator (kubernetes backend, docs/kubernetes.md "What runs where"):
// the worker runs the task's services from its copy of the checkout; the orchestrator grades the episode with its
// own checkout and judge and answers its simulated user with its own user model (no judge or user-model key enters a
// pod). These routes hand it what it needs; they are worker-only (not in the public API), called with the pod's
// token like every worker route:
//   GET  /worker/claw-eval/{sandbox}/conversation   the messages so far, the simulated user's rounds, whether over
//   POST /worker/claw-eval/{sandbox}/turn           {text, user}: the agent's text turn and the user's answer (or
//                                                   null: the conversation is over), recorded at once
//   POST /worker/claw-eval/{sandbox}/dispatch       a sandbox tool call the orchestrator ran on the episode's shell
//                                                   pod (k8s/claw-eval-tools.ts): its dispatch record and what the
//                                                   model was shown, recorded in the trace; answers {calls}
//   POST /worker/claw-eval/{sandbox}/finish         {answer, env_snapshot}: ends the episode (audit read, the shell
//                                                   pod's env snapshot kept, services stopped) and answers the trace
//                                                   the grader reads; asked again, the same trace
// A sandbox that is no Claw-Eval episode answers 409 wrong_sandbox_type; an unknown one 404.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ClawEvalEpisodeSandbox } from '../claw-env/claw-eval/episode.ts';
import { GroveError } from '../protocol/errors.ts';
import { ClawEvalSandboxCall } from '../protocol/claw.ts';

const Turn = z.object({ text: z.string().max(1_000_000), user: z.string().max(1_000_000).nullable() }).strict();
const Finish = z.object({ answer: z.string().max(1_000_000).optional(), env_snapshot: z.record(z.string().max(10_000), z.unknown()).optional() }).strict();
function episodeOf(app: FastifyInstance, id: string): ClawEvalEpisodeSandbox {
  const sb = app.grove.registry.use(id);
  if (!(sb instanceof ClawEvalEpisodeSandbox)) throw new GroveError('wrong_sandbox_type', `Sandbox ${id.slice(0, 100)} is no Claw-Eval episode of this worker.`);
  return sb;
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body ?? {});
  if (!r.success) throw new GroveError('invalid_request', r.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
  return r.data;
}

export function registerWorkerClawEval(scope: FastifyInstance, app: FastifyInstance): void {
  scope.get<{ Params: { sandbox: string } }>('/worker/claw-eval/:sandbox/conversation', async (request) => episodeOf(app, request.params.sandbox).conversation());

  scope.post<{ Params: { sandbox: string } }>('/worker/claw-eval/:sandbox/turn', async (request) => {
    const { text, user } = parse(Turn, request.body);
    const sb = episodeOf(app, request.params.sandbox);
    try {
      return sb.recordTurn(text, user);
    } finally {
      app.grove.registry.touch(request.params.sandbox);
    }
  });

  scope.post<{ Params: { sandbox: string } }>('/worker/claw-eval/:sandbox/dispatch', async (request) => {
    const r = parse(ClawEvalSandboxCall, request.body);
    const sb = episodeOf(app, request.params.sandbox);
    try {
      return sb.recordSandboxCall(r);
    } finally {
      app.grove.registry.touch(request.params.sandbox);
    }
  });

  scope.post<{ Params: { sandbox: string } }>('/worker/claw-eval/:sandbox/finish', async (request) => {
    const { answer, env_snapshot } = parse(Finish, request.body);
    return episodeOf(app, request.params.sandbox).finishForGrade(answer, env_snapshot);
  });
}
