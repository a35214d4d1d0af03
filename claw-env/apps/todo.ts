// Todo: lists, due dates (calendar dates in the user's zone), priorities, completion.
import { z } from 'zod';
import type { Todo } from '../state.ts';
import { iso, localDate } from '../time.ts';
import { defineTool, findById, includesText, PageArgs, paginate, ToolError, type ToolContext } from '../tool.ts';

const Due = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine((s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s), 'is not a real calendar date');

function checkDue(ctx: ToolContext, due: string | undefined): void {
  if (due === undefined) return;
  const today = localDate(ctx.clock.now(), ctx.state.user.timezone);
  if (due < today) throw new ToolError('invalid_argument', `due ${due} is in the past (today is ${today}).`);
}

export const todoTools = [
  defineTool({
    name: 'todo_list',
    app: 'todo',
    description: 'List todos (open by default), by due date then priority; filter by list, status, due_before or text.',
    input: z.object({ status: z.enum(['open', 'done', 'all']).default('open'), list: z.string().optional(), due_before: Due.optional(), query: z.string().max(200).default(''), ...PageArgs }),
    mutates: false,
    handler(ctx, a) {
      const rank = { high: 0, normal: 1, low: 2 };
      const all = ctx.state.todos
        .filter((t) => a.status === 'all' || t.status === a.status)
        .filter((t) => !a.list || t.list === a.list)
        .filter((t) => !a.due_before || (t.due !== undefined && t.due < a.due_before))
        .filter((t) => a.query === '' || includesText([t.title, t.notes], a.query))
        .sort((x, y) => (x.due ?? '9999').localeCompare(y.due ?? '9999') || rank[x.priority] - rank[y.priority]);
      const page = paginate(all, a, { s: a.status, l: a.list ?? '', d: a.due_before ?? '', q: a.query });
      return { todos: page.items, next_page_token: page.next_page_token, total: page.total };
    },
  }),
  defineTool({
    name: 'todo_create',
    app: 'todo',
    description: 'Create a todo. due is a date (YYYY-MM-DD) that must not be in the past.',
    input: z.object({ title: z.string().trim().min(1).max(300), notes: z.string().max(5000).default(''), list: z.string().trim().min(1).max(60).default('inbox'), due: Due.optional(), priority: z.enum(['low', 'normal', 'high']).default('normal') }),
    mutates: true,
    handler(ctx, a) {
      checkDue(ctx, a.due);
      const t: Todo = { id: ctx.newId('tsk'), ...a, status: 'open', created_at: iso(ctx.clock.now()) };
      ctx.state.todos.push(t);
      return { todo: t };
    },
  }),
  defineTool({
    name: 'todo_update',
    app: 'todo',
    description: 'Change a todo (title, notes, list, due, priority). Use null for due to clear it.',
    input: z.object({ todo_id: z.string().min(1), title: z.string().trim().min(1).max(300).optional(), notes: z.string().max(5000).optional(), list: z.string().trim().min(1).max(60).optional(), due: Due.nullable().optional(), priority: z.enum(['low', 'normal', 'high']).optional() }),
    mutates: true,
    handler(ctx, a) {
      const t = findById(ctx.state.todos, a.todo_id, 'Todo');
      if (t.status === 'done') throw new ToolError('failed_precondition', 'A completed todo cannot be edited; reopen it with todo_set_status first.');
      if (a.due !== null) checkDue(ctx, a.due);
      if (a.title !== undefined) t.title = a.title;
      if (a.notes !== undefined) t.notes = a.notes;
      if (a.list !== undefined) t.list = a.list;
      if (a.priority !== undefined) t.priority = a.priority;
      if (a.due === null) delete t.due;
      else if (a.due !== undefined) t.due = a.due;
      return { todo: t };
    },
  }),
  defineTool({
    name: 'todo_set_status',
    app: 'todo',
    description: 'Complete (done) or reopen (open) a todo.',
    input: z.object({ todo_id: z.string().min(1), status: z.enum(['open', 'done']) }),
    mutates: true,
    handler(ctx, a) {
      const t = findById(ctx.state.todos, a.todo_id, 'Todo');
      if (t.status === a.status) throw new ToolError('failed_precondition', `The todo is already ${a.status}.`);
      t.status = a.status;
      if (a.status === 'done') t.completed_at = iso(ctx.clock.now());
      else delete t.completed_at;
      return { todo: t };
    },
  }),
  defineTool({
    name: 'todo_delete',
    app: 'todo',
    description: 'Delete a todo.',
    input: z.object({ todo_id: z.string().min(1) }),
    mutates: true,
    handler(ctx, a) {
      const t = findById(ctx.state.todos, a.todo_id, 'Todo');
      ctx.state.todos = ctx.state.todos.filter((x) => x !== t);
      return { deleted: t.id };
    },
  }),
];
