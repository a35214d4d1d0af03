// `grove swe run`: SWE-bench instances in shell sandboxes. For each instance, either an agent episode (a bash
// policy through vlm-client, recorded like a browser episode) produces the patch, or the patch comes from a
// predictions file; then a fresh sandbox at the base commit evaluates it as SWE-bench's harness does. Writes
// preds.json (agent runs), report.json (per instance), summary.json, and the episodes with their process signals.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EpisodeRecorder } from '../../recording/recorder.ts';
import type { Termination } from '../../protocol/task.ts';
import { evaluatePatch, type Evaluation } from '../../swe-env/evaluate.ts';
import { evaluateInOfficialImage, officialImageName, type OfficialImageOptions } from '../../swe-env/official-image.ts';
import { BundleCache } from '../../swe-env/bundle.ts';
import { instanceReport, officialReport, officialRunReport, summarize, type RunOutcome, type RunSummary } from '../../swe-env/preds.ts';
import { instanceShell, prepareRepo } from '../../swe-env/repo.ts';
import { processSignals, type ProcessSignals } from '../../swe-env/signals.ts';
import { specFor, type RepoSpec, type loadSpecs } from '../../swe-env/specs.ts';
import type { RepoSources, SweInstance } from '../../swe-env/types.ts';
import { runSweEpisode, type BashPolicy } from './episode.ts';
import { withSession, type ShellProvider } from './shell-session.ts';

type SweMode =
  | { kind: 'patches'; patches: Map<string, string | null>; model?: string }
  | { kind: 'agent'; policy: () => BashPolicy; model: string; maxSteps?: number; commandTimeoutS?: number };

export interface SweRunOptions {
  instances: SweInstance[];
  sources: RepoSources;
  provider: ShellProvider;
  mode: SweMode;
  concurrency: number;
  outDir: string;
  runId?: string;
  /** The spec table (shipped rows and the user's files); default the shipped rows. */
  specs?: ReturnType<typeof loadSpecs>;
  /** The image an instance's sandboxes run on (its environment image), built or found before they open. */
  environment?: (inst: SweInstance, spec: RepoSpec) => Promise<string | undefined>;
  /** `--images swebench`: each instance runs on SWE-bench's own image of it (repository at /testbed), evaluated as
   * their harness does; `ensure` makes the image present (pulled from the user's registry) before its sandbox. */
  official?: OfficialImageOptions & { ensure?: (image: string) => Promise<void>; release?: (image: string) => Promise<void> };
  onDone?: (r: SweInstanceResult) => void;
}

interface RunState {
  bundles: BundleCache;
}

interface SweInstanceResult {
  instance_id: string;
  evaluation: Evaluation | null;
  termination?: Termination;
  signals?: ProcessSignals;
  patch: string | null;
  error?: string;
}

async function runInstance(o: SweRunOptions, st: RunState, inst: SweInstance): Promise<SweInstanceResult> {
  const spec = specFor(inst.repo, inst.version, o.specs);
  if (!spec) return { instance_id: inst.instance_id, evaluation: null, patch: null, error: `no spec row for ${inst.repo} version ${inst.version ?? '(none)'}: add one in a --specs file` };
  const labels = { 'grove.swe/instance': inst.instance_id.slice(0, 60), ...(o.runId ? { 'grove.run': o.runId } : {}) };
  if (o.official) return runOfficial(o, o.official, inst, spec, labels);
  const image = o.environment ? await o.environment(inst, spec) : undefined;
  let patch: string | null;
  let termination: Termination | undefined;
  let steps: Parameters<typeof processSignals>[0] = [];
  let recorder: EpisodeRecorder | undefined;
  if (o.mode.kind === 'agent') {
    const mode = o.mode;
    recorder = await EpisodeRecorder.create(path.join(o.outDir, 'episodes', inst.instance_id), {
      episode_id: inst.instance_id,
      run_id: o.runId,
      task: { id: inst.instance_id, suite: 'swe-bench', site: inst.repo, question: inst.problem_statement, extra: { base_commit: inst.base_commit }, flags: [] },
      config: { model: mode.model, max_steps: mode.maxSteps ?? 30, environment: 'shell' },
    });
    const episode = await withSession(o.provider, labels, async (s) => {
      const shell = instanceShell(s.shell);
      await prepareRepo(shell, inst, o.sources, spec, { bundles: st.bundles });
      return runSweEpisode({ shell, instance: inst, policy: mode.policy(), maxSteps: mode.maxSteps, commandTimeoutS: mode.commandTimeoutS, recorder });
    }, image);
    patch = episode.patch;
    termination = episode.termination;
    steps = episode.steps;
  } else {
    patch = o.mode.patches.has(inst.instance_id) ? (o.mode.patches.get(inst.instance_id) ?? null) : null;
  }
  // As SWE-bench: an empty patch is not evaluated (it counts as an empty-patch instance).
  if (!patch?.trim()) return { instance_id: inst.instance_id, evaluation: null, termination, patch, error: 'empty_patch' };
  const evaluation = await withSession(o.provider, { ...labels, 'grove.swe/role': 'eval' }, async (s) => {
    const shell = instanceShell(s.shell);
    await prepareRepo(shell, inst, o.sources, spec, { bundles: st.bundles, install: false });
    return evaluatePatch(shell, inst, spec, patch);
  }, image);
  const signals = o.mode.kind === 'agent' ? processSignals(steps, evaluation.report?.PASS_TO_PASS.failure ?? null) : undefined;
  if (recorder && termination) {
    await recorder.finish({
      termination,
      answer: patch ?? undefined,
      reward: evaluation.resolved ? 1 : 0,
      verdicts: [{
        judge: 'swe-bench',
        outcome: evaluation.resolved ? 'success' : 'failure',
        score: evaluation.resolution === 'FULL' ? 1 : 0,
        reasoning: `${evaluation.resolution}${evaluation.error ? ` (${evaluation.error})` : ''}`,
        details: { ...instanceReport(evaluation)[inst.instance_id] as object, signals },
      }],
    });
  }
  return { instance_id: inst.instance_id, evaluation, termination, signals, patch };
}

