// The server's Claw-Eval checkout (`--claw-eval DIR`): claw sandboxes created with `claw_eval_task` run its tasks with
// its own services and grader.py (claw-env/claw-eval/host.ts, episode.ts). Here, because the judge client lives in
// judges/: a grader's judge calls (the checkout's LLMJudge, relayed by Grove's driver) go to the server's
// --judge-url/--judge-model through judges/model.ts (its retries and limits), as `grove claw run --claw-eval` sends them.
import { homedir } from 'node:os';
import path from 'node:path';
import { ClawEvalHost } from '../claw-env/claw-eval/host.ts';
import type { ClawEvalJudgeConfig } from '../claw-env/claw-eval/grade.ts';
import { JudgeModel } from '../judges/model.ts';
import { ConfigError, type GroveConfig } from '../sandbox/config.ts';
import type { Logger } from '../sandbox/log.ts';

/** The judge of Claw-Eval graders on a judge endpoint: every chat call relayed to Grove's judge client. */
export function clawEvalJudge(baseURL: string, model: string, apiKey?: string): ClawEvalJudgeConfig {
  const jm = new JudgeModel({ baseURL, model, apiKey });
  return {
    model,
    relay: async (req) => {
      const r = await jm.call({ purpose: 'claw-eval grader', messages: req.messages as never, parse: (t) => t, params: { temperature: req.temperature, maxTokens: req.max_tokens } });
      return r.text;
    },
  };
}

/** The checkout of `config.clawEval`, read at start (a DIR that is not a checkout is a configuration error). */
export function clawEvalHostFor(config: GroveConfig, log: Logger): ClawEvalHost | undefined {
  if (!config.clawEval) return undefined;
  try {
    return new ClawEvalHost({
      dir: config.clawEval,
      cacheDir: config.clawEvalCache ? path.resolve(config.clawEvalCache) : path.join(homedir(), '.cache', 'grove'),
      indexUrl: config.clawEvalIndexUrl,
      judge: config.judgeUrl && config.judgeModel ? clawEvalJudge(config.judgeUrl, config.judgeModel, config.judgeApiKey) : undefined,
      log: (line) => log.info({ claw_eval: config.clawEval }, line.trimEnd()),
    });
  } catch (err) {
    throw new ConfigError(`clawEval: ${(err as Error).message}`);
  }
}
