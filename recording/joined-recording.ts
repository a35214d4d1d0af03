// The episode another server records (kubernetes replicas on one recordings volume), joined by a server that serves
// a step of it: the steps go to the creating server's EpisodeRecorder on storage (recording/shared-steps.ts numbers
// them); frame 0 and the episode's end stay the creator's.
import type { EpisodeEndInfo } from '../sandbox/step-hook.ts';
import type { Logger } from '../sandbox/log.ts';
import { EpisodeRecorder, type Frame } from './recorder.ts';
import type { EpisodeRecorderLike } from './step-hook.ts';

/**
 * The episode another server records, joined on the first step served here once its episode.json is on storage
 * (the creating server writes it with frame 0, just after the sandbox's record turned ready: a step in between, or
 * on a server that does not share the recordings volume, is served and not recorded, with a warning).
 */
export class JoinedRecording implements EpisodeRecorderLike {
  private rec: EpisodeRecorder | null = null;
  private joining: Promise<EpisodeRecorder | null> | null = null;
  private warned = false;

  constructor(
    private readonly dir: string,
    private readonly id: string,
    private readonly log: Logger,
  ) {}

  private recorder(): Promise<EpisodeRecorder | null> {
    if (this.rec) return Promise.resolve(this.rec);
    this.joining ??= EpisodeRecorder.join(this.dir, { logger: this.log }).then(
      (r) => (this.rec = r),
      (err: unknown) => {
        this.joining = null;
        if (!this.warned) this.log.warn({ err: String(err), sandbox_id: this.id }, "a step of a sandbox another server records is not recorded: its episode is not in this server's recordings directory (yet); mount one volume on every replica (k8s config recordings)");
        this.warned = true;
        return null;
      },
    );
    return this.joining;
  }

  async recordInitial(): Promise<void> {}

  async recordStep(rec: Parameters<EpisodeRecorder['recordStep']>[0], frame?: Frame): Promise<void> {
    await (await this.recorder())?.recordStep(rec, frame);
  }

  async finish(end: EpisodeEndInfo): Promise<void> {
    await this.rec?.finish(end);
  }

  async lastStep(): Promise<undefined> {
    return undefined;
  }
}
