// Mail: folders and labels, search, read, send, reply, forward, drafts, attachments as metadata.
// Search query syntax (a small Gmail-like subset): from:x to:x subject:x is:unread is:starred has:attachment
// label:x, plus free words matched against sender, subject and body.
import { z } from 'zod';
import { iso } from '../time.ts';
import type { Message } from '../state.ts';
import { Attachment } from '../state.ts';
import { defineTool, Email, findById, includesText, PageArgs, paginate, ToolError, type ToolContext } from '../tool.ts';

const SYSTEM_FOLDERS = ['inbox', 'sent', 'drafts', 'archive', 'trash', 'spam'];

function summary(m: Message) {
  return {
    id: m.id,
    thread_id: m.thread_id,
    folder: m.folder,
    labels: m.labels,
    from: m.from,
    from_name: m.from_name ?? null,
    to: m.to,
    subject: m.subject,
    snippet: m.body.slice(0, 100),
    date: m.date,
    read: m.read,
    starred: m.starred,
    has_attachments: m.attachments.length > 0,
  };
}

function matchesQuery(m: Message, q: string): boolean {
  const tokens = q.match(/(\w+:"[^"]*"|\w+:\S+|"[^"]*"|\S+)/g) ?? [];
  for (const raw of tokens) {
    const t = raw.replace(/"/g, '');
    const i = t.indexOf(':');
    const [op, val] = i > 0 ? [t.slice(0, i).toLowerCase(), t.slice(i + 1)] : ['', t];
    switch (op) {
      case 'from':
        if (!includesText([m.from, m.from_name], val)) return false;
        break;
      case 'to':
        if (!includesText([...m.to, ...m.cc], val)) return false;
        break;
      case 'subject':
        if (!includesText([m.subject], val)) return false;
        break;
      case 'label':
        if (!m.labels.some((l) => l.toLowerCase() === val.toLowerCase())) return false;
        break;
      case 'in':
        if (m.folder !== val.toLowerCase()) return false;
        break;
      case 'is':
        if (val === 'unread' && m.read) return false;
        if (val === 'read' && !m.read) return false;
        if (val === 'starred' && !m.starred) return false;
        break;
      case 'has':
        if (val === 'attachment' && m.attachments.length === 0) return false;
        break;
      default:
        if (!includesText([m.from, m.from_name, m.subject, m.body, ...m.attachments.map((a) => a.filename)], t)) return false;
    }
  }
  return true;
}

function checkFolder(ctx: ToolContext, folder: string): string {
  const f = folder.toLowerCase();
  if (!ctx.state.mail.folders.includes(f)) {
    throw new ToolError('not_found', `Folder ${JSON.stringify(folder)} does not exist; folders: ${ctx.state.mail.folders.join(', ')}.`);
  }
  return f;
}

function userMessage(ctx: ToolContext, m: Omit<Message, 'id' | 'thread_id' | 'date' | 'from' | 'read' | 'starred' | 'labels'> & { thread_id?: string }): Message {
  const id = ctx.newId('msg');
  return {
    id,
    thread_id: m.thread_id ?? ctx.newId('thr'),
    from: ctx.state.user.email,
    from_name: ctx.state.user.name,
    date: iso(ctx.clock.now()),
    read: true,
    starred: false,
    labels: [],
    ...m,
  };
}

const Recipients = z.array(Email).min(1, 'at least one recipient is required').max(50);

export const mailTools = [
  defineTool({
    name: 'mail_list_folders',
    app: 'mail',
    description: 'List mail folders with total and unread counts.',
    input: z.object({}),
    mutates: false,
    handler: (ctx) => ({
      folders: ctx.state.mail.folders.map((f) => {
        const ms = ctx.state.mail.messages.filter((m) => m.folder === f);
        return { name: f, total: ms.length, unread: ms.filter((m) => !m.read).length, system: SYSTEM_FOLDERS.includes(f) };
      }),
    }),
  }),
  defineTool({
    name: 'mail_list_messages',
    app: 'mail',
    description:
      'List or search messages, newest first. `folder` defaults to inbox ("all" searches every folder but trash). ' +
      '`query` supports from:, to:, subject:, label:, is:unread, is:starred, has:attachment and free words.',
    input: z.object({ folder: z.string().default('inbox'), query: z.string().max(500).optional(), ...PageArgs }),
    mutates: false,
    handler(ctx, a) {
      const folder = a.folder === 'all' ? 'all' : checkFolder(ctx, a.folder);
      const all = ctx.state.mail.messages
        .filter((m) => (folder === 'all' ? m.folder !== 'trash' : m.folder === folder))
        .filter((m) => !a.query || matchesQuery(m, a.query))
        .sort((x, y) => Date.parse(y.date) - Date.parse(x.date));
      const page = paginate(all, a, { f: folder, q: a.query ?? '' });
      return { messages: page.items.map(summary), next_page_token: page.next_page_token, total: page.total };
    },
  }),
  defineTool({
    name: 'mail_get_message',
    app: 'mail',
    description: 'Read one message in full (marks it read).',
    input: z.object({ message_id: z.string().min(1) }),
    mutates: true,
    handler(ctx, a) {
      const m = findById(ctx.state.mail.messages, a.message_id, 'Message');
      m.read = true;
      return { message: m };
    },
  }),
  defineTool({
    name: 'mail_send',
    app: 'mail',
    description: 'Send a new message. Attachments are metadata only (filename, mime, size).',
    input: z.object({
      to: Recipients,
      cc: z.array(Email).max(50).default([]),
      subject: z.string().max(300),
      body: z.string().max(100_000),
      attachments: z.array(Attachment).max(20).default([]),
    }),
    mutates: true,
    handler(ctx, a) {
      if (a.subject.trim() === '' && a.body.trim() === '') throw new ToolError('invalid_argument', 'A message needs a subject or a body.');
      const m = userMessage(ctx, { folder: 'sent', to: a.to, cc: a.cc, subject: a.subject, body: a.body, attachments: a.attachments });
      ctx.state.mail.messages.push(m);
      return { message: summary(m) };
    },
  }),
  defineTool({
    name: 'mail_reply',
    app: 'mail',
    description: 'Reply to a message (to its sender; with reply_all also to the other recipients). Sends at once.',
    input: z.object({ message_id: z.string().min(1), body: z.string().min(1).max(100_000), reply_all: z.boolean().default(false) }),
    mutates: true,
    handler(ctx, a) {
      const orig = findById(ctx.state.mail.messages, a.message_id, 'Message');
      if (orig.folder === 'drafts') throw new ToolError('failed_precondition', 'Cannot reply to a draft; send it with mail_send_draft.');
      const me = ctx.state.user.email;
      const to = orig.from === me ? orig.to : [orig.from];
      const cc = a.reply_all ? [...orig.to, ...orig.cc].filter((e) => e !== me && !to.includes(e)) : [];
      const subject = /^re:/i.test(orig.subject) ? orig.subject : `Re: ${orig.subject}`;
      const m = userMessage(ctx, { folder: 'sent', to, cc, subject, body: a.body, attachments: [], thread_id: orig.thread_id, in_reply_to: orig.id });
      ctx.state.mail.messages.push(m);
      return { message: summary(m) };
    },
  }),
  defineTool({
    name: 'mail_forward',
    app: 'mail',
    description: 'Forward a message (with its attachments) to new recipients, with an optional note above it.',
    input: z.object({ message_id: z.string().min(1), to: Recipients, body: z.string().max(100_000).default('') }),
    mutates: true,
    handler(ctx, a) {
      const orig = findById(ctx.state.mail.messages, a.message_id, 'Message');
      const subject = /^fwd?:/i.test(orig.subject) ? orig.subject : `Fwd: ${orig.subject}`;
      const body = `${a.body}\n\n---------- Forwarded message ----------\nFrom: ${orig.from}\nSubject: ${orig.subject}\n\n${orig.body}`.trimStart();
      const m = userMessage(ctx, { folder: 'sent', to: a.to, cc: [], subject, body, attachments: orig.attachments, forwarded_from: orig.id });
      ctx.state.mail.messages.push(m);
      return { message: summary(m) };
    },
  }),
  defineTool({
    name: 'mail_save_draft',
    app: 'mail',
    description: 'Save a draft (not sent). With draft_id, replaces that draft. reply_to_message_id threads it as a reply.',
    input: z.object({
      draft_id: z.string().optional(),
      to: z.array(Email).max(50).default([]),
      subject: z.string().max(300).default(''),
      body: z.string().max(100_000).default(''),
      reply_to_message_id: z.string().optional(),
    }),
    mutates: true,
    handler(ctx, a) {
      let thread: string | undefined;
      if (a.reply_to_message_id) thread = findById(ctx.state.mail.messages, a.reply_to_message_id, 'Message').thread_id;
      if (a.draft_id) {
        const d = findById(ctx.state.mail.messages, a.draft_id, 'Draft');
        if (d.folder !== 'drafts') throw new ToolError('failed_precondition', `${a.draft_id} is not a draft.`);
        Object.assign(d, { to: a.to, subject: a.subject, body: a.body, date: iso(ctx.clock.now()) });
        return { draft: summary(d) };
      }
      const m = userMessage(ctx, { folder: 'drafts', to: a.to, cc: [], subject: a.subject, body: a.body, attachments: [], thread_id: thread, in_reply_to: a.reply_to_message_id });
      ctx.state.mail.messages.push(m);
      return { draft: summary(m) };
    },
  }),
  defineTool({
    name: 'mail_send_draft',
    app: 'mail',
    description: 'Send a saved draft.',
    input: z.object({ draft_id: z.string().min(1) }),
    mutates: true,
    handler(ctx, a) {
      const d = findById(ctx.state.mail.messages, a.draft_id, 'Draft');
      if (d.folder !== 'drafts') throw new ToolError('failed_precondition', `${a.draft_id} is not a draft.`);
      if (d.to.length === 0) throw new ToolError('failed_precondition', 'The draft has no recipients; add some with mail_save_draft first.');
      d.folder = 'sent';
      d.date = iso(ctx.clock.now());
      return { message: summary(d) };
    },
  }),
  defineTool({
    name: 'mail_move',
    app: 'mail',
    description: 'Move a message to a folder (archive, trash, spam, inbox or a custom folder).',
    input: z.object({ message_id: z.string().min(1), folder: z.string().min(1) }),
    mutates: true,
    handler(ctx, a) {
      const m = findById(ctx.state.mail.messages, a.message_id, 'Message');
      const f = checkFolder(ctx, a.folder);
      if (f === 'drafts' || f === 'sent') throw new ToolError('failed_precondition', `Messages cannot be moved into ${f}.`);
      m.folder = f;
      return { message: summary(m) };
    },
  }),
  defineTool({
    name: 'mail_create_folder',
    app: 'mail',
    description: 'Create a custom folder.',
    input: z.object({ name: z.string().trim().min(1).max(60).regex(/^[\w -]+$/, 'letters, digits, spaces, - and _ only') }),
    mutates: true,
    handler(ctx, a) {
      const f = a.name.toLowerCase();
      if (ctx.state.mail.folders.includes(f)) throw new ToolError('already_exists', `Folder ${JSON.stringify(f)} already exists.`);
      ctx.state.mail.folders.push(f);
      return { folder: f };
    },
  }),
  defineTool({
    name: 'mail_update_message',
    app: 'mail',
    description: 'Change flags of a message: read, starred, labels to add or remove.',
    input: z.object({
      message_id: z.string().min(1),
      read: z.boolean().optional(),
      starred: z.boolean().optional(),
      add_labels: z.array(z.string().min(1).max(60)).default([]),
      remove_labels: z.array(z.string()).default([]),
    }),
    mutates: true,
    handler(ctx, a) {
      const m = findById(ctx.state.mail.messages, a.message_id, 'Message');
      if (a.read !== undefined) m.read = a.read;
      if (a.starred !== undefined) m.starred = a.starred;
      m.labels = [...new Set([...m.labels.filter((l) => !a.remove_labels.includes(l)), ...a.add_labels])];
      return { message: summary(m) };
    },
  }),
  defineTool({
    name: 'mail_delete',
    app: 'mail',
    description: 'Delete a message: moves it to trash; a message already in trash is deleted for good.',
    input: z.object({ message_id: z.string().min(1) }),
    mutates: true,
    handler(ctx, a) {
      const m = findById(ctx.state.mail.messages, a.message_id, 'Message');
      if (m.folder === 'trash') {
        ctx.state.mail.messages = ctx.state.mail.messages.filter((x) => x !== m);
        return { deleted: m.id, permanent: true };
      }
      m.folder = 'trash';
      return { deleted: m.id, permanent: false };
    },
  }),
];
