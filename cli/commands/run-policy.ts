// The policy of `grove run --policy`: a VLM behind an OpenAI-compatible URL, or the offline scripted plans.
import type { Task } from '../../protocol/task.ts';
import { readEnvSetting } from '../../sandbox/config.ts';
import type { Logger } from '../../sandbox/log.ts';
import type { Policy } from '../../runner/policy.ts';
import { ScriptedPolicy } from '../../runner/scripted-policy.ts';
import { AnthropicClient } from '../../vlm-client/anthropic-client.ts';
import { ChatClient } from '../../vlm-client/client.ts';
import { ResponsesClient } from '../../vlm-client/responses-client.ts';
import { VlmPolicy } from '../../vlm-client/policy.ts';
import type { RunArgs } from './run-args.ts';

/** A fresh policy per episode (VLM policies keep the episode's history). */
export function makePolicyFactory(args: Pick<RunArgs, 'policy' | 'model' | 'format' | 'policyApiKey' | 'context' | 'api'>, log?: Logger): (task: Task) => Policy {
  if (args.policy === 'scripted') return () => new ScriptedPolicy();
  // One HTTP client shared by all episodes; its retries cover 429/5xx before a generation_error.
  // Each API with its own client: chat completions, Anthropic Messages (x-api-key), OpenAI Responses.
  const Client = args.api === 'anthropic' ? AnthropicClient : args.api === 'responses' ? ResponsesClient : ChatClient;
  const client = new Client({
    baseURL: args.policy,
    model: args.model!,
    apiKey: args.policyApiKey ?? readEnvSetting('GROVE_POLICY_API_KEY'),
    log,
  });
  const format = args.format ?? 'qwen3vl';
  // Tool-driven formats (Anthropic's computer tool, OpenAI's computer_call) need their tools sent through the API.
  const nativeTools = format === 'anthropic' || format === 'openai_cua';
  return () => new VlmPolicy({ client, format, nativeTools, context: args.context, log });
}
