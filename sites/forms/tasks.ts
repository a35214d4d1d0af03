// Ground truth and scripted plans of the form tasks (questions in tasks.jsonl).
import type { PlanStep, TaskSpec } from '../spec.ts';
import { ROOMS, SLOT_HOURS, bookedByOthers, registrationTotal, type RoomKey } from './rules.ts';

const click = (text: string, extra: { exact?: boolean; nth?: number; tag?: string[] } = {}): PlanStep => ({ click: { text, ...extra } });
const fill = (text: string, value: string): PlanStep => ({ type: { text, tag: ['input', 'textarea'], value, clear: true } });
const hh = (h: number) => `${String(h).padStart(2, '0')}:00`;

function booking(room: RoomKey, date: string, hour: number, hours: number, attendees: number, name: string, email: string): PlanStep[] {
  return [
    click('Book a room', { exact: true, tag: ['a'] }),
    click(`Room: ${ROOMS[room].label} (up to ${ROOMS[room].capacity})`),
    fill('Date', date),
    click('Check availability'),
    click(`Start time ${hh(hour)}`),
    fill('Duration (hours)', String(hours)),
    fill('Number of attendees', String(attendees)),
    fill('Full name', name),
    fill('Email', email),
    click('Book room', { exact: true }),
  ];
}

function register(name: string, email: string, phone: string, ticket: string, qty: number, extra: PlanStep[]): PlanStep[] {
  return [
    click('Harbor Summit', { exact: true, tag: ['a'] }),
    fill('Full name', name),
    fill('Email', email),
    fill('Phone', phone),
    click(`Ticket type: ${ticket}`),
    fill('Number of tickets', String(qty)),
    ...extra,
    click('I accept the terms and conditions', { tag: ['input'] }),
    click('Register', { exact: true, tag: ['button'] }),
  ];
}

function support(f: { name: string; email: string; order?: string; category: string; priority: string; subject: string; description: string; updates?: boolean }): PlanStep[] {
  return [
    click('Support', { exact: true, tag: ['a'] }),
    fill('Full name', f.name),
    fill('Email', f.email),
    ...(f.order ? [fill('Order number (optional)', f.order)] : []),
    click(`Category: ${f.category}`),
    click(`Priority: ${f.priority}`),
    fill('Subject', f.subject),
    fill('Description', f.description),
    ...(f.updates ? [click('Email me updates about this ticket')] : []),
    click('Submit ticket'),
  ];
}

/** Earliest start hour ≥ `from` with `hours` consecutive slots free of other customers' bookings. */
function earliestFree(room: RoomKey, date: string, from: number, hours: number): number {
  for (const h of SLOT_HOURS) {
    if (h < from || h + hours > 17) continue;
    let ok = true;
    for (let k = h; k < h + hours; k++) if (!SLOT_HOURS.includes(k) || bookedByOthers(room, date, k)) ok = false;
    if (ok) return h;
  }
  throw new Error(`form tasks: no free ${hours}h slot in ${room} on ${date}`);
}

const t7hour = earliestFree('board', '2026-12-09', 12, 2);
const vipTotal = registrationTotal('vip', 2, 'HARBOR25');

