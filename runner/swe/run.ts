// `grove swe run`: SWE-bench instances in shell sandboxes. For each instance, either an agent episode (a bash
// policy through vlm-client, recorded like a browser episode) produces the patch, or the patch comes from a
// predictions file; then a fresh sandbox at the base commit evaluates it as SWE-bench's harness does. Writes
// preds.json (agent runs), report.json (per instance), summary.json, and the episodes with their process signals.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EpisodeRecorder } from '../../recording/recorder.ts';
import type { Termination } from '../../protocol/task.ts';
import { evaluatePatch, type Evaluation } from '../../swe-env/evaluate.ts';
import { instanceReport, summarize, type RunSummary } from '../../swe-env/preds.ts';
import { prepareRepo } from '../../swe-env/repo.ts';
import { processSignals, type ProcessSignals } from '../../swe-env/signals.ts';
import { specFor } from '../../swe-env/specs.ts';
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
  onDone?: (r: SweInstanceResult) => void;
}

interface SweInstanceResult {
  instance_id: string;
  evaluation: Evaluation | null;
  termination?: Termination;
  signals?: ProcessSignals;
  patch: string | null;
  error?: string;
}

async function runInstance(o: SweRunOptions, inst: SweInstance): Promise<SweInstanceResult> {
  const spec = specFor(inst.repo, inst.version);
  if (!spec) return { instance_id: inst.instance_id, evaluation: null, patch: null, error: `no test specification for ${inst.repo} (swe-env/specs.ts)` };
  const labels = { 'grove.swe/instance': inst.instance_id.slice(0, 60), ...(o.runId ? { 'grove.run': o.runId } : {}) };
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
      await prepareRepo(s.shell, inst, o.sources, spec);
      return runSweEpisode({ shell: s.shell, instance: inst, policy: mode.policy(), maxSteps: mode.maxSteps, commandTimeoutS: mode.commandTimeoutS, recorder });
    });
    patch = episode.patch;
    termination = episode.termination;
    steps = episode.steps;
  } else {
    patch = o.mode.patches.has(inst.instance_id) ? (o.mode.patches.get(inst.instance_id) ?? null) : null;
  }
  const evaluation = await withSession(o.provider, { ...labels, 'grove.swe/role': 'eval' }, async (s) => {
    await prepareRepo(s.shell, inst, o.sources, spec);
    return evaluatePatch(s.shell, inst, spec, patch);
  });
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

export interface SweRunResult {
  results: SweInstanceResult[];
  summary: RunSummary;
}

export async function runSwe(o: SweRunOptions): Promise<SweRunResult> {
  await mkdir(o.outDir, { recursive: true });
  const results: SweInstanceResult[] = [];
  const queue = [...o.instances];
  const worker = async () => {
    for (let inst = queue.shift(); inst; inst = queue.shift()) {
      let r: SweInstanceResult;
      try {
        r = await runInstance(o, inst);
      } catch (err) {
        r = { instance_id: inst.instance_id, evaluation: null, patch: null, error: (err as Error).message };
      }
      results.push(r);
      o.onDone?.(r);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, o.instances.length)) }, worker));
  results.sort((a, b) => a.instance_id.localeCompare(b.instance_id));
  const summary = summarize(o.instances.length, results.map((r) => r.evaluation ?? { instance_id: r.instance_id, error: r.error ?? 'failed' }));
  const report: Record<string, unknown> = {};
  for (const r of results) {
    if (r.evaluation) Object.assign(report, instanceReport(r.evaluation));
    else report[r.instance_id] = { resolved: false, resolution: 'NO', error: r.error };
    if (r.signals) (report[r.instance_id] as Record<string, unknown>).signals = r.signals;
  }
  await writeFile(path.join(o.outDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(path.join(o.outDir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  if (o.mode.kind === 'agent') {
    const model = o.mode.model;
    const preds = results.map((r) => ({ instance_id: r.instance_id, model_name_or_path: model, model_patch: r.patch ?? '' }));
    await writeFile(path.join(o.outDir, 'preds.json'), `${JSON.stringify(preds, null, 2)}\n`);
  }
  await mkdir(path.join(o.outDir, 'logs'), { recursive: true });
  for (const r of results) if (r.evaluation) await writeFile(path.join(o.outDir, 'logs', `${r.instance_id}.test_output.txt`), r.evaluation.test_log);
  return { results, summary };
}