/** An instance on its official image: the patch graded by the image's own eval script (agents work in env images). */
async function runOfficial(o: SweRunOptions, official: NonNullable<SweRunOptions['official']>, inst: SweInstance, spec: RepoSpec, labels: Record<string, string>): Promise<SweInstanceResult> {
  if (o.mode.kind !== 'patches') return { instance_id: inst.instance_id, evaluation: null, patch: null, error: 'images_swebench_grades_patches_only' };
  const patch = o.mode.patches.get(inst.instance_id) ?? null;
  if (!patch?.trim()) return { instance_id: inst.instance_id, evaluation: null, patch, error: 'empty_patch' };
  const image = officialImageName(inst, official);
  await official.ensure?.(image);
  try {
    const evaluation = await withSession(o.provider, { ...labels, 'grove.swe/role': 'eval' }, (s) => evaluateInOfficialImage(s.shell, inst, spec, patch), image);
    return { instance_id: inst.instance_id, evaluation, patch };
  } finally {
    await official.release?.(image);
  }
}

export interface SweRunResult {
  results: SweInstanceResult[];
  summary: RunSummary;
}

export async function runSwe(o: SweRunOptions): Promise<SweRunResult> {
  await mkdir(o.outDir, { recursive: true });
  const results: SweInstanceResult[] = [];
  const queue = [...o.instances];
  const st: RunState = { bundles: new BundleCache() };
  const worker = async () => {
    for (let inst = queue.shift(); inst; inst = queue.shift()) {
      let r: SweInstanceResult;
      try {
        r = await runInstance(o, st, inst);
      } catch (err) {
        r = { instance_id: inst.instance_id, evaluation: null, patch: null, error: (err as Error).message };
      }
      results.push(r);
      o.onDone?.(r);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, o.instances.length)) }, worker));
  } finally {
    await st.bundles.close();
  }
  results.sort((a, b) => a.instance_id.localeCompare(b.instance_id));
  const summary = summarize(o.instances.length, results.map((r) => r.evaluation ?? { instance_id: r.instance_id, error: r.error ?? 'failed' }));
  const grove: Record<string, unknown> = {};
  const official: Record<string, unknown> = {};
  const runs = new Map<string, RunOutcome>();
  for (const r of results) {
    const entry = r.evaluation ? officialReport(r.evaluation) : null;
    if (r.evaluation) Object.assign(grove, instanceReport(r.evaluation));
    else grove[r.instance_id] = { resolved: false, resolution: 'NO', error: r.error };
    if (entry) Object.assign(official, entry);
    if (r.signals) (grove[r.instance_id] as Record<string, unknown>).signals = r.signals;
    const resolved = entry ? (entry[r.instance_id] as { resolved: boolean }).resolved : undefined;
    runs.set(r.instance_id, { resolved, logs: [r.evaluation?.test_log ?? '', r.evaluation?.error ?? r.error ?? ''] });
  }
  const model = o.mode.model ?? 'grove';
  const runId = o.runId ?? 'grove';
  // SWE-bench's files: report.json (every instance with a report), <model>.<run_id>.json, and per instance
  // logs/run_evaluation/<run_id>/<model>/<instance_id>/{report.json (when graded), test_output.txt, patch.diff}.
  await writeFile(path.join(o.outDir, 'report.json'), `${JSON.stringify(official, null, 2)}\n`);
  const predictions = new Map(results.map((r) => [r.instance_id, r.patch ?? null] as const));
  const run = officialRunReport(o.instances.map((i) => i.instance_id), predictions, runs);
  await writeFile(path.join(o.outDir, `${model.replaceAll('/', '__')}.${runId}.json`), `${JSON.stringify(run, null, 4)}\n`);
  await writeFile(path.join(o.outDir, 'grove-report.json'), `${JSON.stringify(grove, null, 2)}\n`);
  await writeFile(path.join(o.outDir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  if (o.mode.kind === 'agent') {
    const preds = results.map((r) => ({ instance_id: r.instance_id, model_name_or_path: model, model_patch: r.patch ?? '' }));
    await writeFile(path.join(o.outDir, 'preds.json'), `${JSON.stringify(preds, null, 2)}\n`);
  }
  for (const r of results) {
    if (!r.evaluation) continue;
    const dir = path.join(o.outDir, 'logs', 'run_evaluation', runId, model.replaceAll('/', '__'), r.instance_id);
    await mkdir(dir, { recursive: true });
    const entry = officialReport(r.evaluation);
    if (entry) await writeFile(path.join(dir, 'report.json'), `${JSON.stringify(entry, null, 4)}\n`);
    await writeFile(path.join(dir, 'test_output.txt'), r.evaluation.test_log);
    await writeFile(path.join(dir, 'patch.diff'), r.patch ?? '');
  }
  return { results, summary };
}
