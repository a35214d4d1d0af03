// A process that starts a Claw-Eval trial's services (the fixture checkout's N01) under the limits `grove claw run
// --claw-eval` gives them (cli/commands/claw-eval-limits.ts: a shell environment in DATA_DIR), then waits to be
// killed: the parent-death test kills it with SIGKILL and checks that nothing it made outlives it.
import { prepareClawEvalCheckout } from '../../../claw-env/claw-eval/host.ts';
import { ClawEvalServiceSet, serviceStartBudgetMs } from '../../../claw-env/claw-eval/services.ts';
import { openClawEvalServiceLimits } from '../../../cli/commands/claw-eval-limits.ts';
import { loadConfig } from '../../../sandbox/config.ts';
import { silentLogger } from '../../../sandbox/log.ts';
import { Progress } from '../../../sandbox/progress.ts';

const [root, cacheDir, indexUrl, dataDir] = process.argv.slice(2);
const p = await prepareClawEvalCheckout({ dir: root!, cacheDir: cacheDir!, indexUrl: indexUrl || undefined });
const limits = await openClawEvalServiceLimits(loadConfig({ env: {}, flags: { dataDir: dataDir! } }), silentLogger);
if (!limits.confine) throw new Error(`no limits: ${limits.missing}`);
const task = p.tasks.find((t) => t.id === 'N01_notes_summary')!;
const services = new ClawEvalServiceSet(task, { root: p.root, python: p.python, driver: p.driver, confine: limits.confine });
await services.start(Progress.after(serviceStartBudgetMs(task)));
process.stdout.write(`${JSON.stringify({ ready: true, driver: p.driver })}\n`);
setInterval(() => undefined, 60_000);
