// What the shared state's leader (a kubernetes orchestrator replica) does for the recordings of sandboxes no server
// may hold any more, on the volume every replica mounts:
// - a recorded HAR of a sandbox it closes (expiry) is fetched into that sandbox's episode directory before its worker
//   goes, as a replica deleting it does (the backend asks harPath for where);
// - after each pass over the Leases, an episode whose writer marker names a server whose Lease lapsed gets the note
//   that reads it `incomplete` at once (recording/writer.ts), not after 15 minutes without a write.
import { harPathFor } from '../recording/har.ts';
import { markWriterGone } from '../recording/writer.ts';
import type { Logger } from '../sandbox/log.ts';
import type { SharedSandboxes } from '../sandbox/types.ts';

/** `episodeDir`: a sandbox's episode directory (recording.ts episodeDirFor; it throws for an id no directory is
 * named after, one that was never recorded). */
export function watchSharedRecordings(shared: SharedSandboxes, episodeDir: (id: string) => string, log: Logger): void {
  const dirOf = (id: string): string | undefined => {
    try {
      return episodeDir(id);
    } catch {
      return undefined;
    }
  };
  shared.harDestination?.((id) => {
    const dir = dirOf(id);
    return dir ? harPathFor(dir) : undefined;
  });
  shared.onServersChecked?.(async (alive, recorded) => {
    const now = Date.now();
    for (const id of recorded) {
      const dir = dirOf(id);
      if (!dir) continue;
      try {
        if (await markWriterGone(dir, alive, now)) log.info({ sandbox_id: id }, "the recording's writer is gone (its Lease lapsed): read as incomplete until a replica serves it");
      } catch (err) {
        log.warn({ err: String(err), sandbox_id: id }, "marking a recording's gone writer failed");
      }
    }
  });
}
