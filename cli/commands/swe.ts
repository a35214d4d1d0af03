// `grove swe run`: SWE-bench instances in shell sandboxes — an agent (bash-only loop through vlm-client) makes
// the patch, or patches come from a predictions file (or the instances' gold patches); each is graded as
// SWE-bench grades. Arguments are checked here; the server and runner load on demand.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { intOption, list, parseCommandArgs, subcommands, usageError, valueError, options, type CommandIO } from '../args.ts';
import type { Command } from '../command.ts';

const usage = `grove swe run [options]

Instances (one of):
  --fixture                   the three instances of the fixture repository (swe-env/fixtures/textkit)
  --instances FILE            SWE-bench instances (JSON list or JSONL; FAIL_TO_PASS/PASS_TO_PASS as in the dataset)
  --repo OWNER/NAME=PATH      local clone or mirror of a repository (repeatable; no internet is used)
  --instance-ids ID[,ID] ...  only these instance ids (also --ids)          --limit N   the first N
  --specs FILE                spec rows in SWE-bench's shape over the shipped ones (repeatable; see swe-env/README.md)
Patches (one of):
  --policy URL --model M      an agent: an OpenAI-compatible model server, bash-only loop (mini-swe-agent style)
      [--api-key K] [--max-steps N (30)] [--command-timeout S (60)] [--temperature T]
  --predictions-path FILE     SWE-bench predictions (preds.json: list, keyed object or JSONL; also --preds)
  --gold                      the instances' own gold patches (checks the harness on a dataset; also
                              --predictions-path gold, as SWE-bench spells it)
Environments:
  --images env|host|swebench  env: an environment image per (repository, version), built once with podman from
                              scripts/swe-images.sh's Debian bases (default for --instances); host: the server's
                              root file system (default for --fixture); swebench: SWE-bench's own image of each
                              instance, unchanged (pulled from your registry if not stored), graded by its eval
                              script as their harness does (patches only; no --repo needed)
  --namespace NS|none         swebench: the images' [registry[:port]/]namespace as SWE-bench's (swebench: Docker
                              Hub; e.g. 127.0.0.1:5000/swebench); none: locally built names. Missing images are
                              pulled with your podman/docker auth file and registries.conf; each is checked first
                              by its manifest (skopeo; no tag listing needed): a missing image or digest, or an
                              unreachable, refusing or rate-limiting registry stops the run before it starts (exit 2).
                              A dataset's image may be pinned by digest (name@sha256:...): pulled by that digest
  --instance-image-tag TAG    swebench: the images' tag (latest)
  --cache-level none|base|env|instance  swebench: instance keeps the images this run pulled; below it (default
                              env, as SWE-bench) each is removed with its unpacked root once its instance is graded
  --index URL|DIR|host|none   where pip pins come from when building: an index URL, a folder of wheels, this
                              machine's pip configuration (default), or none
Run:
  --max-workers N (4)         instances at once (also --concurrency)
  --run-id ID                 names the run (default: the --out folder's name)          --out DIR (runs/swe)
  --server URL --server-key K use a running Grove server (default: one embedded in this process)

Writes SWE-bench's files: DIR/report.json, DIR/<model>.<run_id>.json and DIR/logs/run_evaluation/<run_id>/<model>/<id>/
(report.json, test_output.txt, patch.diff); Grove's DIR/grove-report.json (FULL/PARTIAL/NO, per-test statuses) and
DIR/summary.json; for agent runs DIR/preds.json and DIR/episodes/<id>/ (grove view; process signals in each verdict).
Everything the run needs (sources with the base commits, spec rows, podman and base images) is checked first.
Exit codes: 0 ok, 1 failure, 2 bad options.

grove swe images [--prune [--all]] [--image-cache DIR]
  Lists the SWE images in podman's storage (environment and official) and the unpacked roots shell sandboxes run
  on (DIR, default /var/cache/grove/images). --prune removes superseded environment images (all but the newest
  per repository and version) and every unpacked root whose image is gone, never one a sandbox uses now; --all
  also removes the newest environment images and the official images (built or pulled again when needed).`;

const OPTS = options(
  ['instances', 'repo', 'ids', 'limit', 'policy', 'model', 'api-key', 'max-steps', 'command-timeout', 'temperature', 'preds', 'concurrency', 'out', 'server', 'server-key', 'images', 'index', 'run-id', 'max-workers', 'predictions-path', 'namespace', 'instance-image-tag', 'cache-level'],
  ['fixture', 'gold'],
);

/** SWE-bench's own spellings (run_evaluation's underscores) → Grove's. */
const ALIASES: Record<string, string> = { '--run_id': '--run-id', '--max_workers': '--max-workers', '--instance_ids': '--instance-ids', '--predictions_path': '--predictions-path', '--instance_image_tag': '--instance-image-tag', '--cache_level': '--cache-level' };

