// `grove judge`: score recorded episodes (Grove, WebVoyager or Online-Mind2Web layout) with a benchmark judge,
// resuming where an earlier run stopped; prints success rates overall / by site / by level / by dimension,
// judge_error apart, and the agreement with rule ground truth when episodes carry it.
import { constants, existsSync, statSync } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from '../command.ts';
import type { Task } from '../../protocol/task.ts';
import { failure, intOption, options, parseCommandArgs, STDIO, usageError, type CommandIO } from '../args.ts';
import { loadTaskFile } from '../task-file.ts';
import { LLM_JUDGE_NAMES, isLlmJudge, llmJudgeForSuite } from '../../judges/select.ts';
import { JUDGE_FLAGS_HELP, JUDGE_FLAGS_USAGE, JUDGE_MODEL_FLAGS, judgeModelConfig, parseJudgeModelFlags, type JudgeModelFlags } from './judge-flags.ts';

// The judges, the VLM client and the episode reader load on demand, so `grove --help` stays fast (select.ts is a
// table, not the judges).
const JUDGE_NAMES = LLM_JUDGE_NAMES;

const usage = `grove judge --suite <webvoyager|online-mind2web|deepshop> --episodes DIR
    ${JUDGE_FLAGS_USAGE}
    [--judge ${JUDGE_NAMES.join('|')}] [--tasks FILE] [--out DIR] [--cache DIR | --no-cache]
    [--k N] [--score-threshold N] [--concurrency N] [--retries N] [--timeout-ms N] [--episode-concurrency N]
    [--truth PREFIX] [--json] [--preview [--episode ID]]

Judges every episode folder under DIR (Grove recordings, WebVoyager task<id>/ folders, Online-Mind2Web
<task_id>/ folders). Episodes already judged in <out>/<judge>_results.jsonl are skipped (judge errors are retried).
--tasks joins the suite's task file by id (references, level, DeepShop dimensions). --k: screenshots for the
webvoyager/deepshop judges (default 15; Orchard-GUI's reward uses 3). --score-threshold: WebJudge (default 3).
--out defaults to DIR for Grove recordings and is required for WebVoyager / Online-Mind2Web result folders.
Records (full inputs, raw outputs) go to <episode>/judge/ for Grove episodes, <out>/records/<episode>/ otherwise.
--truth: episodes with a recorded verdict from a judge named PREFIX* (default "rule") feed an agreement report.
--preview: print the requests the judge would send for one episode (the first, or --episode ID) as JSON lines,
images shown by type, size and SHA-256, without calling a model and without writing anything; requests that depend
on an earlier reply (WebJudge's later stages) are shown as a placeholder reply "(preview)" would shape them.
${JUDGE_FLAGS_HELP}
Exit codes: 0 judged, 1 when nothing could be judged (no episodes, every verdict judge_error, unwritable --out),
2 on bad options.`;

const INT_OPTIONS = [['k', 1], ['score-threshold', 1], ['concurrency', 1], ['retries', 0], ['timeout-ms', 1], ['episode-concurrency', 1]] as const;

