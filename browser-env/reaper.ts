// Keeps Chromium from outliving the server. Chromium's root process leads its own session (Playwright
// spawns it detached), so neither a dead parent nor a signal to our process group reaches it. Three layers:
//   1. graceful: the pool closes every browser;
//   2. a detached watchdog sidecar per pool notices the parent's death (its stdin pipe closes, plus a
//      500 ms `kill(ppid, 0)` poll) and kills the process trees listed in the pool's pidfile, and any
//      process carrying the pool's marker flag (covers a browser that was launching when the parent died),
//      then removes the pool's artifacts folders (each is also its Chromium's TMPDIR);
//   3. at start, pidfiles left by dead owners are read and their trees killed.
// A PID is killed only after checking its start time in /proc/<pid>/stat, so a recycled PID is never hit.
// The pieces: procfs.ts (process identity, trees, kill), pidfile.ts (the pidfile and the start-time clean-up),
// watchdog.ts (the sidecar); this module is their face for the pool.
export { findProcessByArg, killTree, listProcesses, readCmdline, readProcStat, userDataDirOf } from './procfs.ts';
export { liveTokens, MARKER_FLAG, PidFile, reapStale, removeProfileDir, removeStaleArtifacts } from './pidfile.ts';
export { Watchdog } from './watchdog.ts';
