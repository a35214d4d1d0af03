// "Harbor Hub": a form-heavy site — support tickets, meeting-room booking (availability fetched late
// from a JSON API, cancel asks confirm(), .ics download) and event registration (promo codes, terms
// in a new tab). Every form is validated on the server and re-rendered with messages.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { countView, formBody, list, recordDownload, sendHtml, str, type FormBody, type SiteContext } from '../context.ts';
import { Html, html, modal, money, page } from '../html.ts';
import { hash32 } from '../../sandbox/prng.ts';
import type { SessionState, Submission } from '../state.ts';

const P = '/forms';
const CSS = `.field{margin:0 0 14px}.field label.lbl{display:block;font-weight:600;margin-bottom:4px}.opts{display:flex;gap:16px;flex-wrap:wrap}
.opts label{display:flex;gap:6px;align-items:center}.hint{font-size:13px;color:#667085}.links a{display:block;margin:6px 0}
input.wide,textarea{width:420px}textarea{height:90px}.slots label{border:1px solid #d0d5dd;border-radius:6px;padding:4px 8px;background:#fff}`;

export const ROOMS = {
  booth: { label: 'Focus booth', capacity: 2, price: 15 },
  meeting: { label: 'Meeting room', capacity: 6, price: 40 },
  board: { label: 'Board room', capacity: 12, price: 90 },
} as const;
export type RoomKey = keyof typeof ROOMS;
export const SLOT_HOURS = [9, 10, 11, 12, 13, 14, 15, 16];
export const TICKETS = { standard: { label: 'Standard', price: 120 }, student: { label: 'Student', price: 60 }, vip: { label: 'VIP', price: 300 } } as const;
export const PROMO_CODES: Record<string, number> = { SPRING10: 0.1, HARBOR25: 0.25 };
export const SUPPORT_CATEGORIES = ['Billing', 'Technical', 'Shipping', 'Account'];
export const PRIORITIES = ['Low', 'Normal', 'High', 'Urgent'];
export const BOOKING_WINDOW = { from: '2026-12-01', to: '2027-03-31' };

/** Slots taken by other (fictional) customers: deterministic per room, date and hour. */
export function bookedByOthers(room: string, date: string, hour: number): boolean {
  return hash32(`${room}|${date}|${hour}`) % 3 === 0;
}

function bookedBySession(s: SessionState, room: string, date: string, hour: number): boolean {
  return s.forms.submissions.some(
    (b) => b.form === 'booking' && b.status === 'active' && b.fields.room === room && b.fields.date === date &&
      hour >= Number(b.fields.start_hour) && hour < Number(b.fields.start_hour) + Number(b.fields.duration_hours),
  );
}

export function slotFree(s: SessionState, room: string, date: string, hour: number): boolean {
  return SLOT_HOURS.includes(hour) && !bookedByOthers(room, date, hour) && !bookedBySession(s, room, date, hour);
}

function validDate(d: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(d)) return false;
  const t = new Date(`${d}T00:00:00Z`);
  return !Number.isNaN(t.getTime()) && t.toISOString().slice(0, 10) === d;
}

export function isWeekday(d: string): boolean {
  const wd = new Date(`${d}T00:00:00Z`).getUTCDay();
  return wd !== 0 && wd !== 6;
}

function layout(req: FastifyRequest, title: string, body: Html, script?: string): string {
  const s = req.groveSession;
  return page({
    title: `${title} | Harbor Hub`,
    brand: 'Harbor Hub',
    accent: '#0e7c66',
    home: `${P}/`,
    nav: [
      { href: `${P}/booking`, label: 'Book a room' },
      { href: `${P}/register`, label: 'Harbor Summit' },
      { href: `${P}/support`, label: 'Support' },
      { href: `${P}/account`, label: 'My bookings' },
    ],
    body,
    modal: s.popups.forms_survey
      ? undefined
      : modal({
          id: 'survey',
          dismissUrl: `${P}/api/survey`,
          title: 'Help us improve Harbor Hub',
          text: 'Would you answer a one-minute survey about your visit today?',
          buttons: [{ label: 'Maybe later', value: 'later' }, { label: 'Sure', value: 'accepted', primary: true }],
        }),
    script,
    extraCss: CSS,
  });
}

type Values = Record<string, string | string[]>;
type Errors = Record<string, string>;

