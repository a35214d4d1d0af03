// Runs a fixed list of tool calls against a task's apps in process (no server): the scripted trajectories
// graders are tested on, and the reference for the scripted policy.
import { ClawApp } from './app.ts';
import { COMPAT_TOOLS } from './tasks/claw-eval-compat.ts';
import type { ClawTask, ToolStep } from './tasks/format.ts';
import type { Trajectory } from './graders/grade.ts';

export function appForTask(task: ClawTask, newId?: (p: string) => string): ClawApp {
  return new ClawApp({
    seed: task.seed,
    apps: task.apps,
    tools: task.tools,
    faults: task.faults,
    newId,
    aliases: task.aliases,
    extraTools: Object.keys(task.aliases).length ? COMPAT_TOOLS : undefined,
  });
}

export function runSteps(task: ClawTask, steps: ToolStep[], answer = '', app = appForTask(task)): Trajectory & { app: ClawApp } {
  for (const s of steps) app.call(s.tool, s.args);
  return { audit: app.audit, final: app.state, answer, app };
}