export const FORM_TASKS: Record<string, TaskSpec> = {
  'Forms--0': {
    level: 'easy',
    ground_truth: { checks: [{ kind: 'submission', form: 'support', fields: { full_name: 'Maria Lopez', email: 'maria.lopez@example.com', category: 'Billing', priority: 'Normal', subject: 'Charged twice', description: { contains: 'charged twice for my October membership' } } }] },
    plan: [...support({ name: 'Maria Lopez', email: 'maria.lopez@example.com', category: 'Billing', priority: 'Normal', subject: 'Charged twice', description: 'I was charged twice for my October membership invoice.' }), { answer: 'Ticket submitted.' }],
  },
  'Forms--1': {
    level: 'medium',
    ground_truth: { checks: [{ kind: 'submission', form: 'support', fields: { full_name: 'Tom Becker', email: 'tom.becker@example.com', order_number: 'ORD-48213', category: 'Shipping', priority: 'Urgent', subject: 'Parcel never arrived', description: { contains: 'ORD-48213' }, updates: true } }] },
    plan: [...support({ name: 'Tom Becker', email: 'tom.becker@example.com', order: 'ORD-48213', category: 'Shipping', priority: 'Urgent', subject: 'Parcel never arrived', description: 'My parcel for order ORD-48213 has not arrived after three weeks.', updates: true }), { answer: 'Ticket submitted.' }],
  },
  'Forms--2': {
    level: 'easy',
    ground_truth: { checks: [{ kind: 'answer', accepted: [ROOMS.board.price.toFixed(2), String(ROOMS.board.price)] }] },
    plan: [click('Rooms and prices', { tag: ['a'] }), { answer: `$${ROOMS.board.price.toFixed(2)} per hour` }],
  },
  'Forms--3': {
    level: 'easy',
    ground_truth: { checks: [{ kind: 'submission', form: 'register', fields: { full_name: 'Lena Fischer', email: 'lena.fischer@example.com', ticket: 'standard', quantity: 1 } }] },
    plan: [...register('Lena Fischer', 'lena.fischer@example.com', '+49 30 1234567', 'Standard', 1, []), { answer: 'Registered.' }],
  },
  'Forms--4': {
    level: 'medium',
    ground_truth: { checks: [{ kind: 'submission', form: 'register', fields: { full_name: 'Sam Okafor', ticket: 'student', quantity: 3, dietary: ['Vegetarian'], promo: 'SPRING10', total: registrationTotal('student', 3, 'SPRING10') } }] },
    plan: [...register('Sam Okafor', 'sam.okafor@example.com', '0207 946 0958', 'Student', 3, [click('Dietary: Vegetarian'), fill('Promo code (optional)', 'SPRING10')]), { answer: 'Registered.' }],
  },
  'Forms--5': {
    level: 'hard',
    ground_truth: {
      checks: [
        { kind: 'submission', form: 'register', fields: { full_name: 'Priya Nair', ticket: 'vip', quantity: 2, promo: 'HARBOR25', total: vipTotal } },
        { kind: 'answer', accepted: [vipTotal.toFixed(2), String(vipTotal)] },
      ],
    },
    plan: [...register('Priya Nair', 'priya.nair@example.com', '555 0100 222', 'VIP', 2, [fill('Promo code (optional)', 'HARBOR25')]), { answer: `$${vipTotal.toFixed(2)}` }],
  },
  'Forms--6': {
    level: 'medium',
    ground_truth: { checks: [{ kind: 'submission', form: 'booking', fields: { room: 'meeting', date: '2026-12-10', start_hour: 9, duration_hours: 2, attendees: 4, full_name: 'Jonas Berg' } }] },
    plan: [...booking('meeting', '2026-12-10', 9, 2, 4, 'Jonas Berg', 'jonas.berg@example.com'), { answer: 'Booked.' }],
  },
  'Forms--7': {
    level: 'hard',
    ground_truth: { checks: [{ kind: 'submission', form: 'booking', fields: { room: 'board', date: '2026-12-09', start_hour: t7hour, duration_hours: 2, attendees: 10 }, count: 1 }] },
    plan: [...booking('board', '2026-12-09', t7hour, 2, 10, 'Chen Wei', 'chen.wei@example.com'), { answer: `Booked from ${hh(t7hour)}.` }],
  },
  'Forms--8': {
    level: 'hard',
    ground_truth: { checks: [{ kind: 'submission', form: 'booking', fields: { room: 'booth', date: '2026-12-10', start_hour: 11, duration_hours: 1 }, status: 'cancelled' }] },
    plan: [...booking('booth', '2026-12-10', 11, 1, 1, 'Ana Silva', 'ana.silva@example.com'), click('Cancel booking'), { answer: 'Booked and cancelled.' }],
  },
  'Forms--9': {
    level: 'medium',
    ground_truth: {
      checks: [
        { kind: 'submission', form: 'booking', fields: { room: 'board', date: '2026-12-11', start_hour: 13, duration_hours: 2, attendees: 8 } },
        { kind: 'download', filename: '^BK-\\d+\\.ics$' },
      ],
    },
    plan: [...booking('board', '2026-12-11', 13, 2, 8, 'Omar Haddad', 'omar.haddad@example.com'), click('Add to calendar (.ics)'), { answer: 'Booked and downloaded.' }],
  },
  'Forms--10': {
    level: 'easy',
    ground_truth: { checks: [{ kind: 'answer', accepted: ['2026-12-15', '15 December 2026', 'December 15, 2026', 'December 15 2026', '15 Dec 2026', 'Dec 15, 2026'] }] },
    plan: [click('Register for Harbor Summit 2026'), { answer: '2026-12-15' }],
  },
};
