// The episode another server records (kubernetes replicas on one recordings volume), joined by a server that serves
// a step of it: the steps go to the creating server's EpisodeRecorder on storage (recording/shared-steps.ts numbers
// them); frame 0 stays the creator's. The end is written by whichever server claims it first (shared-end.ts): a
// sandbox closed here — deleted through this server, or expired by the leader — ends its episode here too, so an
// episode whose creator died is still ended (terminal state, files closed) by the server that served it later.
import type { StepRecord } from '../protocol/recording.ts';
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
    /** This server's name in the shared state, for the writer marker when it carries the episode on (writer.ts). */
    private readonly server?: string,
  ) {}

  private recorder(): Promise<EpisodeRecorder | null> {
    if (this.rec) return Promise.resolve(this.rec);
    this.joining ??= EpisodeRecorder.join(this.dir, { logger: this.log, server: this.server }).then(
      (r) => (this.rec = r),
      (err: unknown) => {
        this.joining = null;
        if (!this.warned) this.log.warn({ err: String(err), sandbox_id: this.id }, "the recording of a sandbox another server created is not joined (its steps here are not recorded, its end not written): its episode is not in this server's recordings directory (yet); mount one volume on every replica (k8s config recordings)");
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
    await (await this.recorder())?.finish(end);
  }

  /** The last step on storage, whoever took it (the episode ends as it says); undefined when not joined. */
  async lastStep(): Promise<StepRecord | null | undefined> {
    return (await this.recorder())?.lastStep();
  }
}