function textField(name: string, label: string, v: Values, e: Errors, o: { type?: string; hint?: string; textarea?: boolean } = {}): Html {
  const val = str(v[name]);
  return html`<div class="field"><label class="lbl" for="${name}">${label}</label>
${o.textarea ? html`<textarea id="${name}" name="${name}" aria-label="${label}">${val}</textarea>` : html`<input class="wide" id="${name}" name="${name}" type="${o.type ?? 'text'}" value="${val}" aria-label="${label}">`}
${o.hint ? html`<div class="hint">${o.hint}</div>` : ''}${e[name] ? html`<div class="error" role="alert">${e[name]}</div>` : ''}</div>`;
}

function radios(name: string, label: string, options: { value: string; label: string }[], v: Values, e: Errors): Html {
  return html`<div class="field" role="radiogroup" aria-label="${label}"><span class="lbl" style="font-weight:600">${label}</span><div class="opts">
${options.map((o) => html`<label><input type="radio" name="${name}" value="${o.value}" ${str(v[name]) === o.value ? 'checked' : ''} aria-label="${label}: ${o.label}"> ${o.label}</label>`)}
</div>${e[name] ? html`<div class="error" role="alert">${e[name]}</div>` : ''}</div>`;
}

function checkbox(name: string, value: string, label: string, checked: boolean, ariaLabel = label, extra: Html | string = ''): Html {
  return html`<label><input type="checkbox" name="${name}" value="${value}" ${checked ? new Html('checked') : ''} aria-label="${ariaLabel}"> ${label}${extra}</label>`;
}

const EMAIL_RE = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

// ---- support ----
function supportForm(req: FastifyRequest, v: Values = {}, e: Errors = {}): string {
  const body = html`<h1>Contact support</h1>${Object.keys(e).length ? html`<div class="errors" role="alert">Your ticket was not sent: please fix ${Object.keys(e).length} field(s) below.</div>` : ''}
<form class="card" method="post" action="${P}/support" novalidate>
${textField('full_name', 'Full name', v, e)}${textField('email', 'Email', v, e, { type: 'email' })}
${textField('order_number', 'Order number (optional)', v, e, { hint: 'Format ORD-12345' })}
${radios('category', 'Category', SUPPORT_CATEGORIES.map((c) => ({ value: c, label: c })), v, e)}
${radios('priority', 'Priority', PRIORITIES.map((c) => ({ value: c, label: c })), v, e)}
${textField('subject', 'Subject', v, e)}${textField('description', 'Description', v, e, { textarea: true, hint: 'At least 20 characters.' })}
<div class="field">${checkbox('updates', 'yes', 'Email me updates about this ticket', str(v.updates) === 'yes')}</div>
<button type="submit">Submit ticket</button></form>`;
  return layout(req, 'Support', body);
}

function validateSupport(v: FormBody): Errors {
  const e: Errors = {};
  if (!str(v.full_name)) e.full_name = 'Full name is required.';
  if (!EMAIL_RE.test(str(v.email))) e.email = 'Enter a valid email address.';
  if (str(v.order_number) && !/^ORD-\d{5}$/.test(str(v.order_number))) e.order_number = 'Order numbers look like ORD-12345.';
  if (!SUPPORT_CATEGORIES.includes(str(v.category))) e.category = 'Choose a category.';
  if (!PRIORITIES.includes(str(v.priority))) e.priority = 'Choose a priority.';
  if (!str(v.subject)) e.subject = 'Subject is required.';
  else if (str(v.subject).length > 80) e.subject = 'Subject must be at most 80 characters.';
  if (str(v.description).length < 20) e.description = 'Description must be at least 20 characters.';
  return e;
}

// ---- booking ----
const SLOTS_JS = `(function(){var btn=document.getElementById('check'),box=document.getElementById('slots');
btn.addEventListener('click',function(){var room=document.querySelector('input[name=room]:checked');var date=document.getElementById('date').value.trim();
if(!room||!date){box.innerHTML='<span class="error">Choose a room and a date first.</span>';return;}
box.textContent='Checking availability…';
fetch('${P}/api/slots?room='+encodeURIComponent(room.value)+'&date='+encodeURIComponent(date)).then(function(r){return r.json();}).then(function(d){
if(d.error){box.innerHTML='<span class="error">'+d.error+'</span>';return;}
box.innerHTML='<div class="opts slots">'+d.slots.map(function(s){var t=(s.hour<10?'0':'')+s.hour+':00';
return s.free?'<label><input type="radio" name="start_hour" value="'+s.hour+'" aria-label="Start time '+t+'"> '+t+'</label>':'<label class="muted" style="text-decoration:line-through">'+t+' (booked)</label>';}).join('')+'</div>';
});});})();`;

