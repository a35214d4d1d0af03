// The judge of Claw-Eval's graders, relayed: the checkout's own LLMJudge (run by Grove's driver in claw-env) hands
// each chat call it makes to Grove's judge client (model.ts: retries, limits, transcripts) instead of calling the
// endpoint itself. One home for `grove claw run --claw-eval` and the server's checkout (episodes/claw-eval.ts).
// judges/ and claw-env/ do not import each other: the shape below is claw-env's ClawEvalJudgeConfig written
// structurally, and the compiler checks the two against each other where a caller hands this to claw-env.
import type { ChatMessage } from '../vlm-client/chat-types.ts';
import { JudgeModel } from './model.ts';

/** One chat call of the checkout's judge, as it made it (OpenAI chat-completions fields). */
export interface RelayedChatRequest {
  model: string;
  messages: { role: string; content: unknown }[];
  temperature?: number;
  max_tokens?: number;
}

export interface ClawEvalJudgeRelay {
  /** The judge model's name, as the checkout's LLMJudge reports it. */
  model: string;
  /** The answer's text, or a rejection (the driver raises it in the grader as the judge's failure). */
  relay: (req: RelayedChatRequest) => Promise<string>;
}

/** Claw-Eval's judge on an OpenAI-compatible endpoint: every chat call goes through one JudgeModel. */
export function clawEvalJudgeRelay(baseURL: string, model: string, apiKey?: string): ClawEvalJudgeRelay {
  const jm = new JudgeModel({ baseURL, model, apiKey });
  return {
    model,
    relay: async (req) => {
      // The grader's own messages (OpenAI chat format), sent as the checkout wrote them; its sampling fields too.
      const r = await jm.call({ purpose: 'claw-eval grader', messages: req.messages as ChatMessage[], parse: (t) => t, params: { temperature: req.temperature, maxTokens: req.max_tokens } });
      return r.text;
    },
  };
}
