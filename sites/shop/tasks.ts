// Ground truth and scripted plans of the shop tasks (questions in tasks.jsonl). Answers and target
// products are computed from the catalog, so they stay true to the data the pages show.
import type { PlanStep, TaskSpec } from '../spec.ts';
import { PRODUCTS, searchProducts, type Product } from './data.ts';

const must = <T>(v: T | undefined, what: string): T => {
  if (v === undefined) throw new Error(`shop tasks: ${what} not found in the catalog`);
  return v;
};
const byName = (name: string): Product => must(PRODUCTS.find((p) => p.name === name), name);

const search = (q: string): PlanStep => ({ type: { text: 'Search products', tag: ['input'], value: q, clear: true, submit: true } });
const click = (text: string, extra: { exact?: boolean; nth?: number; tag?: string[] } = {}): PlanStep => ({ click: { text, ...extra } });
const qty = (n: number): PlanStep => ({ type: { text: 'Quantity', tag: ['input'], value: String(n), clear: true } });
const openProduct = (p: Product, q = p.name.split(' ').slice(0, 2).join(' ')): PlanStep[] => [search(q), click(p.name, { tag: ['a'] })];
const checkout = (s: Record<string, string>): PlanStep[] => [
  click('Cart (', { tag: ['a'] }),
  click('Proceed to checkout'),
  ...Object.entries({ 'Full name': s.full_name, Email: s.email, 'Street address': s.address, City: s.city, Postcode: s.postcode }).map(
    ([text, value]): PlanStep => ({ type: { text, tag: ['input'], value, clear: true } }),
  ),
  click('Place order'),
];

const t3 = must(searchProducts({ q: 'headphones', brand: 'Sonora', sort: 'price_asc' }).items[0], 'cheapest Sonora');
const t4 = must(searchProducts({ category: 'running-shoes', rating: 4, sort: 'reviews' }).items[0], 'shoe with most reviews');
const t5 = must(searchProducts({ category: 'desk-lamps', max: 50, sort: 'rating' }).items[0], 'best lamp under $50');
const t6 = byName('Auralis Orbit Wireless Headphones');
const t7 = must(PRODUCTS.find((p) => p.brand === 'Keyforge' && p.specs.Switches === 'Tactile brown'), 'Keyforge tactile brown');
const t8 = byName('Caffio Moka 6 Coffee Maker');
const backpacksByPrice = searchProducts({ category: 'backpacks', sort: 'price_asc', page: 2 });
const t10 = must(backpacksByPrice.items[1], '10th cheapest backpack');
const t11 = must(searchProducts({ category: 'coffee-makers', sort: 'reviews' }).items[0], 'coffee maker with most reviews');

const ada = { full_name: 'Ada Lovelace', email: 'ada@example.com', address: '12 Analytical Way', city: 'London', postcode: '10815' };
const grace = { full_name: 'Grace Hopper', email: 'grace@example.com', address: '1 Compiler Road', city: 'Arlington', postcode: '22201' };

