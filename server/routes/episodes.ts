// Task-backed sandboxes: the reward of the sandbox's task from its judge (episodes/service.ts).
import { SandboxIdParams } from '../../protocol/api.ts';
import { EvaluateRequest, EvaluateResult, TaskList, TaskListQuery, type TaskSummary } from '../../protocol/episode.ts';
import { defineRoute } from '../route.ts';
import { errorResponses } from './common.ts';

const evaluate = defineRoute({
  id: 'evaluate',
  method: 'POST',
  url: '/sandboxes/:id/evaluate',
  summary: "Judge the sandbox's task: the reward, with the judge's record",
  description:
    'For a sandbox created with `task`: runs the task\'s judge (the rule judge of the offline sites; the suite\'s ' +
    'LLM judge with the server\'s judge endpoint for WebVoyager, Online-Mind2Web, DeepShop and Orchard-GUI tasks) ' +
    'on the episode so far, and answers the reward under the episode\'s reward rules. When the judge fails the ' +
    'reward is null with `judge_error` (never a silent 0); under `orchard-gui` rules an environment or judge ' +
    'error sets `dropped`. Evaluate before deleting the sandbox. A sandbox without a task answers 409 no_task.',
  tags: ['sandboxes'],
  params: SandboxIdParams,
  body: EvaluateRequest,
  responses: { 200: { description: 'Reward and verdict', schema: EvaluateResult }, ...errorResponses(400, 401, 403, 404, 409) },
  async handler({ params, body, ctx }) {
    ctx.registry.info(params.id); // 404 for an id this server never issued
    return ctx.episodes.evaluate(params.id, body);
  },
});

const listTasks = defineRoute({
  id: 'listTasks',
  method: 'GET',
  url: '/tasks',
  summary: 'The tasks of a suite',
  description:
    'The tasks a sandbox can be created with (`task: {suite, id}`): the offline sites\' tasks, or those of a task file the ' +
    'server loaded (`--task-files suite=path`), in file order. Each gives what the agent is told (question, site, level, ' +
    'start URL) and never the reference answers or ground truth the judge reads. An unknown suite answers 404 task_not_found.',
  tags: ['sandboxes'],
  query: TaskListQuery,
  responses: { 200: { description: 'Tasks of the suite', schema: TaskList }, ...errorResponses(400, 401, 403, 404) },
  async handler({ query, ctx }) {
    const tasks = await ctx.episodes.catalog.list(query.suite);
    return {
      suite: query.suite,
      tasks: tasks.map(
        (t): TaskSummary => ({
          id: t.id,
          suite: t.suite,
          site: t.site,
          question: t.question,
          ...(t.level !== undefined ? { level: t.level } : {}),
          ...(t.start_url !== undefined && query.suite !== 'offline' ? { start_url: t.start_url } : {}),
        }),
      ),
      suites: ctx.episodes.catalog.suites(),
    } satisfies TaskList;
  },
});

export const episodeRoutes = [evaluate, listTasks];
