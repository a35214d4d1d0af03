// Harbor Hub's server-side validation of its three forms: field by field, with the message the form shows.
import { str, type FormBody } from '../context.ts';
import type { SessionState } from '../state.ts';
import { BOOKING_WINDOW, isWeekday, PRIORITIES, PROMO_CODES, ROOMS, slotFree, SUPPORT_CATEGORIES, TICKETS, validDate, type RoomKey } from './rules.ts';

export type Values = Record<string, string | string[]>;
export type Errors = Record<string, string>;

const EMAIL_RE = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

export function validateSupport(v: FormBody): Errors {
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

export function validateBooking(s: SessionState, v: FormBody): Errors {
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

export function validateRegister(v: FormBody): Errors {
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
