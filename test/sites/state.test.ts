// Server-side state of the offline sites, through fastify inject (no port): sessions, cart, checkout
// validation, favourites, shopping list, forms validation, bookings, downloads, the state endpoint.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildSitesApp } from '../../sites/server.ts';
import type { SessionStore } from '../../sites/state.ts';
import { bookedByOthers } from '../../sites/forms/rules.ts';

let app: FastifyInstance;
let store: SessionStore;
beforeEach(async () => {
  ({ app, store } = buildSitesApp({ apiDelayMs: [0, 0] }));
  await app.ready();
});
afterEach(async () => {
  await app.close();
});

const cookie = (sid: string) => ({ cookie: `grove_session=${sid}` });
const form = (sid: string, url: string, body: Record<string, string | string[]>) => {
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(body)) for (const x of Array.isArray(v) ? v : [v]) sp.append(k, x);
  return app.inject({ method: 'POST', url, headers: { ...cookie(sid), 'content-type': 'application/x-www-form-urlencoded' }, payload: sp.toString() });
};
const state = async (sid: string) => (await app.inject({ url: `/__grove/state/${sid}` })).json();

describe('sessions', () => {
  it('takes the session from ?grove_session, sets the cookie, and keeps state per session', async () => {
    const r = await app.inject({ url: '/shop/?grove_session=ep-1' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['set-cookie']).toContain('grove_session=ep-1; Path=/');
    await form('ep-1', '/shop/cart/add', { product_id: 'p004', qty: '2' });
    expect((await state('ep-1')).shop.cart).toEqual([{ product_id: 'p004', name: 'Kestrel Nova Wireless Headphones', price: 53.95, qty: 2 }]);
    await app.inject({ url: '/shop/?grove_session=ep-2' });
    expect((await state('ep-2')).shop.cart).toEqual([]);
  });

  it('answers 404 for an unknown session and rejects malformed ids', async () => {
    expect((await app.inject({ url: '/__grove/state/nope' })).statusCode).toBe(404);
    const r = await app.inject({ url: '/shop/?grove_session=bad id!' });
    expect(r.headers['set-cookie']).toMatch(/grove_session=anon-/);
    expect(store.get('bad id!')).toBeUndefined();
  });

  it('shows the cookie modal until it is dismissed', async () => {
    expect((await app.inject({ url: '/shop/?grove_session=c1' })).body).toContain('Accept all cookies');
    const r = await app.inject({ method: 'POST', url: '/shop/api/consent', headers: cookie('c1'), payload: { choice: 'accepted' } });
    expect(r.statusCode).toBe(204);
    expect((await app.inject({ url: '/shop/', headers: cookie('c1') })).body).not.toContain('Accept all cookies');
    expect((await state('c1')).popups).toEqual({ shop_cookies: 'accepted' });
  });
});

describe('shop', () => {
  it('searches with filters, sort and pagination through the JSON API', async () => {
    const r = (await app.inject({ url: '/shop/api/products?category=backpacks&sort=price_asc&page=2', headers: cookie('s') })).json();
    expect(r).toMatchObject({ total: 12, page: 2, pages: 2, page_size: 8 });
    expect(r.items.map((p: { price: number }) => p.price)).toEqual([...r.items.map((p: { price: number }) => p.price)].sort((a, b) => a - b));
    const f = (await app.inject({ url: '/shop/api/products?q=headphones&brand=Sonora&max=100', headers: cookie('s') })).json();
    expect(f.items.map((p: { id: string }) => p.id)).toEqual(['p001']);
  });

  it('adds, merges, updates and removes cart lines', async () => {
    await form('c', '/shop/cart/add', { product_id: 'p018', qty: '2' });
    await form('c', '/shop/cart/add', { product_id: 'p018', qty: '1' });
    await form('c', '/shop/cart/add', { product_id: 'p026' });
    expect((await state('c')).shop.cart.map((l: { qty: number }) => l.qty)).toEqual([3, 1]);
    await form('c', '/shop/cart/update', { product_id: 'p018', qty: '4' });
    await form('c', '/shop/cart/remove', { product_id: 'p026' });
    expect((await state('c')).shop.cart).toMatchObject([{ product_id: 'p018', qty: 4 }]);
    const cart = await app.inject({ url: '/shop/cart', headers: cookie('c') });
    expect(cart.body).toContain("confirm('Remove Typewell Slim Mechanical Keyboard from your cart?')");
  });

  it('validates checkout, then places the order and serves the invoice as a recorded download', async () => {
    await form('o', '/shop/cart/add', { product_id: 'p043', qty: '3' });
    const bad = await form('o', '/shop/checkout', { full_name: 'Grace', email: 'nope', address: 'x', city: 'y', postcode: '12' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('Enter a valid email address.');
    expect(bad.body).toContain('Postcode must be 5 digits.');
    const ok = await form('o', '/shop/checkout', { full_name: 'Grace', email: 'g@example.com', address: '1 Road', city: 'Arlington', postcode: '22201' });
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/shop/orders/NW-50001');
    const s = await state('o');
    expect(s.shop.cart).toEqual([]);
    expect(s.shop.orders[0]).toMatchObject({ id: 'NW-50001', total: 93, items: [{ product_id: 'p043', qty: 3 }] });
    const csv = await app.inject({ url: '/shop/orders/NW-50001/invoice.csv', headers: cookie('o') });
    expect(csv.headers['content-disposition']).toBe('attachment; filename="invoice-NW-50001.csv"');
    expect(csv.body.split('\n')[1]).toBe('p043,"Caffio Moka 6 Coffee Maker",3,31.00,93.00');
    expect((await state('o')).downloads.map((d: { filename: string }) => d.filename)).toEqual(['invoice-NW-50001.csv']);
  });
});

describe('recipes', () => {
  it('toggles favourites, scales the shopping list and clears it', async () => {
    await form('r', '/recipes/r/tiramisu/favourite', {});
    await form('r', '/recipes/r/guacamole/favourite', {});
    await form('r', '/recipes/r/tiramisu/favourite', {});
    await form('r', '/recipes/shopping-list/add', { recipe: 'banana-bread', servings: '12' });
    const s = await state('r');
    expect(s.recipes.favourites).toEqual(['guacamole']);
    expect(s.recipes.shopping_list[0]).toMatchObject({ recipe_id: 'banana-bread', servings: 12 });
    expect(s.recipes.shopping_list[0].items).toContain('375 g flour');
    await form('r', '/recipes/shopping-list/clear', {});
    expect((await state('r')).recipes.shopping_list).toEqual([]);
  });

  it('shows the newsletter modal from the second page view and serves a real PDF card', async () => {
    expect((await app.inject({ url: '/recipes/?grove_session=n' })).body).not.toContain('No thanks');
    expect((await app.inject({ url: '/recipes/browse', headers: cookie('n') })).body).toContain('No thanks');
    const pdf = await app.inject({ url: '/recipes/r/banana-bread/card.pdf', headers: cookie('n') });
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.rawPayload.subarray(0, 8).toString()).toBe('%PDF-1.4');
    expect(pdf.rawPayload.toString('latin1')).toMatch(/startxref\n\d+\n%%EOF\n$/);
  });
});

describe('forms', () => {
  it('rejects an invalid support ticket with field messages and accepts a valid one', async () => {
    const bad = await form('f', '/forms/support', { full_name: '', email: 'x', order_number: '48213', subject: 's', description: 'short' });
    expect(bad.statusCode).toBe(422);
    for (const m of ['Full name is required.', 'Enter a valid email address.', 'Order numbers look like ORD-12345.', 'Choose a category.', 'at least 20 characters']) expect(bad.body).toContain(m);
    const ok = await form('f', '/forms/support', { full_name: 'Tom', email: 't@example.com', order_number: 'ORD-48213', category: 'Shipping', priority: 'Urgent', subject: 'Late', description: 'My parcel has not arrived yet.', updates: 'yes' });
    expect(ok.headers.location).toBe('/forms/done/TCK-1001');
    const s = await state('f');
    expect(s.forms.failed_attempts).toBe(1);
    expect(s.forms.submissions[0]).toMatchObject({ form: 'support', ref: 'TCK-1001', fields: { category: 'Shipping', updates: true } });
  });

  it('books only free slots within capacity, cancels, and serves the calendar file', async () => {
    const date = '2026-12-09';
    const taken = [9, 10, 11, 12, 13, 14, 15, 16].find((h) => bookedByOthers('board', date, h))!;
    const slots = (await app.inject({ url: `/forms/api/slots?room=board&date=${date}`, headers: cookie('b') })).json();
    expect(slots.slots.find((s: { hour: number }) => s.hour === taken).free).toBe(false);
    const base = { room: 'board', date, duration_hours: '1', attendees: '10', full_name: 'Chen', email: 'c@example.com' };
    expect((await form('b', '/forms/booking', { ...base, start_hour: String(taken) })).statusCode).toBe(422);
    expect((await form('b', '/forms/booking', { ...base, start_hour: '14', attendees: '13' })).body).toContain('holds at most 12 people');
    expect((await form('b', '/forms/booking', { ...base, date: '2026-12-12', start_hour: '14' })).body).toContain('closed at weekends');
    const ok = await form('b', '/forms/booking', { ...base, start_hour: '14', duration_hours: '2' });
    expect(ok.headers.location).toBe('/forms/done/BK-2001');
    // The session's own booking now blocks the slot.
    const after = (await app.inject({ url: `/forms/api/slots?room=board&date=${date}`, headers: cookie('b') })).json();
    expect(after.slots.filter((s: { hour: number; free: boolean }) => s.hour >= 14 && s.hour <= 15).map((s: { free: boolean }) => s.free)).toEqual([false, false]);
    const ics = await app.inject({ url: '/forms/booking/BK-2001/calendar.ics', headers: cookie('b') });
    expect(ics.body).toContain('DTSTART:20261209T140000');
    await form('b', '/forms/booking/BK-2001/cancel', {});
    const s = await state('b');
    expect(s.forms.submissions[0]).toMatchObject({ ref: 'BK-2001', status: 'cancelled', fields: { start_hour: 14, duration_hours: 2, attendees: 10 } });
    expect(s.downloads.map((d: { filename: string }) => d.filename)).toEqual(['BK-2001.ics']);
  });

  it('registers with promo codes and checkbox groups, refusing bad codes and missing terms', async () => {
    const base = { full_name: 'Sam', email: 's@example.com', phone: '0207 946 0958', ticket: 'student', quantity: '3', dietary: ['Vegetarian', 'Gluten-free'], terms: 'yes' };
    expect((await form('g', '/forms/register', { ...base, promo: 'FREE' })).body).toContain('This promo code is not valid.');
    const { terms: _t, ...noTerms } = base;
    expect((await form('g', '/forms/register', noTerms)).body).toContain('You must accept the terms and conditions.');
    await form('g', '/forms/register', { ...base, promo: 'spring10' });
    expect((await state('g')).forms.submissions[0].fields).toMatchObject({ ticket: 'student', quantity: 3, dietary: ['Vegetarian', 'Gluten-free'], promo: 'SPRING10', total: 162 });
  });
});
