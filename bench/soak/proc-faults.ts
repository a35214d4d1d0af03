// The process faults: a renderer or a whole browser SIGKILLed, the server SIGKILLed and restarted.
import type { ProcFault } from './config.ts';
import { ourChromium, startGrove } from './grove-process.ts';
import { inc, run, stats } from './state.ts';

export async function injectProcFault(f: ProcFault): Promise<void> {
  const chromium = ourChromium();
  if (f === 'kill_renderer') {
    // Chromium rewrites a child's argv into one string (setproctitle): look inside it.
    const renderers = chromium.filter((c) => c.args.join(' ').includes('--type=renderer'));
    if (!killOne(renderers)) return;
  } else if (f === 'kill_browser') {
    const roots = chromium.filter((c) => c.args.some((a) => a.startsWith('--grove-pool=')) && !c.args.join(' ').includes('--type='));
    run.lastBrowserKillAt = Date.now();
    if (!killOne(roots)) return;
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

/**
 * SIGKILLs one of `candidates`, picked at random; one that exited since it was listed (ESRCH: a renderer whose
 * tab just closed) is passed over for another. False when none was left to kill.
 */
function killOne(candidates: Array<{ pid: number }>): boolean {
  const order = [...candidates].sort(() => Math.random() - 0.5);
  for (const c of order) {
    try {
      process.kill(c.pid, 'SIGKILL');
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
    }
  }
  return false;
}
