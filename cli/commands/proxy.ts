// `grove proxy`: the recording proxy for a harness's own model calls (serve), and the export of recorded rollouts
// as training samples (export).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { list, parseCommandArgs, subcommands, usageError, valueError, options, type CommandIO } from '../args.ts';
import type { Command } from '../command.ts';

const usage = `grove proxy serve --upstream URL [options]
grove proxy export --dir DIR [--view merged|calls|trajectory] [--rollouts ID,ID] [--out FILE]

serve: an OpenAI-compatible endpoint that forwards to --upstream and records every call (streaming included).
  Each call carries its rollout's key (from POST /rollouts with the admin key) as a bearer token or x-api-key;
  a base URL <proxy>/r/<rollout>/v1 or an x-grove-rollout header may name the same rollout, never another.
  Records: <dir>/rollouts/<rollout>/calls.jsonl.
  --upstream URL           upstream base URL with its API prefix (e.g. http://127.0.0.1:8000/v1)
  --host H --port N        listen address (default 127.0.0.1, port 4010; 0 = any free port)
  --dir DIR                record directory (default runs/proxy)
  --upstream-key KEY       sent upstream as Authorization: Bearer (default: the harness's own header)
  --admin-key KEY          enables the admin routes (/rollouts, rewards, calls); needed unless --rollout-keys off
  --rollout-keys off       trusted networks only: the path or header alone names the rollout (no key), except
                           for a rollout that has a key (default: required)
  --call-timeout-ms MS     a call's deadline upstream (default 600000)
  RL rewriting (what was asked is recorded beside what was sent):
  --logprobs               ask for per-token logprobs      --top-logprobs N
  --token-ids              ask for token ids (vLLM/SGLang return_token_ids)
  --temperature T          pin the temperature             --seed N   pin the seed
  --max-tokens N           cap output tokens               --stream-usage  ask streams for their usage

export: the recorded rollouts as training samples (JSONL, one sample a line) on stdout or --out FILE.
  --view merged            successive calls that extend one another become one sample (default)
  --view calls             one sample per call       --view trajectory   one sample per rollout (the final one)

Exit codes: 0 ok, 1 failure, 2 bad options.`;

const SERVE_OPTS = options(
  ['upstream', 'host', 'port', 'dir', 'upstream-key', 'admin-key', 'rollout-keys', 'call-timeout-ms', 'top-logprobs', 'temperature', 'seed', 'max-tokens'],
  ['logprobs', 'token-ids', 'stream-usage'],
);
const EXPORT_OPTS = options(['dir', 'view', 'rollouts', 'out']);

function num(v: string | undefined, name: string, min: number, integer = true): number | undefined | Error {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
    return new Error(`--${name} must be ${integer ? 'an integer' : 'a number'} >= ${min}, got "${v}"`);
  }
  return n;
}

async function serveCmd(argv: string[], io: CommandIO): Promise<number> {
  const u = { usage, io, name: 'proxy' };
  const parsed = parseCommandArgs({ args: argv, options: SERVE_OPTS, strict: true }, u);
  if (typeof parsed === 'number') return parsed;
  const v = parsed.values;
  if (!v.upstream) return usageError(u, '--upstream is required');
  try {
    new URL(v.upstream);
  } catch {
    return valueError(u, `--upstream is not a URL: "${v.upstream}"`);
  }
  const keyMode = v['rollout-keys'] ?? 'required';
  if (keyMode !== 'required' && keyMode !== 'off') return valueError(u, `--rollout-keys must be required or off, got "${keyMode}"`);
  if (keyMode === 'required' && !v['admin-key']) return usageError(u, 'calls need per-rollout keys, issued with the admin key: give --admin-key (or --rollout-keys off)');
  const nums = {
    port: num(v.port, 'port', 0),
    timeout: num(v['call-timeout-ms'], 'call-timeout-ms', 1),
    top: num(v['top-logprobs'], 'top-logprobs', 0),
    temperature: num(v.temperature, 'temperature', 0, false),
    seed: num(v.seed, 'seed', 0),
    max: num(v['max-tokens'], 'max-tokens', 1),
  };
  for (const n of Object.values(nums)) if (n instanceof Error) return valueError(u, n.message);
  const n = nums as { [K in keyof typeof nums]: number | undefined };
  const { startProxy } = await import('../../proxy/index.ts');
  const dir = path.resolve(v.dir ?? 'runs/proxy');
  const proxy = await startProxy({
    upstream: v.upstream,
    dir,
    host: v.host,
    port: n.port ?? 4010,
    upstreamKey: v['upstream-key'],
    adminKey: v['admin-key'],
    rolloutKeys: keyMode,
    callTimeoutMs: n.timeout ?? 600_000,
    rewrite: {
      logprobs: v.logprobs,
      topLogprobs: n.top,
      tokenIds: v['token-ids'],
      temperature: n.temperature,
      seed: n.seed,
      maxTokens: n.max,
      streamUsage: v['stream-usage'],
    },
  });
  io.err(`grove proxy: listening on ${proxy.url} → ${v.upstream}; records in ${dir}\n`);
  await new Promise<void>((ok) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      ok();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await proxy.close();
  return 0;
}

async function exportCmd(argv: string[], io: CommandIO): Promise<number> {
  const u = { usage, io, name: 'proxy' };
  const parsed = parseCommandArgs({ args: argv, options: EXPORT_OPTS, strict: true }, u);
  if (typeof parsed === 'number') return parsed;
  const v = parsed.values;
  if (!v.dir) return usageError(u, '--dir is required');
  const view = v.view ?? 'merged';
  if (view !== 'merged' && view !== 'calls' && view !== 'trajectory') return valueError(u, `--view must be merged, calls or trajectory, got "${view}"`);
  const { exportSamples, listRollouts } = await import('../../proxy/index.ts');
  const dir = path.resolve(v.dir);
  const rollouts = list(v.rollouts) ?? listRollouts(dir);
  const samples = exportSamples(dir, rollouts, view);
  const text = samples.map((s) => JSON.stringify(s)).join('\n') + (samples.length ? '\n' : '');
  if (v.out) {
    writeFileSync(v.out, text);
    io.err(`grove proxy: ${samples.length} samples from ${rollouts.length} rollouts → ${v.out}\n`);
  } else {
    io.out(text);
  }
  return 0;
}

export const proxyCommand: Command = {
  name: 'proxy',
  summary: 'Record a harness\'s model calls (serve) and export them as training samples (export)',
  usage,
  run: subcommands('proxy', usage, { serve: serveCmd, export: exportCmd }),
};
