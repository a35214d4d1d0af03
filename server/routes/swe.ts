// mini-swe-agent's environment contract on shell sandboxes: POST /sandboxes/{id}/execute.
import { SandboxIdParams } from '../../protocol/api.ts';
import { MiniSweExecuteRequest, MiniSweExecuteResult } from '../../protocol/swe.ts';
import { countedStep } from '../../sandbox/step-count.ts';
import { defineRoute } from '../route.ts';
import { errorResponses } from './common.ts';
import { shellSandbox, touching } from './shell.ts';

const DEFAULT_TIMEOUT_S = 30;

const execute = defineRoute({
  id: 'miniSweExecute',
  method: 'POST',
  url: '/sandboxes/:id/execute',
  summary: "Run a command the way mini-swe-agent's environments do",
  description:
    'The command runs with `bash -c` in `cwd` (the workspace when empty); stdout and stderr come back merged as ' +
    '`output` with `returncode`. A timeout (default 30 s) kills the process tree and answers returncode -1 with the ' +
    'output so far and an `exception_info`, as mini-swe-agent reports it; its agents detect the submit line themselves.',
  tags: ['shell'],
  params: SandboxIdParams,
  body: MiniSweExecuteRequest,
  responses: { 200: { description: 'The finished command', schema: MiniSweExecuteResult }, ...errorResponses(400, 401, 404, 409, 410) },
  async handler({ params, body, ctx }) {
    const sb = shellSandbox(ctx, params.id);
    const timeout = body.timeout ?? DEFAULT_TIMEOUT_S;
    // A step as POST /exec counts it (grove_steps_total): a timeout is its error.
    const run = () => sb.exec({ command: body.command, ...(body.cwd ? { cwd: body.cwd } : {}), timeout_s: timeout, merge_stderr: true, login_shell: false, background: false });
    const r = await touching(ctx, params.id, () => countedStep(ctx.metrics.countStep, 'shell', 'grove', run, (x) => (x.timed_out ? 'error' : 'ok')));
    if (r.timed_out) {
      return { output: r.stdout, returncode: -1, exception_info: `An error occurred while executing the command: the command timed out after ${timeout} seconds and was killed` };
    }
    return { output: r.stdout, returncode: r.exit_code, exception_info: '' };
  },
});

export const sweRoutes = [execute];
