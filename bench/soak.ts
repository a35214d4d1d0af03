// Soak (issue 8): episodes at concurrency on the offline sites with injected faults — renderer and browser killed
// mid-step, busy loops started mid-settle, pages that never finish loading, dialog storms, popup storms, large
// downloads, the server SIGKILLed and restarted mid-run. Reports episodes lost without attribution, steps that
// exceeded their deadline, leaked processes and temp folders, and the server's RSS and heap over the run (the heap
// growth judged is the live heap after full collections, server/heap-live.ts; heapUsed as sampled is printed beside it).
//
//   npm run soak                       60 minutes at concurrency 16 (every fault ≥ 20 times)
//   npm run soak -- --minutes 5        a shorter run       --ci: 2 minutes at concurrency 4 (the slow test)
//   --json FILE                        also write the summary (default bench/results/soak[-ci].json)
//   --heap-snapshots DIR               a diagnostic run: the server's heap is snapshotted into DIR at the start of
//                                      the second half and a minute before the end (both with episodes running:
//                                      compare them with bench/heap-diff.ts), and after the end (no sandbox left);
//                                      each snapshot stops the server for seconds (once 88 s): steps that overlap one
//                                      are counted apart from the steps over their deadline
//   --server-cpu-prof DIR              a diagnostic run: every server writes a CPU profile (10 ms samples) into DIR
//                                      when it exits (not the SIGKILLed ones): which code ran during its stalls
//
// Event-loop stalls: the server's (≥ 1 s late; how many while its loop's thread ran, i.e. its own synchronous work,
// server/loop-stalls.ts), this soak's own, and an idle Node process's beside them (soak/reference-loop.ts).
//
// Fault schedule: renderer and browser kills alternate every KILL_PERIOD over the whole run; the server restarts
// RESTARTS times, evenly, in the first RESTART_WINDOW of the run, so the rest of the run is one server process and
// its heap growth over the second half measures that process, not a fresh one. Page faults go to every other
// episode, in rotation. The injections per fault are printed and checked against the target (≥ 20 in the full run).
import { mkdirSync, rmSync } from 'node:fs';
import { followLoopStalls } from '../server/loop-stalls.ts';
import { startSites } from '../sites/server.ts';
import { CI, CONC, KILL_PERIOD_MS, MINUTES, RESTARTS, RESTART_WINDOW, SNAPSHOTS, sleep, soakDir, type ProcFault } from './soak/config.ts';
import { episode } from './soak/episode.ts';
import { startReferenceLoop } from './soak/reference-loop.ts';
import { startFaultServer } from './soak/fault-pages.ts';
import { heapSnapshot, leakedProcesses, leftoverFolders, startGrove } from './soak/grove-process.ts';
import { sampleMemory } from './soak/memory.ts';
import { injectProcFault } from './soak/proc-faults.ts';
import { run, stats } from './soak/state.ts';
import { summarize } from './soak/summary.ts';

// The parts live in bench/soak/ (bench/soak/README.md); this file runs them.
async function main(): Promise<void> {
  const sites = await startSites({ port: 0 });
  run.sitesUrl = sites.url.replace(/\/+$/, '');
  const faults = await startFaultServer();
  run.faultUrl = faults.url;
  run.server = await startGrove();
  // The soak's own event loop: a step it times while it was stalled itself (no CPU, a blocked write) runs long on
  // its clock, not necessarily on the server's; the summary shows both.
  followLoopStalls();
  // An idle Node process beside them: a server stall it shares was the machine's (soak/reference-loop.ts).
  const reference = startReferenceLoop();
  const t0 = Date.now();
  const end = t0 + MINUTES * 60_000;
  console.log(
    `soak: ${MINUTES} min at concurrency ${CONC}; renderer/browser kills every ${KILL_PERIOD_MS / 1000} s, ${RESTARTS} server restarts in the first ${RESTART_WINDOW * 100} %; in ${soakDir}`,
  );
  await sampleMemory();
  const memTimer = setInterval(() => void sampleMemory(), CI ? 5000 : 30_000);
  const inject = (f: ProcFault) => injectProcFault(f).catch((e: unknown) => console.log(`fault injection ${f} failed:`, e));
  // Each injection has its own time (t0 + i × period): a slow one does not push the later ones out of the run.
  const killLoop = (async () => {
    for (let i = 1; t0 + i * KILL_PERIOD_MS < end - KILL_PERIOD_MS / 2; i++) {
      await sleep(t0 + i * KILL_PERIOD_MS - Date.now());
      if (run.restarting) await run.restarting;
      await inject(i % 2 === 1 ? 'kill_renderer' : 'kill_browser');
    }
  })();
  const restartLoop = (async () => {
    const gap = (MINUTES * 60_000 * RESTART_WINDOW) / (RESTARTS + 1);
    for (let i = 1; i <= RESTARTS; i++) {
      await sleep(t0 + i * gap - Date.now());
      await inject('server_restart');
    }
  })();
  const faultLoop = Promise.all([killLoop, restartLoop]);
  const snapshots = (async () => {
    if (!SNAPSHOTS) return;
    mkdirSync(SNAPSHOTS, { recursive: true });
    await sleep(t0 + (end - t0) / 2 - Date.now());
    await heapSnapshot('second half starts');
    // A minute before the end the episodes still run: this one compares with the first at the same load (16
    // sandboxes alive in both); the one after the end shows what is left once every sandbox is gone.
    await sleep(end - 60_000 - Date.now());
    await heapSnapshot('a minute before the end, episodes running');
  })();
  const progress = setInterval(() => {
    console.log(
      `  ${Math.round((Date.now() - t0) / 1000)} s: episodes ${stats.episodes} (ok ${stats.episodes_ok}, lost ${stats.episodes_lost_unattributed}), steps ${stats.steps}, over deadline ${stats.steps_over_deadline}, injected ${JSON.stringify(stats.injected)}`,
    );
  }, CI ? 15_000 : 60_000);
  await Promise.all(
    Array.from({ length: CONC }, async (_, w) => {
      for (let n = 0; Date.now() < end; n++) {
        if (run.restarting) await run.restarting;
        await episode(w, n);
      }
    }),
  );
  run.stopping = true;
  await faultLoop;
  await snapshots;
  await heapSnapshot('end');
  clearInterval(memTimer);
  clearInterval(progress);
  await sampleMemory();

  // Graceful stop, then: what is left?
  const serverPid = run.server.proc.pid!;
  const exited = new Promise((r) => run.server.proc.once('exit', r));
  run.server.proc.kill('SIGTERM');
  await Promise.race([exited, sleep(30_000)]);
  await sleep(2000);
  const referenceMaxMs = await reference.stop();
  const leakedProcs = leakedProcesses(serverPid);
  const leakedFolders = leftoverFolders();
  await faults.close();
  await sites.close();

  summarize(t0, end, leakedProcs, leakedFolders, { stalls: reference.stalls, maxMs: referenceMaxMs });
  rmSync(soakDir, { recursive: true, force: true });
}

// Stopped from outside (a timed-out test): the server goes too, by the exit handler of soak/grove-process.ts (its
// watchdog takes Chromium with it).
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.once(sig, () => {
    rmSync(soakDir, { recursive: true, force: true });
    process.exit(1);
  });
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1); // the server is killed on exit (soak/grove-process.ts)
  },
);