function bookingForm(req: FastifyRequest, v: Values = {}, e: Errors = {}): string {
  const body = html`<h1>Book a room</h1><p class="muted">Weekdays 09:00–17:00, ${BOOKING_WINDOW.from} to ${BOOKING_WINDOW.to}. See <a href="${P}/rooms">rooms and prices</a>.</p>
${Object.keys(e).length ? html`<div class="errors" role="alert">The booking could not be made: please fix the fields below.</div>` : ''}
<form class="card" method="post" action="${P}/booking" novalidate>
${radios('room', 'Room', (Object.keys(ROOMS) as RoomKey[]).map((k) => ({ value: k, label: `${ROOMS[k].label} (up to ${ROOMS[k].capacity})` })), v, e)}
${textField('date', 'Date', v, e, { hint: 'YYYY-MM-DD' })}
<div class="field"><button type="button" class="secondary" id="check">Check availability</button>
<div id="slots" aria-live="polite" style="margin-top:8px"></div>${e.start_hour ? html`<div class="error" role="alert">${e.start_hour}</div>` : ''}</div>
${textField('duration_hours', 'Duration (hours)', v, e, { type: 'number', hint: '1 to 3 hours' })}
${textField('attendees', 'Number of attendees', v, e, { type: 'number' })}
${textField('full_name', 'Full name', v, e)}${textField('email', 'Email', v, e, { type: 'email' })}
<button type="submit">Book room</button></form>`;
  return layout(req, 'Book a room', body, SLOTS_JS);
}

function validateBooking(s: SessionState, v: FormBody): Errors {
  const e: Errors = {};
  const room = str(v.room) as RoomKey;
  const date = str(v.date);
  if (!(room in ROOMS)) e.room = 'Choose a room.';
  if (!validDate(date)) e.date = 'Enter the date as YYYY-MM-DD.';
  else if (date < BOOKING_WINDOW.from || date > BOOKING_WINDOW.to) e.date = `Bookings are open from ${BOOKING_WINDOW.from} to ${BOOKING_WINDOW.to}.`;
  else if (!isWeekday(date)) e.date = 'We are closed at weekends.';
  const hour = Number(str(v.start_hour));
  const dur = Number(str(v.duration_hours));
  if (!Number.isInteger(dur) || dur < 1 || dur > 3) e.duration_hours = 'Duration must be 1, 2 or 3 hours.';
  if (!str(v.start_hour)) e.start_hour = 'Check availability and choose a start time.';
  else if (!e.room && !e.date && !e.duration_hours) {
    for (let h = hour; h < hour + dur; h++) {
      if (h >= 17 || !slotFree(s, room, date, h)) {
        e.start_hour = `The room is not free for ${dur} hour(s) from ${hour}:00.`;
        break;
      }
    }
  }
  const att = Number(str(v.attendees));
  if (!Number.isInteger(att) || att < 1) e.attendees = 'Enter the number of attendees.';
  else if (room in ROOMS && att > ROOMS[room].capacity) e.attendees = `The ${ROOMS[room].label} holds at most ${ROOMS[room].capacity} people.`;
  if (!str(v.full_name)) e.full_name = 'Full name is required.';
  if (!EMAIL_RE.test(str(v.email))) e.email = 'Enter a valid email address.';
  return e;
}

