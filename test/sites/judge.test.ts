// The offline rule judge against a real sites server on loopback: success and failure states, answers,
// and judge errors (no ground truth, no state, server down).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSites, type SitesServer } from '../../sites/server.ts';
import { loadOfflineTasks } from '../../sites/tasks.ts';
import { answerMatches, fieldMatches, offlineRuleJudge } from '../../judges/rules/index.ts';
import type { Task } from '../../protocol/task.ts';

let sites: SitesServer;
let tasks: Map<string, Task>;
beforeAll(async () => {
  sites = await startSites({ apiDelayMs: [0, 0] });
  tasks = new Map(loadOfflineTasks(sites.url).map((t) => [t.id, t]));
});
afterAll(async () => {
  await sites.close();
});

async function post(sid: string, path: string, body: Record<string, string>): Promise<number> {
  const r = await fetch(`${sites.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: `grove_session=${sid}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body).toString(),
  });
  await r.arrayBuffer();
  return r.status;
}
const get = async (sid: string, path: string) => (await fetch(`${sites.url}${path}`, { headers: { cookie: `grove_session=${sid}` } })).arrayBuffer();

describe('offlineRuleJudge', () => {
  const judge = () => offlineRuleJudge(sites.url);

  it('says success when the cart holds the right product and quantity, failure otherwise', async () => {
    const task = tasks.get('Shop--3')!; // cheapest Sonora headphones × 2 (p001)
    await get('j-ok', '/shop/?grove_session=j-ok');
    await post('j-ok', '/shop/cart/add', { product_id: 'p001', qty: '2' });
    const ok = await judge().judge({ task, sessionId: 'j-ok', answer: 'done' });
    expect(ok).toMatchObject({ judge: 'rule:offline', outcome: 'success', score: 1 });

    await post('j-qty', '/shop/cart/add', { product_id: 'p001', qty: '1' });
    const wrongQty = await judge().judge({ task, sessionId: 'j-qty' });
    expect(wrongQty.outcome).toBe('failure');
    expect(wrongQty.reasoning).toContain('cart lacks 2 × p001');

    await post('j-extra', '/shop/cart/add', { product_id: 'p001', qty: '2' });
    await post('j-extra', '/shop/cart/add', { product_id: 'p005', qty: '1' });
    expect((await judge().judge({ task, sessionId: 'j-extra' })).reasoning).toContain('cart holds other products too');
  });

  it('checks order, shipping fields and the invoice download together', async () => {
    const task = tasks.get('Shop--8')!;
    const ship = { full_name: 'Grace Hopper', email: 'grace@example.com', address: '1 Compiler Road', city: 'Arlington', postcode: '22201' };
    await post('j-o', '/shop/cart/add', { product_id: 'p043', qty: '3' });
    expect(await post('j-o', '/shop/checkout', ship)).toBe(303);
    const noDownload = await judge().judge({ task, sessionId: 'j-o' });
    expect(noDownload.outcome).toBe('failure');
    expect(noDownload.reasoning).toMatch(/ok order[\s\S]*FAIL download/);
    await get('j-o', '/shop/orders/NW-50001/invoice.csv');
    expect((await judge().judge({ task, sessionId: 'j-o' })).outcome).toBe('success');
  });

  it('checks form submissions field by field, including status after cancelling', async () => {
    const task = tasks.get('Forms--8')!; // book the booth on 2026-12-10 at 11:00, then cancel
    const booking = { room: 'booth', date: '2026-12-10', start_hour: '11', duration_hours: '1', attendees: '1', full_name: 'Ana Silva', email: 'ana.silva@example.com' };
    expect(await post('j-b', '/forms/booking', booking)).toBe(303);
    const active = await judge().judge({ task, sessionId: 'j-b' });
    expect(active.outcome).toBe('failure');
    expect(active.reasoning).toContain('no cancelled booking submission');
    await post('j-b', '/forms/booking/BK-2001/cancel', {});
    expect((await judge().judge({ task, sessionId: 'j-b' })).outcome).toBe('success');
  });

  it('judges answers with normalisation and needs no state for answer-only tasks', async () => {
    const task = tasks.get('Shop--2')!; // reviews of the Voyo Weekender: 4677
    expect((await judge().judge({ task, answer: 'It has 4,677 reviews.' })).outcome).toBe('success');
    expect((await judge().judge({ task, answer: 'It has 467 reviews.' })).outcome).toBe('failure');
    const none = await judge().judge({ task });
    expect(none).toMatchObject({ outcome: 'failure', reasoning: 'FAIL answer: no answer was given' });
  });

  it('uses state given in the input instead of fetching it', async () => {
    const task = tasks.get('Recipes--1')!;
    const state = await (await fetch(`${sites.url}/__grove/state/j-ok`)).json();
    const v = await judge().judge({ task, state: { ...state, recipes: { favourites: ['classic-margherita-pizza'], shopping_list: [] } } });
    expect(v.outcome).toBe('success');
  });

  it('fails a session the server never saw, and reports judge errors apart', async () => {
    const task = tasks.get('Shop--0')!;
    expect((await judge().judge({ task, sessionId: 'never-seen' })).reasoning).toContain('no session state');
    expect((await judge().judge({ task })).outcome).toBe('judge_error');
    const noGt = await judge().judge({ task: { ...task, extra: {} }, sessionId: 'j-ok' });
    expect(noGt).toMatchObject({ outcome: 'judge_error', details: { error_kind: 'bad_input' } });
    const down = await offlineRuleJudge('http://127.0.0.1:9').judge({ task, sessionId: 'x' });
    expect(down).toMatchObject({ outcome: 'judge_error', details: { error_kind: 'api_error' } });
  });
});

describe('answer and field matching', () => {
  it('matches whole tokens, ignoring case, punctuation, currency and thousands separators', () => {
    expect(answerMatches('$78.99', '78.99')).toBe(true);
    expect(answerMatches('The price is 78.990 dollars', '78.99')).toBe(true);
    expect(answerMatches('178.99', '78.99')).toBe(false);
    expect(answerMatches('Runa Cloudstep running shoes!', 'Runa Cloudstep Running Shoes')).toBe(true);
    expect(answerMatches('Runa', 'Runa Cloudstep')).toBe(false);
    expect(answerMatches('anything', '')).toBe(false);
  });
  it('compares fields by type', () => {
    expect(fieldMatches('  Ada   Lovelace ', 'ada lovelace')).toBe(true);
    expect(fieldMatches(3, 3)).toBe(true);
    expect(fieldMatches('', 0)).toBe(false);
    expect(fieldMatches(['Vegan', 'Vegetarian'], ['vegetarian', 'vegan'])).toBe(true);
    expect(fieldMatches(['Vegan'], ['vegetarian', 'vegan'])).toBe(false);
    expect(fieldMatches('My parcel for ORD-48213 is late', { contains: 'ord-48213' })).toBe(true);
    expect(fieldMatches(false, true)).toBe(false);
  });
});