export async function runJudge(argv: string[], io: CommandIO = STDIO, opts: { fetch?: typeof fetch } = {}): Promise<number> {
  const u = { usage, io, name: 'judge' };
  const parsed = parseCommandArgs(
    {
      args: argv,
      options: options(
        ['suite', 'episodes', 'judge', 'tasks', 'out', 'cache', ...JUDGE_MODEL_FLAGS, ...INT_OPTIONS.map(([f]) => f), 'truth', 'episode'],
        ['no-cache', 'json', 'preview'],
      ),
    },
    u,
  );
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  const bad = (msg: string) => usageError(u, msg);
  const { Suite } = await import('../../protocol/task.ts');
  const suite = Suite.safeParse(values.suite);
  if (!suite.success) return bad('--suite is required: webvoyager, online-mind2web or deepshop');
  const judgeName = values.judge ?? llmJudgeForSuite(suite.data);
  if (!judgeName || !isLlmJudge(judgeName)) {
    return bad(`--judge must be one of ${JUDGE_NAMES.join(', ')} (no default for suite ${suite.data})`);
  }
  if (!values.episodes) return bad('--episodes DIR is required');
  let flags: JudgeModelFlags;
  try {
    flags = parseJudgeModelFlags(values);
  } catch (err) {
    return bad((err as Error).message);
  }
  if (values.preview) {
    // Nothing is sent: the endpoint only has to be named for the request body's model field.
    flags = { ...flags, baseURL: flags.baseURL ?? 'http://preview.invalid/v1', model: flags.model ?? 'judge-model' };
  }
  if (!flags.baseURL || !flags.model) {
    return bad('the judge model is configured on its own: --judge-url URL and --judge-model NAME are required');
  }
  const nums: Record<string, number | undefined> = {};
  for (const [flag, min] of INT_OPTIONS) {
    const v = intOption(values[flag], flag, min);
    if (v instanceof Error) return bad(v.message);
    nums[flag] = v;
  }
  if (nums['score-threshold'] !== undefined && nums['score-threshold'] > 5) return bad('--score-threshold must be between 1 and 5');
  if (!existsSync(values.episodes) || !statSync(values.episodes).isDirectory()) {
    return failure(u, `--episodes ${values.episodes}: no such directory`);
  }
  const [{ createJudge, fileCache, formatAgreement, formatReport, JudgeModel, loadPromptDir, PromptDirError }, { judgeEpisodes }, { findEpisodes }, { readEnvSetting }] =
    await Promise.all([import('../../judges/index.ts'), import('../../judges/run.ts'), import('../../recording/reader.ts'), import('../../sandbox/config.ts')]);
  let prompts;
  try {
    prompts = flags.promptsDir ? await loadPromptDir(flags.promptsDir) : undefined;
  } catch (err) {
    if (err instanceof PromptDirError) return bad(err.message);
    throw err;
  }

  let tasks: Map<string, Task> | undefined;
  if (values.tasks) {
    const res = await loadTaskFile(io, 'judge', suite.data, values.tasks);
    if (res === 1) return 1;
    tasks = new Map(res.tasks.map((t) => [t.id, t]));
    if (res.issues.length) io.err(`${values.tasks}: ${res.issues.length} unusable rows ignored\n`);
  }

  if (values.preview) {
    const { previewJudge } = await import('./judge-preview.ts');
    return previewJudge({ io, suite: suite.data, episodesDir: values.episodes, episode: values.episode, tasks, flags, prompts, judgeName, k: nums.k, scoreThreshold: nums['score-threshold'] });
  }
  if (values.out === undefined) {
    // Results go beside Grove recordings (our own run folders); foreign result folders are not ours to write into.
    const foreign = (await findEpisodes(values.episodes)).filter((e) => e.layout !== 'grove');
    if (foreign.length) {
      return bad(`--out DIR is required for ${foreign[0].layout}-layout result folders (e.g. ${foreign[0].id}): results are not written into them`);
    }
  }
  const outDir = values.out ?? values.episodes;
  try {
    await mkdir(outDir, { recursive: true });
    await access(outDir, constants.W_OK);
  } catch {
    return failure(u, `cannot write results to ${outDir}${values.out ? '' : ' (the episodes folder); choose a writable --out DIR'}`);
  }
  const cache = values['no-cache'] ? undefined : fileCache(values.cache ?? join(outDir, '.judge-cache'));
  let model: InstanceType<typeof JudgeModel>;
  try {
    model = new JudgeModel(
      {
        // Keys stay out of argv when possible: the environment is read through sandbox/config.ts.
        ...judgeModelConfig(flags, readEnvSetting('GROVE_JUDGE_API_KEY') ?? readEnvSetting('OPENAI_API_KEY')),
        concurrency: nums.concurrency,
        retries: nums.retries,
        timeoutMs: nums['timeout-ms'],
      },
      { cache, fetch: opts.fetch },
    );
  } catch (err) {
    return bad(`invalid judge model settings: ${(err as Error).message}`);
  }
  const judge = createJudge(judgeName, { model, k: nums.k, scoreThreshold: nums['score-threshold'], cache, prompts });

  let done = 0;
  const res = await judgeEpisodes({
    judge,
    suite: suite.data,
    episodesDir: values.episodes,
    outDir,
    recordsBesideGrove: values.out === undefined,
    tasks,
    concurrency: nums['episode-concurrency'],
    truthPrefix: values.truth,
    onResult: (l) => {
      done++;
      io.err(`[${done}] ${l.episode}: ${l.outcome}${l.outcome === 'judge_error' ? ` (${l.error_kind ?? 'error'}: ${l.reasoning ?? ''})` : ''}\n`);
    },
  });
  for (const u of res.unreadable) io.err(`${u.id}: not judged: ${u.error}\n`);
  if (res.lines.length === 0 && res.unreadable.length === 0) {
    return failure(u, `no episodes found under ${values.episodes} (expected episode.json, task<id>/interact_messages.json or <task_id>/result.json + trajectory/)`);
  }
  if (values.json) {
    io.out(`${JSON.stringify({ report: res.report, agreement: res.agreement, results: res.resultsFile, judged: res.judged.length, resumed: res.resumed })}\n`);
  } else {
    io.out(`${formatReport(res.report)}\n`);
    if (res.agreement) io.out(`\n${formatAgreement(judge.name, `${values.truth ?? 'rule'}* verdicts`, res.agreement)}\n`);
    io.out(`\njudged ${res.judged.length}, resumed ${res.resumed}; results: ${res.resultsFile}\n`);
  }
  // Nothing was scored: the judge model is unreachable or misconfigured, whatever the report says.
  const errors = res.lines.filter((l) => l.outcome === 'judge_error').length;
  if (res.lines.length > 0 && errors === res.lines.length) {
    return failure(u, `every verdict is judge_error (${errors} of ${res.lines.length}): check --judge-url, --judge-model and the key`);
  }
  return 0;
}

export const judgeCommand: Command = {
  name: 'judge',
  summary: 'Score recorded episodes with a benchmark judge (WebVoyager, WebJudge, DeepShop); resumable',
  usage,
  run: (argv: string[]) => runJudge(argv),
};
