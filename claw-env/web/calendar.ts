// Calendar pages: a week of events in the user's zone, an event with RSVP/edit/delete, new event, free/busy.
import type { ClawApp } from '../app.ts';
import { localDate } from '../time.ts';
import { field, html, toolForm, type Raw } from './html.ts';
import { read, WebError } from './read.ts';

/** A `YYYY-MM-DD` query parameter (a bad one is a 400, not a failed date computation). */
function dateParam(url: URL, name: string, fallback: string): string {
  const v = url.searchParams.get(name);
  if (v === null || v === '') return fallback;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(v) || !Number.isFinite(Date.parse(`${v}T00:00:00Z`))) throw new WebError(400, `${name} must be a date (YYYY-MM-DD).`);
  return v;
}

const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

export function calendarWeek(app: ClawApp, url: URL): { title: string; body: Raw } {
  const tz = app.state.user.timezone;
  const start = dateParam(url, 'start', localDate(app.clock.now(), tz));
  const r = read(app, 'calendar_list_events', { start: `${start}T00:00`, end: `${addDays(start, 7)}T00:00`, page_size: 100 });
  const me = app.state.user.email;
  return {
    title: `Calendar — week of ${start}`,
    body: html`<p>Times in ${tz}. <a href="/calendar?start=${addDays(start, -7)}">Previous week</a> · <a href="/calendar?start=${addDays(start, 7)}">Next week</a> · <a href="/calendar/new">New event</a> · <a href="/calendar/freebusy">Free/busy</a></p>
<form method="get" action="/calendar"><label for="start">Week starting</label><input id="start" name="start" type="date" value="${start}"><button>Go</button></form>
<table><thead><tr><th>Start</th><th>End</th><th>Title</th><th>Location</th><th>Organizer</th><th>My response</th></tr></thead><tbody>
${r.events.map((e: any) => html`<tr><td>${e.start_local.slice(0, 16).replace('T', ' ')}</td><td>${e.end_local.slice(11, 16)}</td><td><a href="/calendar/event/${encodeURIComponent(e.id)}">${e.title}</a>${e.recurring ? ' ↻' : ''}</td><td>${e.location}</td><td>${e.organizer}</td><td>${e.organizer === me ? 'organizer' : (e.attendees.find((a: any) => a.email === me)?.response ?? '')}</td></tr>`)}
</tbody></table>`,
  };
}

export function calendarEvent(app: ClawApp, id: string): { title: string; body: Raw } {
  const e = read(app, 'calendar_get_event', { event_id: id }).event;
  const me = app.state.user.email;
  const back = `/calendar/event/${encodeURIComponent(id)}`;
  const mine = e.organizer === me;
  const invited = e.attendees.find((a: any) => a.email === me);
  return {
    title: e.title,
    body: html`<p><b>When:</b> ${e.start_local} – ${e.end_local} (${e.timezone})<br><b>Where:</b> ${e.location || '—'}<br><b>Organizer:</b> ${e.organizer}<br><b>Attendees:</b> ${e.attendees.map((a: any) => `${a.email} (${a.response})`).join(', ') || '—'}${e.recurring ? html`<br><b>Repeats:</b> ${JSON.stringify(e.recurrence)}` : ''}</p>
<p>${e.description}</p>
${invited && !mine ? html`<fieldset><legend>Respond</legend>${['accepted', 'tentative', 'declined'].map((r) => toolForm('calendar_respond', back, '', r === 'accepted' ? 'Accept' : r === 'declined' ? 'Decline' : 'Maybe', { inline: true, hidden: { 'a.event_id': e.event_id, 'a.response': r } }))}</fieldset>` : ''}
${mine ? html`<fieldset><legend>Edit</legend>${toolForm('calendar_update_event', back, html`${field('Title', 'a.title', { value: e.title })}${field('Start', 'a.start', { value: e.start_local.slice(0, 16), type: 'datetime-local' })}${field('End', 'a.end', { value: e.end_local.slice(0, 16), type: 'datetime-local' })}${field('Time zone', 'a.timezone', { value: e.timezone })}${field('Location', 'a.location', { value: e.location })}${field('Attendees (comma-separated)', 'a.attendees', { value: e.attendees.map((a: any) => a.email).join(', ') })}`, 'Save changes', { hidden: { 'a.event_id': e.event_id } })}</fieldset>` : ''}
${toolForm('calendar_delete_event', '/calendar', '', mine ? 'Delete event' : 'Remove from my calendar', { hidden: { 'a.event_id': e.event_id } })}`,
  };
}

export function calendarNew(app: ClawApp): { title: string; body: Raw } {
  return {
    title: 'New event',
    body: toolForm(
      'calendar_create_event',
      '/calendar',
      html`${field('Title', 'a.title')}${field('Start', 'a.start', { type: 'datetime-local' })}${field('End', 'a.end', { type: 'datetime-local' })}${field('Time zone', 'a.timezone', { value: app.state.user.timezone })}${field('Attendees (comma-separated)', 'a.attendees')}${field('Location', 'a.location')}${field('Description', 'a.description', { textarea: true })}
<label for="f_rec">Repeats</label><select id="f_rec" name="a.recurrence.freq"><option value="">never</option><option>daily</option><option>weekly</option><option>monthly</option></select>${field('Occurrences', 'a.recurrence.count', { type: 'number' })}`,
      'Create event',
    ),
  };
}

export function calendarFreeBusy(app: ClawApp, url: URL): { title: string; body: Raw } {
  const emails = url.searchParams.get('emails') ?? '';
  const date = dateParam(url, 'date', localDate(app.clock.now(), app.state.user.timezone));
  let result: Raw = html``;
  if (emails) {
    const list = emails.split(',').map((s) => s.trim()).filter(Boolean);
    const r = read(app, 'calendar_free_busy', { emails: list, start: `${date}T00:00`, end: `${addDays(date, 1)}T00:00` });
    result = html`${Object.entries(r.calendars as Record<string, any[]>).map(([who, busy]) => html`<h2>${who}</h2><ul>${busy.length ? busy.map((b) => html`<li>busy ${b.start_local.slice(11, 16)}–${b.end_local.slice(11, 16)} (${b.start} – ${b.end} UTC)</li>`) : html`<li>free all day</li>`}</ul>`)}`;
  }
  return {
    title: 'Free/busy',
    body: html`<form method="get" action="/calendar/freebusy">${field('Emails (comma-separated)', 'emails', { value: emails })}${field('Date', 'date', { value: date, type: 'date' })}<button>Check</button></form><p class="muted">Times in ${app.state.user.timezone}.</p>${result}`,
  };
}
