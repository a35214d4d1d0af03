// Steps as grove_steps_total counts them, whatever surface carried them: one counter (the server's metrics) with the
// labels {type, outcome, transport}, and one rule — a step counts once it ran in its sandbox, timed from its start to
// its result (a terminal step's grading not included); a call refused before it ran (bad input, a closed sandbox)
// counts nothing. The REST routes, the step channel, a sandbox's MCP server and OpenEnv's transports all report here.

/** The sandbox type a step ran in (a SWE episode runs in a shell sandbox). */
export type StepType = 'browser' | 'shell' | 'claw';

/** `error`: a browser action error, a Claw app's 4xx/5xx answer, a timed-out command, a tool's error result;
 * `parse_error`: a policy's text that did not parse. */
export type StepOutcome = 'ok' | 'error' | 'parse_error';

/** Where a step came in: Grove's REST API and step channel (`grove`), a sandbox's own MCP server (`mcp`), or one of
 * OpenEnv's transports (HTTP /step, the /ws session, HTTP /mcp, the /mcp WebSocket). */
export type StepTransport = 'grove' | 'mcp' | 'openenv_http' | 'openenv_ws' | 'openenv_mcp' | 'openenv_ws_mcp';

/** Counts one step (the server's Metrics.observeStep). */
export type StepCounter = (type: StepType, seconds: number, outcome: StepOutcome, transport: StepTransport) => void;

/** Runs `step` and counts it with the outcome read from its result; a throw counts nothing (it did not run). */
export async function countedStep<T>(
  count: StepCounter | undefined,
  type: StepType,
  transport: StepTransport,
  step: () => Promise<T>,
  outcome: (result: T) => StepOutcome,
): Promise<T> {
  const started = performance.now();
  const result = await step();
  count?.(type, (performance.now() - started) / 1000, outcome(result), transport);
  return result;
}