export const SHOP_TASKS: Record<string, TaskSpec> = {
  'Shop--0': {
    level: 'easy',
    ground_truth: { checks: [{ kind: 'cart', items: [{ id: byName('Kestrel Nova Wireless Headphones').id, qty: 1 }] }] },
    plan: [search('Kestrel Nova'), click('Kestrel Nova Wireless Headphones', { tag: ['a'] }), click('Add to cart'), { answer: 'Added one Kestrel Nova Wireless Headphones to the cart.' }],
  },
  'Shop--1': {
    level: 'easy',
    ground_truth: { checks: [{ kind: 'answer', accepted: [byName('Lumina Reader LED Desk Lamp').price.toFixed(2)] }] },
    plan: [...openProduct(byName('Lumina Reader LED Desk Lamp')), { answer: `$${byName('Lumina Reader LED Desk Lamp').price.toFixed(2)}` }],
  },
  'Shop--2': {
    level: 'easy',
    ground_truth: { checks: [{ kind: 'answer', accepted: [String(byName('Voyo Weekender 40L Backpack').reviews)] }] },
    plan: [...openProduct(byName('Voyo Weekender 40L Backpack')), { answer: `${byName('Voyo Weekender 40L Backpack').reviews.toLocaleString('en-US')} reviews` }],
  },
  'Shop--3': {
    level: 'medium',
    ground_truth: { checks: [{ kind: 'cart', items: [{ id: t3.id, qty: 2 }] }] },
    plan: [search('headphones'), click('Sonora', { exact: true }), click('Price: low to high'), click(t3.name, { tag: ['a'] }), qty(2), click('Add to cart'), { answer: `Added 2 × ${t3.name}.` }],
  },
  'Shop--4': {
    level: 'medium',
    ground_truth: { checks: [{ kind: 'answer', accepted: [t4.name, t4.name.replace(/ Running Shoes$/, '')] }] },
    plan: [click('Running shoes', { exact: true }), click('4 stars & up'), click('Most reviews'), { answer: t4.name }],
  },
  'Shop--5': {
    level: 'medium',
    ground_truth: { checks: [{ kind: 'cart', items: [{ id: t5.id, qty: 1 }] }] },
    plan: [click('Desk lamps', { exact: true }), click('Under $50'), click('Customer rating'), click(t5.name, { tag: ['a'] }), click('Add to cart'), { answer: `Added ${t5.name}.` }],
  },
  'Shop--6': {
    level: 'medium',
    ground_truth: { checks: [{ kind: 'answer', accepted: [t6.specs['Battery life']] }] },
    plan: [...openProduct(t6), click('Specifications sheet'), { switch_tab: 'last' }, { answer: t6.specs['Battery life'] }],
  },
  'Shop--7': {
    level: 'hard',
    ground_truth: { checks: [{ kind: 'order', items: [{ id: t7.id, qty: 1 }], shipping: { full_name: ada.full_name, email: ada.email, address: ada.address, city: ada.city, postcode: ada.postcode } }] },
    plan: [search('Keyforge'), click(t7.name, { tag: ['a'] }), click('Specifications sheet'), { switch_tab: 'last' }, { close_tab: true }, click('Add to cart'), ...checkout(ada), { answer: `Ordered ${t7.name}.` }],
  },
  'Shop--8': {
    level: 'hard',
    ground_truth: {
      checks: [
        { kind: 'order', items: [{ id: t8.id, qty: 3 }], shipping: { full_name: grace.full_name, postcode: grace.postcode } },
        { kind: 'download', filename: '^invoice-NW-\\d+\\.csv$' },
      ],
    },
    plan: [...openProduct(t8), qty(3), click('Add to cart'), ...checkout(grace), click('Download invoice (CSV)'), { answer: 'Order placed and invoice downloaded.' }],
  },
  'Shop--9': {
    level: 'medium',
    ground_truth: { checks: [{ kind: 'cart', items: [{ id: byName('Cityloop Daypack 18L Backpack').id, qty: 1 }] }] },
    plan: [
      ...openProduct(byName('Cityloop Daypack 18L Backpack')), click('Add to cart'),
      ...openProduct(byName('Beatline Vibe Wireless Headphones')), click('Add to cart'),
      click('View cart'), click('Remove Beatline Vibe Wireless Headphones'), { answer: 'The cart now holds only the Cityloop Daypack 18L Backpack.' },
    ],
  },
  'Shop--10': {
    level: 'hard',
    ground_truth: { checks: [{ kind: 'answer', accepted: [t10.name] }] },
    plan: [click('Backpacks', { exact: true }), click('Price: low to high'), click('Next ›'), { answer: t10.name }],
  },
  'Shop--11': {
    level: 'medium',
    ground_truth: { checks: [{ kind: 'answer', accepted: [t11.brand] }] },
    plan: [click('Coffee makers', { exact: true }), click('Most reviews'), { answer: t11.brand }],
  },
  'Shop--12': {
    level: 'medium',
    ground_truth: { checks: [{ kind: 'cart', items: [{ id: byName('Typewell Slim Mechanical Keyboard').id, qty: 4 }] }] },
    plan: [
      ...openProduct(byName('Typewell Slim Mechanical Keyboard')), qty(2), click('Add to cart'), click('View cart'),
      { type: { text: 'Quantity of Typewell Slim Mechanical Keyboard', tag: ['input'], value: '4', clear: true } },
      click('Update Typewell Slim Mechanical Keyboard'), { answer: 'The cart holds 4 Typewell Slim Mechanical Keyboards.' },
    ],
  },
};

