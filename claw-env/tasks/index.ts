// The built-in Claw task set: generated from templates plus the hand-written ones.
import { parseTask, type ClawTask } from './format.ts';
import { handwrittenTasks } from './handwritten.ts';
import { generateTasks } from './templates.ts';

let cache: ClawTask[] | null = null;

export function builtinTasks(): ClawTask[] {
  cache ??= [...handwrittenTasks(), ...generateTasks()].map((t) => parseTask(t, `task ${t.id}`));
  return cache;
}

export function builtinTask(id: string): ClawTask | undefined {
  return builtinTasks().find((t) => t.id === id);
}