// ---- registration ----
function registerForm(req: FastifyRequest, v: Values = {}, e: Errors = {}): string {
  const diets = list(v.dietary);
  const body = html`<h1>Register for Harbor Summit 2026</h1><p class="muted">One day of talks on 2026-12-15. Prices per ticket: ${Object.values(TICKETS).map((t) => `${t.label} ${money(t.price)}`).join(' · ')}.</p>
${Object.keys(e).length ? html`<div class="errors" role="alert">Registration failed: please fix the fields below.</div>` : ''}
<form class="card" method="post" action="${P}/register" novalidate>
${textField('full_name', 'Full name', v, e)}${textField('email', 'Email', v, e, { type: 'email' })}${textField('phone', 'Phone', v, e, { type: 'tel', hint: '7 to 15 digits, may start with +' })}
${radios('ticket', 'Ticket type', (Object.keys(TICKETS) as (keyof typeof TICKETS)[]).map((k) => ({ value: k, label: TICKETS[k].label })), v, e)}
${textField('quantity', 'Number of tickets', v, e, { type: 'number', hint: '1 to 5' })}
<div class="field"><span class="lbl" style="font-weight:600">Dietary requirements</span><div class="opts">
${['Vegetarian', 'Vegan', 'Gluten-free'].map((d) => checkbox('dietary', d, d, diets.includes(d), `Dietary: ${d}`))}</div></div>
${textField('promo', 'Promo code (optional)', v, e)}
<div class="field">${checkbox('terms', 'yes', 'I accept the ', str(v.terms) === 'yes', 'I accept the terms and conditions', html`<a href="${P}/terms" target="_blank" rel="noopener">terms and conditions</a>`)}
${e.terms ? html`<div class="error" role="alert">${e.terms}</div>` : ''}</div>
<button type="submit">Register</button></form>`;
  return layout(req, 'Register', body);
}

function validateRegister(v: FormBody): Errors {
  const e: Errors = {};
  if (!str(v.full_name)) e.full_name = 'Full name is required.';
  if (!EMAIL_RE.test(str(v.email))) e.email = 'Enter a valid email address.';
  const digits = str(v.phone).replace(/[\s-]/g, '');
  if (!/^\+?\d{7,15}$/.test(digits)) e.phone = 'Enter a phone number of 7 to 15 digits.';
  if (!(str(v.ticket) in TICKETS)) e.ticket = 'Choose a ticket type.';
  const q = Number(str(v.quantity));
  if (!Number.isInteger(q) || q < 1 || q > 5) e.quantity = 'You can buy 1 to 5 tickets.';
  const promo = str(v.promo).toUpperCase();
  if (promo && !(promo in PROMO_CODES)) e.promo = 'This promo code is not valid.';
  if (str(v.terms) !== 'yes') e.terms = 'You must accept the terms and conditions.';
  return e;
}

export function registrationTotal(ticket: string, quantity: number, promo: string): number {
  const base = (TICKETS[ticket as keyof typeof TICKETS]?.price ?? 0) * quantity;
  const off = PROMO_CODES[promo.toUpperCase()] ?? 0;
  return Math.round(base * (1 - off) * 100) / 100;
}

function submissionPage(req: FastifyRequest, sub: Submission): string {
  const f = sub.fields;
  const cancelled = sub.status === 'cancelled';
  let body: Html;
  if (sub.form === 'support') {
    body = html`<div class="notice" role="status">Ticket ${sub.ref} created. We will reply to ${f.email} within one business day.</div>
<div class="card"><h1>Ticket ${sub.ref}</h1><p><b>${f.subject}</b> · ${f.category} · ${f.priority} priority</p><p>${f.description}</p></div>`;
  } else if (sub.form === 'booking') {
    const room = ROOMS[f.room as RoomKey];
    body = html`${cancelled ? html`<div class="errors" role="status">Booking ${sub.ref} has been cancelled.</div>` : html`<div class="notice" role="status">Booking ${sub.ref} confirmed.</div>`}
<div class="card"><h1>Booking ${sub.ref}</h1><p>${room.label} on ${f.date} from ${String(f.start_hour).padStart(2, '0')}:00 for ${f.duration_hours} hour(s), ${f.attendees} attendee(s).</p>
<p>Price: ${money(room.price * Number(f.duration_hours))}</p>
${cancelled ? '' : html`<div class="actions" style="display:flex;gap:10px"><a class="btn secondary" href="${P}/booking/${sub.ref}/calendar.ics" download>Add to calendar (.ics)</a>
<form method="post" action="${P}/booking/${sub.ref}/cancel" onsubmit="return confirm('Cancel booking ${sub.ref}? This cannot be undone.')"><button type="submit" class="secondary">Cancel booking</button></form></div>`}</div>`;
  } else {
    body = html`<div class="notice" role="status">You are registered! Confirmation ${sub.ref}.</div>
<div class="card"><h1>Registration ${sub.ref}</h1><p>${f.quantity} × ${TICKETS[f.ticket as keyof typeof TICKETS].label} ticket(s) for ${f.full_name}.</p><p>Total paid: <b>${money(Number(f.total))}</b></p></div>`;
  }
  return layout(req, sub.ref, body);
}

