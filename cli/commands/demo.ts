// `grove demo` (npm run demo): the whole offline suite with the scripted policy against an embedded Grove
// server and the offline sites, judged by the rule judges. Exit 0 only when every episode succeeded.
import { readdirSync, readFileSync } from 'node:fs';
import { intOption, listFilters, options, parseCommandArgs, STDIO, valueError } from '../args.ts';
import type { Command } from '../command.ts';
import type { RunArgs } from './run-args.ts';

const usage = `grove demo [--out DIR] [--concurrency N] [--ids ID[,ID]] [--site S[,S]]

Starts a Grove server in this process (loopback, generated API key) and the offline sites (shop, recipes,
forms), runs every offline task with the scripted policy, judges each episode with the rule judges, and
prints the summary table and where the report (report.html) and the recordings are.
Exit code 0 when every episode succeeded, 1 otherwise. Default --out: runs/demo-<time>.`;

/** Chromium processes that are still children of this process (Linux /proc; empty elsewhere). */
function leftoverChromium(): string[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the parenthesised command: state, ppid, …
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (Number(rest[1]) === process.pid && /chrom/i.test(comm) && rest[0] !== 'Z') out.push(`${pid} ${comm}`);
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

export const demo: Command = {
  name: 'demo',
  summary: 'Run the offline suite with the scripted policy, judged, with a report (the quick tour)',
  usage,
  async run(argv) {
    const u = { usage, io: STDIO, name: 'demo' };
    const parsed = parseCommandArgs({ args: argv, options: options(['out', 'concurrency', 'ids', 'site']) }, u);
    if (typeof parsed === 'number') return parsed;
    const { values } = parsed;
    const concurrency = intOption(values.concurrency, 'concurrency', 1) ?? 4;
    if (concurrency instanceof Error) return valueError(u, concurrency.message);
    const args: RunArgs = {
      suite: 'offline',
      policy: 'scripted',
      judge: 'rule',
      judgeAll: true,
      concurrency,
      maxSteps: 40,
      episodeTimeoutSec: 180,
      out: values.out ?? `runs/demo-${new Date().toISOString().replace(/[:.]/g, '-').replace(/Z$/, '')}`,
      resume: false,
      ...listFilters(values),
    };
    const { executeRun, printRunResult } = await import('./run-exec.ts');
    const ctl = new AbortController();
    const onSig = () => ctl.abort('interrupted (SIGINT)');
    process.once('SIGINT', onSig);
    const t0 = Date.now();
    try {
      process.stderr.write(`grove demo: offline suite, scripted policy, rule judges, concurrency ${concurrency}\n`);
      const r = await executeRun(args, { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s), progress: process.stderr }, { signal: ctl.signal });
      printRunResult(r, { out: (s) => process.stdout.write(s) });
      const s = r.summary;
      const bad = s.episodes.filter((e) => e.success !== true);
      const leaked = leftoverChromium();
      if (leaked.length) process.stdout.write(`Chromium still running after shutdown: ${leaked.join(', ')}\n`);
      process.stdout.write(`demo finished in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${s.succeeded}/${s.total} episodes succeeded\n`);
      if (bad.length || s.finished !== s.total || leaked.length) {
        for (const e of bad) {
          const v = e.verdicts[0];
          process.stdout.write(`  NOT OK ${e.task_id}: ${e.termination.reason}${e.termination.detail ? ` (${e.termination.detail})` : ''}${v ? `; ${v.judge}: ${v.outcome}${v.reasoning ? ` — ${v.reasoning}` : ''}` : ''}\n`);
        }
        return 1;
      }
      return 0;
    } catch (err) {
      process.stderr.write(`grove demo: ${(err as Error).stack ?? String(err)}\n`);
      return 1;
    } finally {
      process.off('SIGINT', onSig);
    }
  },
};
