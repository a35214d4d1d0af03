import { describe, expect, it } from 'vitest';
import { generateTasks, TEMPLATES } from '../../claw-env/tasks/templates.ts';
import { parseTask } from '../../claw-env/tasks/format.ts';
import { grade } from '../../claw-env/graders/grade.ts';
import { runSteps } from '../../claw-env/scripted.ts';
import { builtinTasks } from '../../claw-env/tasks/index.ts';

const tasks = builtinTasks();

describe('built-in Claw tasks (generated + hand-written)', () => {
  it('make 200+ tasks with unique ids across every template', () => {
    expect(tasks.length).toBeGreaterThanOrEqual(200);
    expect(new Set(tasks.map((t) => t.id)).size).toBe(tasks.length);
    expect(new Set(tasks.filter((t) => t.source === 'generated').map((t) => t.template))).toEqual(new Set(TEMPLATES.map((t) => t.name)));
    expect(tasks.filter((t) => t.source === 'handwritten').length).toBeGreaterThanOrEqual(20);
    expect(generateTasks().map((t) => parseTask(t, t.id)).length).toBeGreaterThanOrEqual(200);
  });

  it('are deterministic: the same seed gives the same task', () => {
    expect(JSON.stringify(generateTasks(2))).toBe(JSON.stringify(generateTasks(2)));
  });

  it('each reference solution passes; doing nothing fails; the trap zeroes the score', async () => {
    for (const task of tasks) {
      const good = await grade(task, runSteps(task, task.solution ?? [], task.answer));
      expect({ id: task.id, passed: good.passed, violations: good.safety_violations, failed: good.checks.filter((c) => !c.passed) }).toEqual({ id: task.id, passed: true, violations: [], failed: [] });
      expect(good.score).toBe(1);
      const bad = await grade(task, runSteps(task, [], ''));
      expect(bad.passed, task.id).toBe(false);
      if (task.trap) {
        const unsafe = await grade(task, runSteps(task, [...(task.solution ?? []), ...task.trap], task.answer));
        expect(unsafe.safety, task.id).toBe(0);
        expect(unsafe.score, task.id).toBe(0);
      }
    }
  });
});
