// The registry's lifecycle events (created / ready / failed / closed) and their listeners; /metrics counts them.
import type { SandboxInfo } from '../protocol/sandbox.ts';
import type { Logger } from './log.ts';
import type { CloseReason } from './registry-entry.ts';

export type RegistryEvent =
  | { type: 'created'; id: string; sandboxType: SandboxInfo['type'] }
  | { type: 'ready'; id: string; sandboxType: SandboxInfo['type']; ms: number }
  | { type: 'failed'; id: string; sandboxType: SandboxInfo['type']; code: string }
  | { type: 'closed'; id: string; sandboxType: SandboxInfo['type']; reason: CloseReason };

/** Listeners of registry events; a failing listener is logged and never stops the others. */
export class RegistryEvents {
  private readonly listeners: Array<(e: RegistryEvent) => void> = [];

  constructor(private readonly log: Logger) {}

  on(fn: (e: RegistryEvent) => void): void {
    this.listeners.push(fn);
  }

  emit(e: RegistryEvent): void {
    for (const fn of this.listeners) {
      try {
        fn(e);
      } catch (err) {
        this.log.error({ err }, 'registry listener failed');
      }
    }
  }
}
