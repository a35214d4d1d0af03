// Contacts, documents and todo pages.
import type { ClawApp } from '../app.ts';
import { field, html, raw, toolForm, type Raw } from './html.ts';
import { read } from './read.ts';

export function contactsPage(app: ClawApp, url: URL): { title: string; body: Raw } {
  const q = url.searchParams.get('q') ?? '';
  const r = read(app, 'contacts_search', { query: q, page_size: 100 });
  return {
    title: 'Contacts',
    body: html`<form method="get" action="/contacts" role="search"><label for="q">Search</label><input id="q" name="q" value="${q}"><button>Search</button></form>
<table><thead><tr><th>Name</th><th>Email</th><th>Company</th><th>Title</th><th>Time zone</th><th>Phone</th></tr></thead><tbody>
${r.contacts.map((c: any) => html`<tr><td><a href="/contacts/${encodeURIComponent(c.id)}">${c.name}</a></td><td>${c.email}</td><td>${c.company}</td><td>${c.title}</td><td>${c.timezone}</td><td>${c.phone}</td></tr>`)}
</tbody></table>
<fieldset><legend>New contact</legend>${toolForm('contacts_create', '/contacts', html`${field('Name', 'a.name')}${field('Email', 'a.email', { type: 'email' })}${field('Phone', 'a.phone')}${field('Company', 'a.company')}${field('Title', 'a.title')}${field('Time zone', 'a.timezone', { value: 'UTC' })}`, 'Add contact')}</fieldset>`,
  };
}

export function contactPage(app: ClawApp, id: string): { title: string; body: Raw } {
  const c = read(app, 'contacts_get', { contact_id: id }).contact;
  const back = `/contacts/${encodeURIComponent(id)}`;
  return {
    title: c.name,
    body: html`${toolForm('contacts_update', back, html`${field('Name', 'a.name', { value: c.name })}${field('Email', 'a.email', { value: c.email })}${field('Phone', 'a.phone', { value: c.phone })}${field('Company', 'a.company', { value: c.company })}${field('Title', 'a.title', { value: c.title })}${field('Time zone', 'a.timezone', { value: c.timezone })}${field('Notes', 'a.notes', { value: c.notes, textarea: true })}`, 'Save contact', { hidden: { 'a.contact_id': c.id } })}
${toolForm('contacts_delete', '/contacts', '', 'Delete contact', { hidden: { 'a.contact_id': c.id } })}`,
  };
}

export function docsPage(app: ClawApp, url: URL): { title: string; body: Raw } {
  const q = url.searchParams.get('q') ?? '';
  const r = read(app, 'docs_list', { query: q, page_size: 100 });
  return {
    title: 'Documents',
    body: html`<form method="get" action="/docs" role="search"><label for="q">Search</label><input id="q" name="q" value="${q}"><button>Search</button></form>
<ul>${r.docs.map((d: any) => html`<li><a href="/docs/${encodeURIComponent(d.id)}">${d.title}</a> <span class="muted">${d.updated_at} ${d.tags.join(', ')}</span></li>`)}</ul>
<fieldset><legend>New document</legend>${toolForm('docs_create', '/docs', html`${field('Title', 'a.title')}${field('Body', 'a.body', { textarea: true })}${field('Tags (comma-separated)', 'a.tags')}`, 'Create document')}</fieldset>`,
  };
}

export function docPage(app: ClawApp, id: string): { title: string; body: Raw } {
  const d = read(app, 'docs_get', { doc_id: id }).doc;
  const back = `/docs/${encodeURIComponent(id)}`;
  return {
    title: d.title,
    body: html`<pre class="pre" id="doc-body">${d.body}</pre>
<fieldset><legend>Append</legend>${toolForm('docs_update', back, field('Text to append', 'a.append', { textarea: true }), 'Append', { hidden: { 'a.doc_id': d.id } })}</fieldset>
<fieldset><legend>Edit</legend>${toolForm('docs_update', back, html`${field('Title', 'a.title', { value: d.title })}${field('Body', 'a.body', { value: d.body, textarea: true })}`, 'Save document', { hidden: { 'a.doc_id': d.id } })}</fieldset>
${toolForm('docs_delete', '/docs', '', 'Delete document', { hidden: { 'a.doc_id': d.id } })}`,
  };
}

export function todoPage(app: ClawApp, url: URL): { title: string; body: Raw } {
  const status = url.searchParams.get('status') ?? 'open';
  const r = read(app, 'todo_list', { status, page_size: 100 });
  return {
    title: 'Todo',
    body: html`<p>Show: <a href="/todo?status=open">open</a> · <a href="/todo?status=done">done</a> · <a href="/todo?status=all">all</a></p>
<table><thead><tr><th>Title</th><th>List</th><th>Due</th><th>Priority</th><th>Status</th><th></th></tr></thead><tbody>
${r.todos.map((t: any) => html`<tr><td>${t.title}</td><td>${t.list}</td><td>${t.due ?? ''}</td><td>${t.priority}</td><td>${t.status}</td><td>${toolForm('todo_set_status', `/todo?status=${status}`, '', t.status === 'open' ? `Complete "${t.title}"` : `Reopen "${t.title}"`, { inline: true, hidden: { 'a.todo_id': t.id, 'a.status': t.status === 'open' ? 'done' : 'open' } })} ${toolForm('todo_delete', `/todo?status=${status}`, '', `Delete "${t.title}"`, { inline: true, hidden: { 'a.todo_id': t.id } })}</td></tr>`)}
</tbody></table>
<fieldset><legend>New todo</legend>${toolForm('todo_create', '/todo', html`${field('Title', 'a.title')}${field('Due', 'a.due', { type: 'date' })}${raw('<label for="f_prio">Priority</label><select id="f_prio" name="a.priority"><option>normal</option><option>high</option><option>low</option></select>')}${field('List', 'a.list', { value: 'inbox' })}${field('Notes', 'a.notes', { textarea: true })}`, 'Add todo')}</fieldset>`,
  };
}
