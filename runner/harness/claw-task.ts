// The prompt of a built-in Claw task, for harnesses that get their task as text.
import { builtinTask } from '../../claw-env/tasks/index.ts';

export function clawTaskPrompt(id: string): string | undefined {
  return builtinTask(id)?.prompt;
}