/** `--instance-ids a b c` (SWE-bench takes several values after the flag) → repeated flags. */
function normalizeArgs(argv: string[]): string[] {
  const out: string[] = [];
  let inIds = false;
  for (const raw of argv) {
    const a = ALIASES[raw] ?? raw;
    if (a === '--instance-ids') inIds = true;
    else if (a.startsWith('-')) inIds = false;
    else if (inIds && out[out.length - 1] !== '--instance-ids') out.push('--instance-ids');
    out.push(a);
  }
  return out;
}

/** `grove swe run` (exported for tests, which capture its output). */
export async function sweRun(argv: string[], io: CommandIO): Promise<number> {
  const u = { usage, io, name: 'swe' };
  const parsed = parseCommandArgs({ args: normalizeArgs(argv), options: { ...OPTS, repo: { type: 'string', multiple: true }, specs: { type: 'string', multiple: true }, 'instance-ids': { type: 'string', multiple: true } }, strict: true }, u);
  if (typeof parsed === 'number') return parsed;
  const v = parsed.values;
  v.preds ??= v['predictions-path'];
  // SWE-bench's `--predictions_path gold`: the instances' own patches.
  if (v.preds === 'gold') [v.preds, v.gold] = [undefined, true];
  v.concurrency ??= v['max-workers'];
  const ids = [...(list(v.ids) ?? []), ...((v['instance-ids'] as string[] | undefined) ?? []).flatMap((x) => list(x) ?? [])];
  const images = v.images ?? (v.fixture ? 'host' : 'env');
  if (images !== 'env' && images !== 'host' && images !== 'swebench') return valueError(u, `--images must be env, host or swebench, got "${images}"`);
  if (images === 'swebench' && v.policy) return usageError(u, '--images swebench grades patches (--predictions-path or --gold); agents work in --images env');
  if (images !== 'swebench' && (v.namespace !== undefined || v['instance-image-tag'] !== undefined || v['cache-level'] !== undefined)) return usageError(u, '--namespace, --instance-image-tag and --cache-level go with --images swebench');
  const namespace = v.namespace === undefined ? 'swebench' : v.namespace === 'none' ? null : v.namespace;
  const { namespaceProblem, IMAGE_TAG } = await import('../../swe-env/official-image.ts');
  const nsProblem = namespace === null ? null : namespaceProblem(namespace);
  if (nsProblem) return valueError(u, `invalid_image_name: --namespace must be [registry[:port]/]namespace (e.g. swebench, registry.example.com/team, 127.0.0.1:5000/swebench) or none; "${namespace!.slice(0, 100)}": ${nsProblem}`);
  const cacheLevel = v['cache-level'] ?? 'env';
  if (!['none', 'base', 'env', 'instance'].includes(cacheLevel)) return valueError(u, `--cache-level must be none, base, env or instance, got "${cacheLevel}"`);
  const imageTag = v['instance-image-tag'] ?? 'latest';
  if (!IMAGE_TAG.test(imageTag)) return valueError(u, `invalid_image_name: --instance-image-tag must be an image tag, got "${imageTag.slice(0, 100)}"`);
  if (v['run-id'] !== undefined && !/^[\w.-]{1,100}$/.test(v['run-id'])) return valueError(u, `--run-id must be letters, digits, _, . and - (at most 100), got "${v['run-id']}"`);
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
    instances = await loadSweInstances({ fixture: !!v.fixture, file: v.instances, ids: ids.length ? ids : undefined, limit: ints.limit as number | undefined });
  } catch (err) {
    return valueError(u, (err as Error).message);
  }
  // The fixture repository is built into a temporary folder, removed when the command ends.
  let scratch: string | null = null;
  try {
    if (v.fixture) {
      const { buildFixtureRepo, FIXTURE_REPO } = await import('../../swe-env/fixture.ts');
      scratch = await mkdtemp(path.join(os.tmpdir(), 'grove-textkit-'));
      const dir = path.join(scratch, 'textkit');
      await buildFixtureRepo(dir);
      repos[FIXTURE_REPO] ??= dir;
    }
    const { loadSpecs } = await import('../../swe-env/specs.ts');
    const { parsePackageIndex, ensureEnvImage } = await import('../../swe-env/env-image.ts');
    const { preflight } = await import('../../swe-env/preflight.ts');
    const { instanceEnvInputs } = await import('../../swe-env/requirements.ts');
    let specs;
    let index = null;
    try {
      specs = loadSpecs(((v.specs as string[] | undefined) ?? []).map((f) => path.resolve(f)));
      if (images === 'env') index = parsePackageIndex(v.index ?? 'host');
    } catch (err) {
      return valueError(u, (err as Error).message);
    }
    const problems = await preflight({ instances, sources: repos, specs, index, official: images === 'swebench' ? (v.server ? 'remote' : 'local') : undefined, images: { namespace, tag: imageTag } });
    if (problems.length) return valueError(u, `cannot run:\n  ${problems.join('\n  ')}`);
    const pkgIndex = index;
    const environment = pkgIndex
      ? async (inst: Parameters<typeof instanceEnvInputs>[0] & { version?: string | number }, spec: Parameters<typeof instanceEnvInputs>[1] & { row: Parameters<typeof ensureEnvImage>[2] }) => {
          const r = await ensureEnvImage(inst.repo, String(inst.version), spec.row, pkgIndex, { inputs: await instanceEnvInputs(inst, spec, repos) });
          if (r.built) io.err(`environment ${inst.repo} ${inst.version}: built ${r.image} in ${(r.ms / 1000).toFixed(1)} s\n`);
          return r.image;
        }
      : undefined;

    const { officialImageCache } = await import('../../swe-env/images.ts');
    // Embedded: this host's podman pulls and stores the images. A --server (a Kubernetes orchestrator: the pod runs
    // the image, its kubelet pulls it) resolves them itself.
    const cache = officialImageCache({ keep: cacheLevel === 'instance', cacheDir: '/var/cache/grove/images' });
    const official = images === 'swebench' ? { namespace, tag: imageTag, ...(v.server ? {} : { ensure: cache.ensure, release: cache.release }) } : undefined;
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
      mode = { kind: 'patches' as const, patches: new Map(preds.map((p) => [p.instance_id, p.model_patch])), model: preds[0]?.model_name_or_path ?? 'preds' };
    } else {
      mode = { kind: 'patches' as const, patches: new Map(instances.map((i) => [i.instance_id, i.patch ?? null])), model: 'gold' };
    }
    const { connectGrove } = await import('./run-embedded.ts');
    // SWE runs need shell sandboxes only: the embedded server starts no Chromium.
    const grove = await connectGrove({ server: v.server, serverKey: v['server-key'], maxSandboxes: Math.max(16, 2 * ((ints.concurrency as number | undefined) ?? 4)), browser: false });
    const client = grove.client;
    const out = path.resolve(v.out ?? 'runs/swe');
    try {
      const { summary } = await runSwe({
        instances, sources: repos, provider: clientShellProvider(client), mode, concurrency: (ints.concurrency as number | undefined) ?? 4, outDir: out, runId: v['run-id'] ?? path.basename(out), specs, environment, official,
        onDone: (r) => io.err(`${r.instance_id}: ${r.evaluation?.resolution ?? 'error'}${r.error ? ` (${r.error})` : r.evaluation?.error ? ` (${r.evaluation.error})` : ''}${r.termination ? ` [${r.termination.reason}]` : ''}\n`),
      });
      io.out(`${summary.resolved_instances} FULL, ${summary.partial_instances} PARTIAL, ${summary.unresolved_instances} NO, ${summary.empty_patch_instances} empty, ${summary.error_instances} errors of ${summary.total_instances}; report in ${out}\n`);
      return summary.error_instances ? 1 : 0;
    } finally {
      await grove.close();
    }
  } finally {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}

