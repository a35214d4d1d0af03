// `grove export`: recorded episodes → Online-Mind2Web / WebVoyager result layouts, SFT samples, or animations.
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from '../command.ts';
import { TERMINATION_REASONS, type TerminationReason } from '../../protocol/task.ts';
import { readAll, readEpisode, detectLayout, type EpisodeView } from '../../recording/reader.ts';
import { exportAnimation, exportOnlineMind2Web, exportSft, exportWebVoyager, keepEpisode } from '../../recording/export/index.ts';
import { safeName } from '../../recording/export/common.ts';
import { failure, list, options, parseCommandArgs, STDIO, usageError, type CommandIO } from '../args.ts';

const FORMATS = ['online-mind2web', 'webvoyager', 'sft', 'webp', 'gif'] as const;

const usage = `grove export --format <${FORMATS.join('|')}> --out OUT DIR

Reads every episode under DIR (or DIR itself) and writes:
  online-mind2web  OUT/<task_id>/result.json + trajectory/NNNN.png   (--schema v2 (default) | v1)
  webvoyager       OUT/task<id>/interact_messages.json + screenshot<k>.png
  sft              OUT/samples.jsonl (+ OUT/images/): OpenAI chat samples, assistant turns printed in
                   --policy-format NAME (a vlm-client format); --mode step|episode; --images files|data-url;
                   --history N previous actions in step samples (default 8)
  webp | gif       OUT/<episode>.webp|gif: an animation with the actions drawn (--width PX, --delay MS)
Filters (all formats): --termination R[,R]  --min-reward X  --success-only  --episode ID[,ID]
Only complete episodes are exported. One result per task for the benchmark layouts: later episodes of the
same task are skipped (reported) unless --overwrite, which keeps the last.
Animations print their progress on stderr, one line per episode.
Exit codes: 0 done, 1 when DIR holds no episode or an episode could not be exported, 2 on bad options.`;

export async function runExport(argv: string[], io: CommandIO = STDIO): Promise<number> {
  const u = { usage, io, name: 'export' };
  const parsed = parseCommandArgs(
    {
      args: argv,
      options: options(
        ['format', 'out', 'schema', 'policy-format', 'mode', 'images', 'history', 'width', 'delay', 'termination', 'min-reward', 'episode'],
        ['success-only', 'overwrite'],
      ),
      allowPositionals: true,
    },
    u,
  );
  if (typeof parsed === 'number') return parsed;
  const values: Record<string, string | boolean | undefined> = parsed.values;
  const { positionals } = parsed;
  const bad = (msg: string) => usageError(u, msg);
  const format = values.format as (typeof FORMATS)[number];
  if (!FORMATS.includes(format)) return bad(`--format must be one of ${FORMATS.join(', ')}`);
  const out = values.out as string | undefined;
  if (!out) return bad('--out OUT is required');
  const dir = positionals[0];
  if (!dir || positionals.length > 1) return bad('exactly one DIR is required');
  const termination = list(values.termination as string | undefined);
  for (const t of termination ?? []) if (!TERMINATION_REASONS.includes(t as TerminationReason)) return bad(`--termination: unknown reason "${t}" (${TERMINATION_REASONS.join(', ')})`);
  const minReward = values['min-reward'] === undefined ? (values['success-only'] ? Number.MIN_VALUE : undefined) : Number(values['min-reward']);
  if (minReward !== undefined && !Number.isFinite(minReward)) return bad('--min-reward: expected a number');
  const num = (k: string, d: number) => (values[k] === undefined ? d : Number(values[k]));
  for (const k of ['history', 'width', 'delay']) if (!Number.isFinite(num(k, 0)) || num(k, 0) < 0) return bad(`--${k}: expected a non-negative number`);
  if (values.schema !== undefined && values.schema !== 'v1' && values.schema !== 'v2') return bad('--schema must be v1 or v2');
  if (values.mode !== undefined && values.mode !== 'step' && values.mode !== 'episode') return bad('--mode must be step or episode');
  if (values.images !== undefined && values.images !== 'files' && values.images !== 'data-url') return bad('--images must be files or data-url');
  if (format === 'sft' && !values['policy-format']) return bad('--policy-format NAME is required for sft');

  if (!(await stat(dir).then((s) => s.isDirectory(), () => false))) return failure(u, `${dir}: no such directory`);
  let views: EpisodeView[];
  if (await detectLayout(dir)) views = [await readEpisode(dir)];
  else {
    const all = await readAll(dir);
    for (const e of all.errors) io.err(`grove export: skipped unreadable episode ${e.id}: ${e.error}\n`);
    views = all.episodes;
    if (views.length === 0) return failure(u, `no episodes found under ${dir}${all.errors.length ? ` (${all.errors.length} unreadable)` : ''}`);
  }
  const ids = list(values.episode as string | undefined);
  if (ids) views = views.filter((v) => ids.includes(v.id) || ids.includes(v.meta.episode_id));
  const filter = { termination: termination as TerminationReason[] | undefined, minReward };
  const kept = views.filter((v) => keepEpisode(v, filter));
  io.err(`${kept.length} of ${views.length} episodes pass the filters\n`);
  await mkdir(out, { recursive: true });

  if (format === 'sft') {
    const r = await exportSft(kept, out, {
      format: values['policy-format'] as string,
      mode: values.mode as 'step' | 'episode' | undefined,
      images: values.images as 'files' | 'data-url' | undefined,
      history: num('history', 8),
    });
    io.out(`${r.samples} samples from ${r.episodes} episodes → ${r.file} (${r.skipped_steps} steps left out)\n`);
    return 0;
  }
  let failed = 0;
  const seen = new Set<string>();
  for (const [i, v] of kept.entries()) {
    try {
      if (format === 'online-mind2web' || format === 'webvoyager') {
        if (seen.has(v.task.id) && !values.overwrite) {
          io.err(`grove export: skipped ${v.id}: task ${v.task.id} was already exported from another episode\n`);
          continue;
        }
        seen.add(v.task.id);
        const r = format === 'online-mind2web'
          // Folders left by an earlier export into OUT are replaced; duplicates within this export were handled above.
          ? await exportOnlineMind2Web(v, out, { schema: values.schema as 'v1' | 'v2' | undefined, overwrite: true })
          : await exportWebVoyager(v, out, { overwrite: true });
        io.out(`${r.dir}\n`);
      } else {
        // An animation takes seconds per step (every frame drawn and encoded): say what is being worked on.
        io.err(`[${i + 1}/${kept.length}] ${v.id}: ${v.steps.length} steps → ${format}\n`);
        const bytes = await exportAnimation(v, { format, width: num('width', 640), delayMs: num('delay', 900) });
        const file = join(out, `${safeName(v.id.replace(/\//g, '__'))}.${format}`);
        await writeFile(file, bytes);
        io.out(`${file}\n`);
      }
    } catch (err) {
      failed++;
      io.err(`grove export: could not export ${v.id}: ${(err as Error).message}\n`);
    }
  }
  return failed ? 1 : 0;
}

export const exportCommand: Command = {
  name: 'export',
  summary: 'Export recorded episodes to Online-Mind2Web / WebVoyager layouts, SFT samples or animated WebP/GIF',
  usage,
  run: (argv) => runExport(argv),
};
