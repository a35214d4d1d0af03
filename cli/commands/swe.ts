// `grove swe run`: SWE-bench instances in shell sandboxes — an agent (bash-only loop through vlm-client) makes
// the patch, or patches come from a predictions file (or the instances' gold patches); each is graded as
// SWE-bench grades. Arguments are checked here; the server and runner load on demand.
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { intOption, list, parseCommandArgs, subcommands, usageError, valueError, options, type CommandIO } from '../args.ts';
import type { Command } from '../command.ts';

const usage = `grove swe run [options]

Instances (one of):
  --fixture                   the three instances of the fixture repository (swe-env/fixtures/textkit)
  --instances FILE            SWE-bench instances (JSON list or JSONL; FAIL_TO_PASS/PASS_TO_PASS as in the dataset)
  --repo OWNER/NAME=PATH      local clone or mirror of a repository (repeatable; no internet is used)
  --ids ID[,ID]               only these instance ids          --limit N   the first N
Patches (one of):
  --policy URL --model M      an agent: an OpenAI-compatible model server, bash-only loop (mini-swe-agent style)
      [--api-key K] [--max-steps N (30)] [--command-timeout S (60)] [--temperature T]
  --preds FILE                SWE-bench predictions (preds.json: list, keyed object or JSONL)
  --gold                      the instances' own gold patches (checks the harness on a dataset)
Run:
  --concurrency N (4)         instances at once          --out DIR (runs/swe)
  --server URL --server-key K use a running Grove server (default: one embedded in this process)

Writes DIR/report.json (per instance: resolution FULL/PARTIAL/NO, tests), DIR/summary.json, DIR/logs/, and for
agent runs DIR/preds.json and DIR/episodes/<id>/ (open with grove view; process signals in each verdict).
Exit codes: 0 ok, 1 failure, 2 bad options.`;

const OPTS = options(
  ['instances', 'repo', 'ids', 'limit', 'policy', 'model', 'api-key', 'max-steps', 'command-timeout', 'temperature', 'preds', 'concurrency', 'out', 'server', 'server-key'],
  ['fixture', 'gold'],
);

async function swe(argv: string[], io: CommandIO): Promise<number> {
  const u = { usage, io, name: 'swe' };
  const parsed = parseCommandArgs({ args: argv, options: { ...OPTS, repo: { type: 'string', multiple: true } }, strict: true }, u);
  if (typeof parsed === 'number') return parsed;
  const v = parsed.values;
  if (!v.fixture === !v.instances) return usageError(u, 'give exactly one of --fixture or --instances FILE');
  const sources = [v.policy ? 'policy' : null, v.preds ? 'preds' : null, v.gold ? 'gold' : null].filter(Boolean);
  if (sources.length !== 1) return usageError(u, 'give exactly one of --policy URL, --preds FILE or --gold');
  if (v.policy && !v.model) return usageError(u, '--policy needs --model');
  const ints = { concurrency: intOption(v.concurrency, 'concurrency', 1), limit: intOption(v.limit, 'limit', 1), maxSteps: intOption(v['max-steps'], 'max-steps', 1), timeout: intOption(v['command-timeout'], 'command-timeout', 1) };
  for (const n of Object.values(ints)) if (n instanceof Error) return valueError(u, n.message);
  const repos: Record<string, string> = {};
  for (const r of (v.repo as string[] | undefined) ?? []) {
    const eq = r.indexOf('=');
    if (eq < 1) return valueError(u, `--repo expects OWNER/NAME=PATH, got "${r}"`);
    repos[r.slice(0, eq)] = path.resolve(r.slice(eq + 1));
  }
  const temperature = v.temperature === undefined ? undefined : Number(v.temperature);
  if (temperature !== undefined && !(temperature >= 0)) return valueError(u, `--temperature must be a number >= 0, got "${v.temperature}"`);

  const { loadSweInstances } = await import('../../runner/swe/instances.ts');
  let instances;
  try {
    instances = await loadSweInstances({ fixture: !!v.fixture, file: v.instances, ids: list(v.ids), limit: ints.limit as number | undefined });
  } catch (err) {
    return valueError(u, (err as Error).message);
  }
  if (v.fixture) {
    const { buildFixtureRepo, FIXTURE_REPO } = await import('../../swe-env/fixture.ts');
    const dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'grove-textkit-')), 'textkit');
    await buildFixtureRepo(dir);
    repos[FIXTURE_REPO] ??= dir;
  }
  const missing = [...new Set(instances.map((i) => i.repo))].filter((r) => !repos[r]);
  if (missing.length) return valueError(u, `no local source for ${missing.join(', ')}: add --repo OWNER/NAME=PATH`);

  const { runSwe } = await import('../../runner/swe/run.ts');
  const { clientShellProvider } = await import('../../runner/swe/shell-session.ts');
  let mode;
  if (v.policy) {
    const { chatBashPolicy } = await import('../../runner/swe/policy.ts');
    const policyOpts = { baseURL: v.policy, model: v.model!, apiKey: v['api-key'], temperature };
    mode = { kind: 'agent' as const, model: v.model!, policy: () => chatBashPolicy(policyOpts), maxSteps: ints.maxSteps as number | undefined, commandTimeoutS: ints.timeout as number | undefined };
  } else if (v.preds) {
    const { parsePredictions } = await import('../../swe-env/preds.ts');
    let preds;
    try {
      preds = parsePredictions(await readFile(v.preds, 'utf8'));
    } catch (err) {
      return valueError(u, `--preds ${v.preds}: ${(err as Error).message}`);
    }
    mode = { kind: 'patches' as const, patches: new Map(preds.map((p) => [p.instance_id, p.model_patch])) };
  } else {
    mode = { kind: 'patches' as const, patches: new Map(instances.map((i) => [i.instance_id, i.patch ?? null])) };
  }
  const { connectGrove } = await import('./run-embedded.ts');
  const grove = await connectGrove({ server: v.server, serverKey: v['server-key'], maxSandboxes: Math.max(16, 2 * ((ints.concurrency as number | undefined) ?? 4)) });
  const client = grove.client;
  const out = path.resolve(v.out ?? 'runs/swe');
  try {
    const { summary } = await runSwe({
      instances, sources: repos, provider: clientShellProvider(client), mode, concurrency: (ints.concurrency as number | undefined) ?? 4, outDir: out, runId: path.basename(out),
      onDone: (r) => io.err(`${r.instance_id}: ${r.evaluation?.resolution ?? 'error'}${r.error ? ` (${r.error})` : r.evaluation?.error ? ` (${r.evaluation.error})` : ''}${r.termination ? ` [${r.termination.reason}]` : ''}\n`),
    });
    io.out(`${summary.resolved_instances} FULL, ${summary.partial_instances} PARTIAL, ${summary.unresolved_instances} NO, ${summary.empty_patch_instances} empty, ${summary.error_instances} errors of ${summary.total_instances}; report in ${out}\n`);
    return summary.error_instances ? 1 : 0;
  } finally {
    await grove.close();
  }
}

export const sweCommand: Command = {
  name: 'swe',
  summary: 'SWE-bench instances in shell sandboxes: an agent or given patches, graded as SWE-bench grades',
  usage,
  run: subcommands('swe', usage, { run: swe }),
};