async function sweImages(argv: string[], io: CommandIO): Promise<number> {
  const u = { usage, io, name: 'swe' };
  const parsed = parseCommandArgs({ args: argv, options: options(['image-cache'], ['prune', 'all']), strict: true }, u);
  if (typeof parsed === 'number') return parsed;
  const v = parsed.values;
  if (v.all && !v.prune) return usageError(u, '--all goes with --prune');
  const cacheDir = path.resolve(v['image-cache'] ?? '/var/cache/grove/images');
  const { listSweImages, pruneSweImages } = await import('../../swe-env/images.ts');
  const { unpackedImageIds } = await import('../../shell-env/image-root.ts');
  if (v.prune) {
    const r = await pruneSweImages(cacheDir, { all: !!v.all });
    for (const name of r.removedImages) io.out(`removed image ${name}\n`);
    for (const id of r.removedRoots) io.out(`removed unpacked root ${id.slice(0, 12)}\n`);
    for (const id of r.busyRoots) io.out(`kept unpacked root ${id.slice(0, 12)} (a sandbox uses it)\n`);
  }
  const images = await listSweImages();
  const roots = new Set(await unpackedImageIds(cacheDir));
  for (const img of images) io.out(`${img.kind.padEnd(8)} ${img.id.slice(0, 12)} ${(img.size / 1e6).toFixed(0).padStart(6)} MB ${roots.has(img.id) ? 'unpacked' : '        '} ${img.name}\n`);
  const orphans = [...roots].filter((id) => !images.some((i) => i.id === id));
  io.out(`${images.length} SWE images; ${roots.size} unpacked roots in ${cacheDir}${orphans.length ? ` (${orphans.length} of other images)` : ''}\n`);
  return 0;
}

export const sweCommand: Command = {
  name: 'swe',
  summary: 'SWE-bench instances in shell sandboxes: an agent or given patches, graded as SWE-bench grades',
  usage,
  run: subcommands('swe', usage, { run: sweRun, images: sweImages }),
};
