// Claw tasks for the mock productivity apps (claw-env): {id|task_id, instruction|question|prompt|goal,
// app|apps, level?, ...}. Everything else (initial state, grader spec) is kept verbatim in `extra` for claw-env.
import { z } from 'zod';
import type { Task } from '../protocol/task.ts';
import type { SuiteLoader } from './types.ts';
import { uniqueId } from './util.ts';

const Row = z.record(z.string(), z.unknown());
const pick = (o: Record<string, unknown>, keys: string[]): string | undefined => {
  for (const k of keys) {
    const v = o[k];
    if (typeof v === 'string' && v.trim() !== '') return v;
    if (typeof v === 'number') return String(v);
  }
  return undefined;
};

export const clawLoader: SuiteLoader = {
  suite: 'claw',
  description: 'Claw tasks for the mock productivity apps (mail, calendar, contacts, docs, todo)',
  convert(value, _where, ctx): Task | string {
    const r = Row.safeParse(value);
    if (!r.success || Array.isArray(value)) return 'row is not a JSON object';
    const o = r.data;
    const id = pick(o, ['id', 'task_id']);
    if (!id) return 'id (or task_id): missing';
    const question = pick(o, ['instruction', 'question', 'prompt', 'goal', 'ques']);
    if (!question) return 'instruction (or question/prompt/goal): missing';
    const apps = Array.isArray(o.apps) ? o.apps.filter((a): a is string => typeof a === 'string') : [];
    const site = pick(o, ['app', 'site']) ?? (apps.length ? apps.join(',') : 'claw');
    const flags: string[] = [];
    const { id: _i, task_id: _t, instruction: _in, question: _q, prompt: _p, goal: _g, ...extra } = o;
    return {
      id: uniqueId(ctx, id, flags),
      suite: 'claw',
      site,
      question,
      level: pick(o, ['level', 'difficulty']),
      extra,
      flags,
    };
  },
};
