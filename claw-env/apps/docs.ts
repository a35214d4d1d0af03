// Documents / notes: list and search, read, create, update (replace or append), delete.
import { z } from 'zod';
import type { Doc } from '../state.ts';
import { iso } from '../time.ts';
import { defineTool, findById, includesText, PageArgs, paginate, ToolError } from '../tool.ts';

const Tags = z.array(z.string().trim().min(1).max(40)).max(20);

export const docsTools = [
  defineTool({
    name: 'docs_list',
    app: 'docs',
    description: 'List documents, most recently updated first; query matches title, body and tags.',
    input: z.object({ query: z.string().max(200).default(''), tag: z.string().optional(), ...PageArgs }),
    mutates: false,
    handler(ctx, a) {
      const all = ctx.state.docs
        .filter((d) => a.query === '' || includesText([d.title, d.body, ...d.tags], a.query))
        .filter((d) => !a.tag || d.tags.includes(a.tag))
        .sort((x, y) => Date.parse(y.updated_at) - Date.parse(x.updated_at));
      const page = paginate(all, a, { q: a.query, t: a.tag ?? '' });
      return { docs: page.items.map((d) => ({ id: d.id, title: d.title, tags: d.tags, updated_at: d.updated_at, snippet: d.body.slice(0, 100) })), next_page_token: page.next_page_token, total: page.total };
    },
  }),
  defineTool({
    name: 'docs_get',
    app: 'docs',
    description: 'Read a document in full.',
    input: z.object({ doc_id: z.string().min(1) }),
    mutates: false,
    handler: (ctx, a) => ({ doc: findById(ctx.state.docs, a.doc_id, 'Document') }),
  }),
  defineTool({
    name: 'docs_create',
    app: 'docs',
    description: 'Create a document (titles are unique).',
    input: z.object({ title: z.string().trim().min(1).max(300), body: z.string().max(200_000).default(''), tags: Tags.default([]) }),
    mutates: true,
    handler(ctx, a) {
      if (ctx.state.docs.some((d) => d.title.toLowerCase() === a.title.toLowerCase())) throw new ToolError('already_exists', `A document titled ${JSON.stringify(a.title)} already exists.`);
      const now = iso(ctx.clock.now());
      const d: Doc = { id: ctx.newId('doc'), title: a.title, body: a.body, tags: a.tags, created_at: now, updated_at: now };
      ctx.state.docs.push(d);
      return { doc: d };
    },
  }),
  defineTool({
    name: 'docs_update',
    app: 'docs',
    description: 'Change a document: new title, replace the body, or append text to it.',
    input: z.object({ doc_id: z.string().min(1), title: z.string().trim().min(1).max(300).optional(), body: z.string().max(200_000).optional(), append: z.string().max(200_000).optional(), tags: Tags.optional() }),
    mutates: true,
    handler(ctx, a) {
      if (a.body !== undefined && a.append !== undefined) throw new ToolError('invalid_argument', 'Give body (replace) or append, not both.');
      const d = findById(ctx.state.docs, a.doc_id, 'Document');
      if (a.title !== undefined) {
        if (ctx.state.docs.some((x) => x !== d && x.title.toLowerCase() === a.title!.toLowerCase())) throw new ToolError('already_exists', `A document titled ${JSON.stringify(a.title)} already exists.`);
        d.title = a.title;
      }
      if (a.body !== undefined) d.body = a.body;
      if (a.append !== undefined) d.body = d.body === '' ? a.append : `${d.body}\n${a.append}`;
      if (a.tags !== undefined) d.tags = a.tags;
      d.updated_at = iso(ctx.clock.now());
      return { doc: d };
    },
  }),
  defineTool({
    name: 'docs_delete',
    app: 'docs',
    description: 'Delete a document.',
    input: z.object({ doc_id: z.string().min(1) }),
    mutates: true,
    handler(ctx, a) {
      const d = findById(ctx.state.docs, a.doc_id, 'Document');
      ctx.state.docs = ctx.state.docs.filter((x) => x !== d);
      return { deleted: d.id };
    },
  }),
];
