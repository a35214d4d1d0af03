// Harbor Hub's pages: the layout (nav, survey modal), form fields, the support, booking and registration forms with
// their messages, and a submission's confirmation page.
import type { FastifyRequest } from 'fastify';
import { list, str } from '../context.ts';
import { Html, html, modal, money, page } from '../html.ts';
import type { Submission } from '../state.ts';
import { BOOKING_WINDOW, PRIORITIES, ROOMS, SUPPORT_CATEGORIES, TICKETS, type RoomKey } from './rules.ts';
import type { Errors, Values } from './validate.ts';

export const P = '/forms';
const CSS = `.field{margin:0 0 14px}.field label.lbl{display:block;font-weight:600;margin-bottom:4px}.opts{display:flex;gap:16px;flex-wrap:wrap}
.opts label{display:flex;gap:6px;align-items:center}.hint{font-size:13px;color:#667085}.links a{display:block;margin:6px 0}
input.wide,textarea{width:420px}textarea{height:90px}.slots label{border:1px solid #d0d5dd;border-radius:6px;padding:4px 8px;background:#fff}`;


export function layout(req: FastifyRequest, title: string, body: Html, script?: string): string {
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

export function supportForm(req: FastifyRequest, v: Values = {}, e: Errors = {}): string {
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

const SLOTS_JS = `(function(){var btn=document.getElementById('check'),box=document.getElementById('slots');
btn.addEventListener('click',function(){var room=document.querySelector('input[name=room]:checked');var date=document.getElementById('date').value.trim();
if(!room||!date){box.innerHTML='<span class="error">Choose a room and a date first.</span>';return;}
box.textContent='Checking availability…';
fetch('${P}/api/slots?room='+encodeURIComponent(room.value)+'&date='+encodeURIComponent(date)).then(function(r){return r.json();}).then(function(d){
if(d.error){box.innerHTML='<span class="error">'+d.error+'</span>';return;}
box.innerHTML='<div class="opts slots">'+d.slots.map(function(s){var t=(s.hour<10?'0':'')+s.hour+':00';
return s.free?'<label><input type="radio" name="start_hour" value="'+s.hour+'" aria-label="Start time '+t+'"> '+t+'</label>':'<label class="muted" style="text-decoration:line-through">'+t+' (booked)</label>';}).join('')+'</div>';
});});})();`;

export function bookingForm(req: FastifyRequest, v: Values = {}, e: Errors = {}): string {
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

export function registerForm(req: FastifyRequest, v: Values = {}, e: Errors = {}): string {
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

export function submissionPage(req: FastifyRequest, sub: Submission): string {
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
