// The server's Claw-Eval checkout (`--claw-eval DIR`): claw sandboxes created with `claw_eval_task` run its tasks with
// its own services and grader.py (claw-env/claw-eval/host.ts, episode.ts). Here, because episodes/ may use both
// claw-env/ and judges/: a grader's judge calls (the checkout's LLMJudge, relayed by Grove's driver) go to the server's
// --judge-url/--judge-model through judges/claw-eval.ts, the relay `grove claw run --claw-eval` uses too.
import { homedir } from 'node:os';
import path from 'node:path';
import { ClawEvalHost, type ClawEvalHostOptions } from '../claw-env/claw-eval/host.ts';
import { clawEvalJudgeRelay } from '../judges/claw-eval.ts';
import { ConfigError, type GroveConfig } from '../sandbox/config.ts';
import type { Logger } from '../sandbox/log.ts';

/** The checkout of `config.clawEval`, read at start (a DIR that is not a checkout is a configuration error). */
export function clawEvalHostFor(config: GroveConfig, log: Logger, more: Pick<ClawEvalHostOptions, 'gradedElsewhere' | 'isolation'> = {}): ClawEvalHost | undefined {
  if (!config.clawEval) return undefined;
  try {
    return new ClawEvalHost({
      ...more,
      dir: config.clawEval,
      cacheDir: config.clawEvalCache ? path.resolve(config.clawEvalCache) : path.join(homedir(), '.cache', 'grove'),
      indexUrl: config.clawEvalIndexUrl,
      judge: config.judgeUrl && config.judgeModel ? clawEvalJudgeRelay(config.judgeUrl, config.judgeModel, config.judgeApiKey) : undefined,
      log: (line) => log.info({ claw_eval: config.clawEval }, line.trimEnd()),
    });
  } catch (err) {
    throw new ConfigError(`clawEval: ${(err as Error).message}`);
  }
}
