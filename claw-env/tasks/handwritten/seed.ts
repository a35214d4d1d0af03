// What the hand-written tasks build their worlds with: mail (two hours old unless told) and events on the seeded
// fixture world, and the task spec each one returns.
import type { World } from '../../fixtures/world.ts';
import type { ClawTaskInput } from '../format.ts';
import { addEvent, addInbox, type InboxExtra } from '../seed-world.ts';

export { H } from '../seed-world.ts';

/** One hand-written task: builds its world and returns the task (its seed and source are added by the caller). */
export type Spec = (w: World) => Omit<ClawTaskInput, 'seed' | 'source'>;

/** An inbox message from `from` <`fromName`>, two hours old unless told otherwise. */
export function mail(w: World, from: string, fromName: string, subject: string, body: string, extra: Omit<InboxExtra, 'attachments'> = {}) {
  return addInbox(w, { email: from, name: fromName }, subject, body, { ...extra, hoursAgo: extra.hoursAgo ?? 2 });
}

export const event = addEvent;
