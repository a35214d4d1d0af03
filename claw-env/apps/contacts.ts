// Contacts: search, read, create, update, delete. Emails are unique (a second contact with the same email
// is already_exists, as a real address book answers).
import { z } from 'zod';
import type { Contact } from '../state.ts';
import { isValidTimeZone } from '../time.ts';
import { defineTool, Email, findById, includesText, PageArgs, paginate, ToolError, type ToolContext } from '../tool.ts';

const Fields = {
  name: z.string().trim().min(1).max(200),
  email: Email,
  phone: z.string().trim().max(40).regex(/^[+\d][\d ()-]*$/, 'digits, spaces, +, -, ( and ) only').or(z.literal('')).default(''),
  company: z.string().max(200).default(''),
  title: z.string().max(200).default(''),
  timezone: z.string().default('UTC'),
  notes: z.string().max(5000).default(''),
};

function checkZone(tz: string | undefined): void {
  if (tz !== undefined && !isValidTimeZone(tz)) throw new ToolError('invalid_argument', `timezone: unknown time zone ${JSON.stringify(tz)}.`);
}

function checkUnique(ctx: ToolContext, email: string, except?: Contact): void {
  const dup = ctx.state.contacts.find((c) => c !== except && c.email.toLowerCase() === email.toLowerCase());
  if (dup) throw new ToolError('already_exists', `A contact with email ${email} already exists (${dup.id}).`);
}

export const contactsTools = [
  defineTool({
    name: 'contacts_search',
    app: 'contacts',
    description: 'Search contacts by name, email, company or title (empty query lists all), sorted by name.',
    input: z.object({ query: z.string().max(200).default(''), ...PageArgs }),
    mutates: false,
    handler(ctx, a) {
      const all = ctx.state.contacts.filter((c) => a.query === '' || includesText([c.name, c.email, c.company, c.title], a.query)).sort((x, y) => x.name.localeCompare(y.name));
      const page = paginate(all, a, { q: a.query });
      return { contacts: page.items, next_page_token: page.next_page_token, total: page.total };
    },
  }),
  defineTool({
    name: 'contacts_get',
    app: 'contacts',
    description: 'Get one contact.',
    input: z.object({ contact_id: z.string().min(1) }),
    mutates: false,
    handler: (ctx, a) => ({ contact: findById(ctx.state.contacts, a.contact_id, 'Contact') }),
  }),
  defineTool({
    name: 'contacts_create',
    app: 'contacts',
    description: 'Create a contact.',
    input: z.object(Fields),
    mutates: true,
    handler(ctx, a) {
      checkZone(a.timezone);
      checkUnique(ctx, a.email);
      const c: Contact = { id: ctx.newId('con'), ...a };
      ctx.state.contacts.push(c);
      return { contact: c };
    },
  }),
  defineTool({
    name: 'contacts_update',
    app: 'contacts',
    description: 'Change fields of a contact.',
    input: z.object({
      contact_id: z.string().min(1),
      name: Fields.name.optional(),
      email: Email.optional(),
      phone: z.string().trim().max(40).regex(/^[+\d][\d ()-]*$/, 'digits, spaces, +, -, ( and ) only').or(z.literal('')).optional(),
      company: z.string().max(200).optional(),
      title: z.string().max(200).optional(),
      timezone: z.string().optional(),
      notes: z.string().max(5000).optional(),
    }),
    mutates: true,
    handler(ctx, a) {
      const c = findById(ctx.state.contacts, a.contact_id, 'Contact');
      checkZone(a.timezone);
      if (a.email !== undefined) checkUnique(ctx, a.email, c);
      const { contact_id: _id, ...rest } = a;
      for (const [k, v] of Object.entries(rest)) if (v !== undefined) (c as Record<string, unknown>)[k] = v;
      return { contact: c };
    },
  }),
  defineTool({
    name: 'contacts_delete',
    app: 'contacts',
    description: 'Delete a contact.',
    input: z.object({ contact_id: z.string().min(1) }),
    mutates: true,
    handler(ctx, a) {
      const c = findById(ctx.state.contacts, a.contact_id, 'Contact');
      ctx.state.contacts = ctx.state.contacts.filter((x) => x !== c);
      return { deleted: c.id };
    },
  }),
];
