// Harbor Hub's facts and rules: rooms, slots, tickets and promo codes; which slots are taken (deterministically by
// other customers, or by this session's bookings); dates; the registration price. The tasks' ground truth reads them.
import { hash32 } from '../../sandbox/prng.ts';
import type { SessionState } from '../state.ts';

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

export function validDate(d: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(d)) return false;
  const t = new Date(`${d}T00:00:00Z`);
  return !Number.isNaN(t.getTime()) && t.toISOString().slice(0, 10) === d;
}

export function isWeekday(d: string): boolean {
  const wd = new Date(`${d}T00:00:00Z`).getUTCDay();
  return wd !== 0 && wd !== 6;
}

export function registrationTotal(ticket: string, quantity: number, promo: string): number {
  const base = (TICKETS[ticket as keyof typeof TICKETS]?.price ?? 0) * quantity;
  const off = PROMO_CODES[promo.toUpperCase()] ?? 0;
  return Math.round(base * (1 - off) * 100) / 100;
}
