// Closed sandboxes the registry remembers (status `closed`, idempotent delete, ids not reused); oldest forgotten first.
import type { SandboxInfo } from '../protocol/sandbox.ts';
import type { CloseReason } from './registry-entry.ts';

export type Tombstone = SandboxInfo & { close_reason: CloseReason };

export class Tombstones {
  private readonly byId = new Map<string, Tombstone>();

  constructor(private readonly max: number) {}

  has(id: string): boolean {
    return this.byId.has(id);
  }

  get(id: string): Tombstone | undefined {
    return this.byId.get(id);
  }

  /** The public info of a closed sandbox (without the close reason), or undefined. */
  info(id: string): SandboxInfo | undefined {
    const t = this.byId.get(id);
    if (!t) return undefined;
    const { close_reason: _r, ...info } = t;
    return info;
  }

  remember(t: Tombstone): void {
    this.byId.set(t.sandbox_id, t);
    while (this.byId.size > this.max) {
      const oldest = this.byId.keys().next().value as string;
      this.byId.delete(oldest);
    }
  }
}