function fieldsOf(v: FormBody, names: string[]): Submission['fields'] {
  const out: Submission['fields'] = {};
  for (const n of names) out[n] = str(v[n]);
  return out;
}

export function registerForms(app: FastifyInstance, ctx: SiteContext): void {
  const find = (s: SessionState, ref: string) => s.forms.submissions.find((x) => x.ref === ref);
  const submit = (req: FastifyRequest, form: string, prefix: string, base: number, fields: Submission['fields']) => {
    const s = req.groveSession;
    const sub: Submission = { form, ref: ctx.store.nextRef(s, prefix, base), fields, status: 'active', submitted_at: new Date().toISOString() };
    s.forms.submissions.push(sub);
    return sub;
  };

  app.get(`${P}`, async (_req, reply) => reply.redirect(`${P}/`));
  app.get(`${P}/`, async (req, reply) => {
    countView(req, 'forms');
    const body = html`<h1>Welcome to Harbor Hub</h1><p>Coworking rooms, events and help — all in one place.</p>
<div class="card links"><a href="${P}/booking">Book a meeting room</a><a href="${P}/rooms">Rooms and prices</a><a href="${P}/register">Register for Harbor Summit 2026</a><a href="${P}/support">Contact support</a></div>`;
    return sendHtml(reply, layout(req, 'Home', body));
  });
  app.get(`${P}/rooms`, async (req, reply) => {
    countView(req, 'forms');
    const body = html`<h1>Rooms and prices</h1><div class="card"><table><tr><th>Room</th><th>Capacity</th><th>Price per hour</th></tr>
${(Object.keys(ROOMS) as RoomKey[]).map((k) => html`<tr><td>${ROOMS[k].label}</td><td>${ROOMS[k].capacity} people</td><td>${money(ROOMS[k].price)}</td></tr>`)}</table></div>
<p><a class="btn" href="${P}/booking">Book a room</a></p>`;
    return sendHtml(reply, layout(req, 'Rooms', body));
  });
  app.get(`${P}/terms`, async (req, reply) =>
    sendHtml(reply, page({ title: 'Terms and conditions | Harbor Hub', brand: 'Harbor Hub', accent: '#0e7c66', home: `${P}/`, nav: [],
      body: html`<h1>Terms and conditions</h1><div class="card"><p>Tickets are refundable until 14 days before the event.</p><p>Room bookings can be cancelled free of charge until 24 hours before the start.</p></div>` })));
  app.post(`${P}/api/survey`, async (req, reply) => {
    req.groveSession.popups.forms_survey = str((req.body as Record<string, string> | undefined)?.choice) || 'closed';
    return reply.code(204).send();
  });

  app.get(`${P}/support`, async (req, reply) => {
    countView(req, 'forms');
    return sendHtml(reply, supportForm(req));
  });
  app.post(`${P}/support`, async (req, reply) => {
    const v = formBody(req);
    const e = validateSupport(v);
    if (Object.keys(e).length) {
      req.groveSession.forms.failed_attempts += 1;
      return sendHtml(reply, supportForm(req, v, e), 422);
    }
    const fields = fieldsOf(v, ['full_name', 'email', 'order_number', 'category', 'priority', 'subject', 'description']);
    fields.updates = str(v.updates) === 'yes';
    const sub = submit(req, 'support', 'TCK', 1001, fields);
    return reply.redirect(`${P}/done/${sub.ref}`, 303);
  });

  app.get(`${P}/booking`, async (req, reply) => {
    countView(req, 'forms');
    return sendHtml(reply, bookingForm(req));
  });
  app.get<{ Querystring: { room?: string; date?: string } }>(`${P}/api/slots`, async (req, reply) => {
    await ctx.delay(req.url);
    const room = req.query.room ?? '';
    const date = (req.query.date ?? '').trim();
    if (!(room in ROOMS)) return reply.send({ error: 'Unknown room.' });
    if (!validDate(date)) return reply.send({ error: 'Enter the date as YYYY-MM-DD.' });
    if (date < BOOKING_WINDOW.from || date > BOOKING_WINDOW.to) return reply.send({ error: `Bookings are open from ${BOOKING_WINDOW.from} to ${BOOKING_WINDOW.to}.` });
    if (!isWeekday(date)) return reply.send({ error: 'We are closed at weekends.' });
    return reply.header('cache-control', 'no-store').send({ room, date, slots: SLOT_HOURS.map((h) => ({ hour: h, free: slotFree(req.groveSession, room, date, h) })) });
  });
  app.post(`${P}/booking`, async (req, reply) => {
    const v = formBody(req);
    const e = validateBooking(req.groveSession, v);
    if (Object.keys(e).length) {
      req.groveSession.forms.failed_attempts += 1;
      return sendHtml(reply, bookingForm(req, v, e), 422);
    }
    const f = fieldsOf(v, ['room', 'date', 'full_name', 'email']);
    f.start_hour = Number(str(v.start_hour));
    f.duration_hours = Number(str(v.duration_hours));
    f.attendees = Number(str(v.attendees));
    const sub = submit(req, 'booking', 'BK', 2001, f);
    return reply.redirect(`${P}/done/${sub.ref}`, 303);
  });
  app.post<{ Params: { ref: string } }>(`${P}/booking/:ref/cancel`, async (req, reply) => {
    const sub = find(req.groveSession, req.params.ref);
    if (!sub || sub.form !== 'booking') return reply.code(404).send('no such booking');
    sub.status = 'cancelled';
    return reply.redirect(`${P}/done/${sub.ref}`, 303);
  });
  app.get<{ Params: { ref: string } }>(`${P}/booking/:ref/calendar.ics`, async (req, reply) => {
    const sub = find(req.groveSession, req.params.ref);
    if (!sub || sub.form !== 'booking') return reply.code(404).send('no such booking');
    const f = sub.fields;
    const d = String(f.date).replace(/-/g, '');
    const hh = (h: number) => String(h).padStart(2, '0');
    const filename = `${sub.ref}.ics`;
    recordDownload(req, filename);
    const ics = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Harbor Hub//Grove offline site//EN', 'BEGIN:VEVENT', `UID:${sub.ref}@harborhub.test`,
      `DTSTART:${d}T${hh(Number(f.start_hour))}0000`, `DTEND:${d}T${hh(Number(f.start_hour) + Number(f.duration_hours))}0000`,
      `SUMMARY:${ROOMS[f.room as RoomKey].label} booking ${sub.ref}`, 'END:VEVENT', 'END:VCALENDAR'].join('\r\n');
    return reply.header('content-type', 'text/calendar; charset=utf-8').header('content-disposition', `attachment; filename="${filename}"`).send(ics + '\r\n');
  });

  app.get(`${P}/register`, async (req, reply) => {
    countView(req, 'forms');
    return sendHtml(reply, registerForm(req));
  });
  app.post(`${P}/register`, async (req, reply) => {
    const v = formBody(req);
    const e = validateRegister(v);
    if (Object.keys(e).length) {
      req.groveSession.forms.failed_attempts += 1;
      return sendHtml(reply, registerForm(req, v, e), 422);
    }
    const f = fieldsOf(v, ['full_name', 'email', 'phone', 'ticket']);
    f.quantity = Number(str(v.quantity));
    f.dietary = list(v.dietary);
    f.promo = str(v.promo).toUpperCase();
    f.total = registrationTotal(str(v.ticket), Number(f.quantity), str(v.promo));
    const sub = submit(req, 'register', 'REG', 3001, f);
    return reply.redirect(`${P}/done/${sub.ref}`, 303);
  });

  app.get<{ Params: { ref: string } }>(`${P}/done/:ref`, async (req, reply) => {
    countView(req, 'forms');
    const sub = find(req.groveSession, req.params.ref);
    if (!sub) return sendHtml(reply, layout(req, 'Not found', html`<h1>Not found</h1>`), 404);
    return sendHtml(reply, submissionPage(req, sub));
  });
  app.get(`${P}/account`, async (req, reply) => {
    countView(req, 'forms');
    const subs = req.groveSession.forms.submissions;
    const body = html`<h1>My bookings and tickets</h1>${subs.length === 0 ? html`<p class="card">Nothing yet.</p>` : subs.map((x) => html`<div class="card"><a href="${P}/done/${x.ref}">${x.ref}</a> · ${x.form} · ${x.status}</div>`)}`;
    return sendHtml(reply, layout(req, 'My bookings', body));
  });
}
