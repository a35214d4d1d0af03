// The process faults: a renderer or a whole browser SIGKILLed, the server SIGKILLed and restarted.
import type { ProcFault } from './config.ts';
import { ourChromium, startGrove } from './grove-process.ts';
import { inc, run, stats } from './state.ts';

export async function injectProcFault(f: ProcFault): Promise<void> {
  const chromium = ourChromium();
  if (f === 'kill_renderer') {
    // Chromium rewrites a child's argv into one string (setproctitle): look inside it.
    const renderers = chromium.filter((c) => c.args.join(' ').includes('--type=renderer'));
    const victim = renderers[Math.floor(Math.random() * renderers.length)];
    if (!victim) return;
    process.kill(victim.pid, 'SIGKILL');
  } else if (f === 'kill_browser') {
    const roots = chromium.filter((c) => c.args.some((a) => a.startsWith('--grove-pool=')) && !c.args.join(' ').includes('--type='));
    const victim = roots[Math.floor(Math.random() * roots.length)];
    if (!victim) return;
    run.lastBrowserKillAt = Date.now();
    process.kill(victim.pid, 'SIGKILL');
  } else {
    run.restarting = (async () => {
      const old = run.server.proc;
      const exited = new Promise((r) => old.once('exit', r));
      old.kill('SIGKILL');
      await exited;
      run.epoch++;
      run.server = await startGrove();
    })();
    await run.restarting;
    run.restarting = null;
  }
  inc(stats.injected, f);
}
