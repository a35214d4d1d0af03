// Task templates: each turns a seed into one task over the seeded fixture world (tasks differ in people,
// dates, titles, counts). generateTasks() makes the training set: every template × `perTemplate` seeds.
// The templates live in templates/, one file per app.
import { baseWorld } from '../fixtures/world.ts';
import type { ClawTaskInput } from './format.ts';
import { MAIL_TEMPLATES } from './templates/mail.ts';
import { CALENDAR_TEMPLATES } from './templates/calendar.ts';
import { CONTACTS_TEMPLATES } from './templates/contacts.ts';
import { DOCS_TEMPLATES } from './templates/docs.ts';
import { TODO_TEMPLATES } from './templates/todo.ts';
import { QA_TEMPLATES } from './templates/qa.ts';
import type { Template } from './templates/template.ts';

export type { Template } from './templates/template.ts';

export const TEMPLATES: Template[] = [...MAIL_TEMPLATES, ...CALENDAR_TEMPLATES, ...CONTACTS_TEMPLATES, ...DOCS_TEMPLATES, ...TODO_TEMPLATES, ...QA_TEMPLATES];

/** Every template × `perTemplate` seeds (≥ 200 tasks at the default 13). Ids: `gen-<template>-<seed>`. */
export function generateTasks(perTemplate = 13, firstSeed = 1): ClawTaskInput[] {
  const out: ClawTaskInput[] = [];
  for (const t of TEMPLATES) {
    for (let s = firstSeed; s < firstSeed + perTemplate; s++) {
      const seed = s * 7919 + t.name.length * 104_729;
      const w = baseWorld(seed);
      const body = t.make(w, seed);
      out.push({ id: `gen-${t.name}-${s}`, ...body, seed: w.state, source: 'generated', template: t.name, category: t.category });
    }
  }
  return out;
}
