// A process that starts a Claw-Eval trial's services (the fixture checkout's N01) and then waits to be killed: the
// parent-death test kills it with SIGKILL and checks that nothing it started outlives it.
import path from 'node:path';
import { prepareClawEvalCheckout } from '../../../claw-env/claw-eval/host.ts';
import { ClawEvalServiceSet, serviceStartBudgetMs } from '../../../claw-env/claw-eval/services.ts';
import { Progress } from '../../../sandbox/progress.ts';

const [root, cacheDir, indexUrl] = process.argv.slice(2);
const p = await prepareClawEvalCheckout({ dir: root!, cacheDir: cacheDir!, indexUrl: indexUrl || undefined });
const task = p.tasks.find((t) => t.id === 'N01_notes_summary')!;
const services = new ClawEvalServiceSet(task, { root: p.root, python: p.python, driver: p.driver });
await services.start(Progress.after(serviceStartBudgetMs(task)));
process.stdout.write(`${JSON.stringify({ ready: true, driver: p.driver, driverDir: path.dirname(p.driver) })}\n`);
setInterval(() => undefined, 60_000);
