// "Harbor Hub": a form-heavy site — support tickets, meeting-room booking (availability fetched late
// from a JSON API, cancel asks confirm(), .ics download) and event registration (promo codes, terms
// in a new tab). Every form is validated on the server and re-rendered with messages.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { countView, formBody, list, recordDownload, sendHtml, str, type FormBody, type SiteContext } from '../context.ts';
import { html, money, page } from '../html.ts';
import type { SessionState, Submission } from '../state.ts';
import { bookingForm, layout, P, registerForm, submissionPage, supportForm } from './pages.ts';
import { BOOKING_WINDOW, isWeekday, registrationTotal, ROOMS, slotFree, SLOT_HOURS, validDate, type RoomKey } from './rules.ts';
import { validateBooking, validateRegister, validateSupport } from './validate.ts';

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
