// The shop catalog: generated from a seeded PRNG, so it is the same on every run.
import { mulberry32, pick } from '../../sandbox/prng.ts';

export interface Product {
  id: string;
  name: string;
  brand: string;
  category: string;
  price: number;
  rating: number;
  reviews: number;
  color: string;
  description: string;
  /** Shown on the specifications sheet (opened in a new tab). */
  specs: Record<string, string>;
}

interface CategoryDef {
  slug: string;
  label: string;
  noun: string;
  brands: string[];
  models: string[];
  price: [number, number];
  specs: (rnd: () => number) => Record<string, string>;
}

const COLORS = ['Black', 'White', 'Silver', 'Navy', 'Red', 'Green', 'Grey', 'Blue'];

const CATEGORIES: CategoryDef[] = [
  {
    slug: 'headphones', label: 'Headphones', noun: 'Wireless Headphones',
    brands: ['Sonora', 'Auralis', 'Beatline', 'Kestrel'], models: ['Pulse', 'Echo', 'Drift', 'Nova', 'Arc', 'Halo', 'Vibe', 'Zen', 'Flux', 'Orbit', 'Tide', 'Aria'],
    price: [29, 349],
    specs: (r) => ({ 'Battery life': `${10 + Math.floor(r() * 50)} hours`, 'Noise cancelling': r() > 0.5 ? 'Yes' : 'No', Weight: `${180 + Math.floor(r() * 160)} g` }),
  },
  {
    slug: 'keyboards', label: 'Keyboards', noun: 'Mechanical Keyboard',
    brands: ['Keyforge', 'Typewell', 'Clackworks', 'Lumen'], models: ['K60', 'K75', 'TKL Pro', 'Compact 65', 'Full 104', 'Slim', 'Travel', 'Studio', 'Quiet', 'Retro', 'Glow', 'Split'],
    price: [39, 229],
    specs: (r) => ({ Switches: pick(r, ['Linear red', 'Tactile brown', 'Clicky blue']), Layout: pick(r, ['ANSI', 'ISO']), Connection: pick(r, ['USB-C wired', 'Bluetooth + USB-C', '2.4 GHz wireless']) }),
  },
  {
    slug: 'backpacks', label: 'Backpacks', noun: 'Backpack',
    brands: ['Trailhand', 'Cityloop', 'Northpeak', 'Voyo'], models: ['Commuter 20L', 'Daypack 18L', 'Hiker 30L', 'Laptop 25L', 'Roll-top 22L', 'Travel 35L', 'Mini 12L', 'Weekender 40L', 'Sling 8L', 'Urban 24L', 'Trek 45L', 'Campus 28L'],
    price: [25, 189],
    specs: (r) => ({ 'Laptop sleeve': `${pick(r, ['13', '15', '16', '17'])} inch`, 'Water resistant': r() > 0.4 ? 'Yes' : 'No', Warranty: `${1 + Math.floor(r() * 5)} years` }),
  },
  {
    slug: 'coffee-makers', label: 'Coffee makers', noun: 'Coffee Maker',
    brands: ['Brewlux', 'Morningcup', 'Caffio', 'Steamworks'], models: ['Drip 10', 'Espresso Mini', 'Pour Over Set', 'Cold Brew', 'Barista Pro', 'Single Serve', 'Moka 6', 'Thermal 12', 'French Press 1L', 'Grind & Brew', 'Compact', 'Deluxe'],
    price: [19, 499],
    specs: (r) => ({ Capacity: `${pick(r, ['2', '4', '6', '10', '12'])} cups`, 'Auto shut-off': r() > 0.5 ? 'Yes' : 'No', Warranty: `${1 + Math.floor(r() * 3)} years` }),
  },
  {
    slug: 'running-shoes', label: 'Running shoes', noun: 'Running Shoes',
    brands: ['Stridex', 'Fleetfoot', 'Pacewell', 'Runa'], models: ['Glide 3', 'Tempo', 'Trail X', 'Cloudstep', 'Racer 2', 'Daily', 'Cushion Max', 'Light 5', 'Grip Pro', 'Marathon', 'Sprint', 'Recovery'],
    price: [49, 219],
    specs: (r) => ({ Drop: `${4 + Math.floor(r() * 9)} mm`, Weight: `${220 + Math.floor(r() * 120)} g`, Surface: pick(r, ['Road', 'Trail', 'Track']) }),
  },
  {
    slug: 'desk-lamps', label: 'Desk lamps', noun: 'LED Desk Lamp',
    brands: ['Lumina', 'Brightwell', 'Glowhaus', 'Lampo'], models: ['Arc', 'Studio', 'Flex', 'Clamp', 'Mini', 'Architect', 'Halo', 'Beam', 'Reader', 'Smart', 'Twin', 'Classic'],
    price: [15, 149],
    specs: (r) => ({ Brightness: `${300 + Math.floor(r() * 9) * 100} lumens`, 'Colour temperature': '2700–6500 K', 'USB charging port': r() > 0.5 ? 'Yes' : 'No' }),
  },
];

