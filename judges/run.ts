// Judging recorded episodes in bulk (used by `grove judge`): finds episodes of any layout under a folder,
// skips those already judged in the results file (resume), judges the rest with bounded concurrency, appends one
// result line per episode, and builds the report. Judge errors are re-attempted on the next run.
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Suite, Task } from '../protocol/task.ts';
import { findEpisodes, readEpisode, type EpisodeView } from '../recording/reader.ts';
import type { Logger } from '../sandbox/log.ts';
import { silentLogger } from '../sandbox/log.ts';
import { judgeInputFromEpisode } from './episodes.ts';
import { computeAgreement, type AgreementReport } from './agreement.ts';
import { buildReport, resultLine, type JudgeReport, type JudgeResultLine } from './report.ts';
import type { Judge } from './types.ts';

export interface JudgeEpisodesOptions {
  judge: Judge;
  suite: Suite;
  episodesDir: string;
  /** Results file and foreign-layout records go here (default: episodesDir). */
  outDir?: string;
  /** Grove episodes get their record beside them (<episode>/judge/) unless this is false. */
  recordsBesideGrove?: boolean;
  tasks?: Map<string, Task>;
  /** Episodes judged at once (each judge bounds its own model calls too). Default 4. */
  concurrency?: number;
  log?: Logger;
  onResult?: (line: JudgeResultLine, skipped: boolean) => void;
  /**
   * Ground truth for the agreement report: the first verdict recorded in the episode whose judge name starts
   * with this prefix (rule judges record themselves as "rule:<site>"). Default "rule".
   */
  truthPrefix?: string;
}

export interface JudgeEpisodesResult {
  resultsFile: string;
  judged: JudgeResultLine[];
  /** Episodes skipped because an earlier run judged them. */
  resumed: number;
  /** Folders that could not be read as episodes. */
  unreadable: { id: string; error: string }[];
  /** The latest line per episode found now, the report's input. */
  lines: JudgeResultLine[];
  report: JudgeReport;
  /** Present when some episodes carry a ground-truth verdict. */
  agreement?: AgreementReport;
}

const resultsFileName = (judge: string) => `${judge.replace(/[^\w.-]+/g, '_')}_results.jsonl`;

async function readResults(file: string): Promise<JudgeResultLine[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return [];
  }
  const out: JudgeResultLine[] = [];
  for (const l of text.split('\n')) {
    if (!l.trim()) continue;
    try {
      out.push(JSON.parse(l) as JudgeResultLine);
    } catch {
      // A line torn by an interrupted run: that episode is judged again.
    }
  }
  return out;
}

export async function judgeEpisodes(opts: JudgeEpisodesOptions): Promise<JudgeEpisodesResult> {
  const log = opts.log ?? silentLogger;
  const outDir = opts.outDir ?? opts.episodesDir;
  const resultsFile = join(outDir, resultsFileName(opts.judge.name));
  await mkdir(outDir, { recursive: true });
  const previous = new Map<string, JudgeResultLine>();
  for (const l of await readResults(resultsFile)) previous.set(l.episode, l);

  const found = await findEpisodes(opts.episodesDir);
  const todo = found.filter((f) => {
    const p = previous.get(f.id);
    return !p || p.outcome === 'judge_error';
  });
  const unreadable: { id: string; error: string }[] = [];
  const judged: JudgeResultLine[] = [];
  let next = 0;
  // Appends are serialised so concurrent episodes never interleave a line.
  let appendChain: Promise<void> = Promise.resolve();
  const worker = async () => {
    while (next < todo.length) {
      const f = todo[next++];
      let view: EpisodeView;
      try {
        view = await readEpisode(f.dir, f.id);
      } catch (err) {
        unreadable.push({ id: f.id, error: (err as Error).message });
        continue;
      }
      const recordDir =
        view.layout === 'grove' && opts.recordsBesideGrove !== false ? join(view.dir, 'judge') : join(outDir, 'records', f.id === '.' ? '_root' : f.id);
      const input = judgeInputFromEpisode(view, { suite: opts.suite, tasks: opts.tasks, recordDir });
      const verdict = await opts.judge.judge(input);
      const prefix = opts.truthPrefix ?? 'rule';
      const truth = view.meta.verdicts.find((v) => v.judge.startsWith(prefix) && v.judge !== opts.judge.name);
      const line = resultLine(
        {
          episode: f.id,
          layout: view.layout,
          task_id: input.task.id,
          task: input.task.question,
          suite: input.task.suite,
          site: input.task.site,
          level: input.task.level,
        },
        verdict,
      );
      if (truth) {
        line.truth = truth.outcome;
        line.truth_judge = truth.judge;
      }
      judged.push(line);
      previous.set(f.id, line);
      opts.onResult?.(line, false);
      log.info({ episode: f.id, outcome: line.outcome }, 'judged');
      appendChain = appendChain.then(() => appendFile(resultsFile, `${JSON.stringify(line)}\n`));
      await appendChain;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 4) }, worker));
  const lines = found.map((f) => previous.get(f.id)).filter((l): l is JudgeResultLine => l !== undefined);
  const withTruth = lines.filter((l) => l.truth !== undefined);
  return {
    agreement: withTruth.length ? computeAgreement(withTruth.map((l) => ({ predicted: l.outcome, truth: l.truth! }))) : undefined,
    resultsFile,
    judged,
    resumed: found.length - todo.length,
    unreadable,
    lines,
    report: buildReport(opts.judge.name, lines),
  };
}
