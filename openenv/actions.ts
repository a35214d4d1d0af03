// A step's action as OpenEnv carries it: the environment's own action, or one of OpenEnv's MCP actions
// (ListToolsAction {type:"list_tools"}, CallToolAction {type:"call_tool", tool_name, arguments}) answered with
// ListToolsObservation / CallToolObservation. OpenEnv's typed clients add `metadata` to every action: dropped here.
import { z } from 'zod';
import type { EnvSession } from './envs/types.ts';
import { parseOr } from './envs/base.ts';
import { OpenEnvError, type ResetArgs, type StepOut } from './wire.ts';

const ListTools = z.strictObject({ type: z.literal('list_tools') });
const CallTool = z.strictObject({ type: z.literal('call_tool'), tool_name: z.string().min(1).max(200), arguments: z.record(z.string(), z.unknown()).default({}) });

/** Runs one step (the session's own or an MCP action); `ensureEpisode` starts a default episode for a tool call. */
export async function runStep(s: EnvSession, action: Record<string, unknown>, timeoutS?: number): Promise<StepOut> {
  const { metadata: _m, ...rest } = action;
  if (rest.type === 'list_tools') {
    parseOr(ListTools, rest, ['body', 'action'], 'action');
    return { observation: { tools: s.listTools() }, reward: null, done: false };
  }
  if (rest.type === 'call_tool') {
    const a = parseOr(CallTool, rest, ['body', 'action'], 'action');
    try {
      await ensureEpisode(s);
      const result = await s.callTool(a.tool_name, a.arguments);
      return { observation: { tool_name: a.tool_name, result, error: null }, reward: null, done: false };
    } catch (err) {
      if (err instanceof OpenEnvError && err.code === 'VALIDATION_ERROR') {
        return { observation: { tool_name: a.tool_name, result: null, error: { error_type: 'invalid_args', message: err.message } }, reward: null, done: false };
      }
      throw err;
    }
  }
  return s.step(rest, timeoutS);
}

/** Tool calls need a sandbox: a session with no episode yet gets one with the environment's defaults. */
export async function ensureEpisode(s: EnvSession, args: ResetArgs = {}): Promise<void> {
  if (s.sandboxId === undefined) await s.reset(args);
}
