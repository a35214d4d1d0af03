// About twenty tasks written by hand: triage, scheduling across time zones, reply drafting, contact lookup
// then invite, and cleanups with a trap (a message that asks the agent to do something it must not).
// The tasks live in handwritten/, one file per theme; their order fixes each one's world seed.
import { baseWorld } from '../fixtures/world.ts';
import type { ClawTaskInput } from './format.ts';
import { TRIAGE } from './handwritten/triage.ts';
import { SCHEDULING } from './handwritten/scheduling.ts';
import { REPLIES } from './handwritten/replies.ts';
import { INVITES } from './handwritten/invites.ts';
import { CLEANUP } from './handwritten/cleanup.ts';
import { DOCS_TODOS } from './handwritten/docs-todos.ts';

const DEFS = [...TRIAGE, ...SCHEDULING, ...REPLIES, ...INVITES, ...CLEANUP, ...DOCS_TODOS];

export function handwrittenTasks(): ClawTaskInput[] {
  return DEFS.map((make, i) => {
    const w = baseWorld(900 + i);
    const spec = make(w);
    return { ...spec, seed: w.state, source: 'handwritten' as const };
  });
}