export const SHOP_CATEGORIES = CATEGORIES.map((c) => ({ slug: c.slug, label: c.label }));

function build(): Product[] {
  const rnd = mulberry32(20260611);
  const out: Product[] = [];
  let n = 1;
  for (const c of CATEGORIES) {
    c.models.forEach((model, i) => {
      const brand = c.brands[i % c.brands.length];
      const price = Math.round((c.price[0] + rnd() * (c.price[1] - c.price[0])) * 100) / 100;
      const cents = [0.99, 0.49, 0.0, 0.95][Math.floor(rnd() * 4)];
      const finalPrice = Math.floor(price) + cents;
      const rating = Math.round((2.8 + rnd() * 2.2) * 10) / 10;
      const reviews = Math.floor(Math.pow(rnd(), 2) * 4800) + 3;
      const color = pick(rnd, COLORS);
      const name = `${brand} ${model} ${c.noun}`;
      out.push({
        id: `p${String(n).padStart(3, '0')}`,
        name,
        brand,
        category: c.slug,
        price: finalPrice,
        rating,
        reviews,
        color,
        description: `The ${name} in ${color.toLowerCase()}: a dependable ${c.noun.toLowerCase()} from ${brand}.`,
        specs: { Colour: color, ...c.specs(rnd) },
      });
      n += 1;
    });
  }
  return out;
}

export const PRODUCTS: readonly Product[] = build();

export function productById(id: string): Product | undefined {
  return PRODUCTS.find((p) => p.id === id);
}

export const SORTS = {
  featured: 'Featured',
  price_asc: 'Price: low to high',
  price_desc: 'Price: high to low',
  rating: 'Customer rating',
  reviews: 'Most reviews',
} as const;
export type SortKey = keyof typeof SORTS;

export interface SearchQuery {
  q?: string;
  category?: string;
  brand?: string;
  min?: number;
  max?: number;
  rating?: number;
  sort?: SortKey;
  page?: number;
}

const PAGE_SIZE = 8;

function stem(w: string): string {
  return w.replace(/(es|s)$/, '');
}

/** Search with the same semantics the pages show: every query word must match name, brand or category. */
export function searchProducts(q: SearchQuery): { items: Product[]; total: number; page: number; pages: number; all: Product[] } {
  const words = (q.q ?? '').toLowerCase().split(/[^a-z0-9]+/).filter(Boolean).map(stem);
  let xs = PRODUCTS.filter((p) => {
    const hay = `${p.name} ${p.brand} ${p.category.replace(/-/g, ' ')}`.toLowerCase().split(/[^a-z0-9]+/).map(stem);
    return words.every((w) => hay.some((h) => h.startsWith(w)));
  });
  if (q.category) xs = xs.filter((p) => p.category === q.category);
  const all = xs;
  if (q.brand) xs = xs.filter((p) => p.brand.toLowerCase() === q.brand!.toLowerCase());
  if (q.min !== undefined) xs = xs.filter((p) => p.price >= q.min!);
  if (q.max !== undefined) xs = xs.filter((p) => p.price <= q.max!);
  if (q.rating !== undefined) xs = xs.filter((p) => p.rating >= q.rating!);
  const sorted = [...xs];
  switch (q.sort ?? 'featured') {
    case 'price_asc': sorted.sort((a, b) => a.price - b.price || a.id.localeCompare(b.id)); break;
    case 'price_desc': sorted.sort((a, b) => b.price - a.price || a.id.localeCompare(b.id)); break;
    case 'rating': sorted.sort((a, b) => b.rating - a.rating || b.reviews - a.reviews || a.id.localeCompare(b.id)); break;
    case 'reviews': sorted.sort((a, b) => b.reviews - a.reviews || a.id.localeCompare(b.id)); break;
    default: break;
  }
  const pages = Math.max(1, Math.ceil(sorted.length / PAGE_SIZE));
  const page = Math.min(Math.max(1, q.page ?? 1), pages);
  return { items: sorted.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE), total: sorted.length, page, pages, all };
}
