// Mail pages: folder list with search and pagination, a message with reply/forward/move/star/delete, compose.
import type { ClawApp } from '../app.ts';
import { field, html, toolForm, type Raw } from './html.ts';
import { read } from './read.ts';

export function mailList(app: ClawApp, url: URL): { title: string; body: Raw } {
  const folder = url.searchParams.get('folder') ?? 'inbox';
  const q = url.searchParams.get('q') ?? '';
  const token = url.searchParams.get('page_token') ?? undefined;
  const folders = read(app, 'mail_list_folders', {}).folders as { name: string; unread: number }[];
  const r = read(app, 'mail_list_messages', { folder, ...(q ? { query: q } : {}), page_size: 20, ...(token ? { page_token: token } : {}) });
  const next = r.next_page_token ? `/mail?${new URLSearchParams({ folder, q, page_token: r.next_page_token })}` : null;
  return {
    title: `Mail — ${folder}`,
    body: html`<p><a href="/mail/compose">Compose</a></p>
<nav aria-label="Folders">${folders.map((f) => html`<a href="/mail?folder=${encodeURIComponent(f.name)}">${f.name}${f.unread ? ` (${f.unread})` : ''}</a> · `)}</nav>
<form method="get" action="/mail" role="search"><input type="hidden" name="folder" value="${folder}"><label for="q">Search</label><input id="q" name="q" value="${q}" placeholder="from:maya is:unread"><button>Search</button></form>
<p class="muted">${r.total} message(s)</p>
<table><thead><tr><th>From</th><th>Subject</th><th>Date</th><th>Labels</th></tr></thead><tbody>
${r.messages.map((m: any) => html`<tr class="${m.read ? '' : 'unread'}"><td>${m.from_name ?? m.from}</td><td><a href="/mail/message/${encodeURIComponent(m.id)}">${m.subject || '(no subject)'}</a>${m.starred ? ' ★' : ''}${m.has_attachments ? ' 📎' : ''}</td><td>${m.date}</td><td>${m.labels.join(', ')}</td></tr>`)}
</tbody></table>${next ? html`<p><a href="${next}">Next page</a></p>` : ''}`,
  };
}

export function mailMessage(app: ClawApp, id: string): { title: string; body: Raw } {
  const m = read(app, 'mail_get_message', { message_id: id }).message;
  const back = `/mail/message/${encodeURIComponent(id)}`;
  const folders = app.state.mail.folders.filter((f) => f !== m.folder && f !== 'drafts' && f !== 'sent');
  return {
    title: m.subject || '(no subject)',
    body: html`<p><b>From:</b> ${m.from_name ? `${m.from_name} <${m.from}>` : m.from}<br><b>To:</b> ${m.to.join(', ')}${m.cc.length ? html`<br><b>Cc:</b> ${m.cc.join(', ')}` : ''}<br><b>Date:</b> ${m.date}<br><b>Folder:</b> ${m.folder} · <b>Labels:</b> ${m.labels.join(', ') || '—'}</p>
<pre class="pre">${m.body}</pre>
${m.attachments.length ? html`<p><b>Attachments:</b> ${m.attachments.map((a: any) => `${a.filename} (${a.size} bytes)`).join(', ')}</p>` : ''}
${m.folder === 'drafts'
  ? toolForm('mail_send_draft', '/mail?folder=sent', '', 'Send draft', { hidden: { 'a.draft_id': m.id } })
  : html`<fieldset><legend>Reply</legend>${toolForm('mail_reply', back, html`${field('Reply text', 'a.body', { textarea: true })}<label><input type="checkbox" name="a.reply_all" value="true"> Reply all</label>`, 'Send reply', { hidden: { 'a.message_id': m.id } })}</fieldset>
<fieldset><legend>Forward</legend>${toolForm('mail_forward', back, html`${field('Forward to (comma-separated)', 'a.to', { type: 'text' })}${field('Note', 'a.body', { textarea: true })}`, 'Forward', { hidden: { 'a.message_id': m.id } })}</fieldset>`}
<fieldset><legend>Organize</legend>
${toolForm('mail_move', back, html`<label for="move_folder">Move to</label><select id="move_folder" name="a.folder">${folders.map((f: string) => html`<option>${f}</option>`)}</select>`, 'Move', { inline: true, hidden: { 'a.message_id': m.id } })}
${toolForm('mail_update_message', back, '', m.starred ? 'Unstar' : 'Star', { inline: true, hidden: { 'a.message_id': m.id, 'a.starred': String(!m.starred) } })}
${toolForm('mail_update_message', back, field('Add label', 'a.add_labels'), 'Add label', { inline: true, hidden: { 'a.message_id': m.id } })}
${toolForm('mail_update_message', back, '', 'Mark unread', { inline: true, hidden: { 'a.message_id': m.id, 'a.read': 'false' } })}
${toolForm('mail_delete', '/mail', '', 'Delete', { inline: true, hidden: { 'a.message_id': m.id } })}
</fieldset>`,
  };
}

export function mailCompose(): { title: string; body: Raw } {
  const fields = html`${field('To (comma-separated)', 'a.to')}${field('Cc', 'a.cc')}${field('Subject', 'a.subject')}${field('Body', 'a.body', { textarea: true })}`;
  return {
    title: 'Compose',
    body: html`${toolForm('mail_send', '/mail?folder=sent', fields, 'Send')}
<p class="muted">Or save it as a draft:</p>${toolForm('mail_save_draft', '/mail?folder=drafts', html`${field('To (comma-separated)', 'a.to', { placeholder: 'draft recipients' })}${field('Subject', 'a.subject')}${field('Body', 'a.body', { textarea: true })}`, 'Save draft')}`,
  };
}
