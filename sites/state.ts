// Per-episode server-side state of the offline sites, keyed by a session id.
// The judge reads it through GET /__grove/state/<session>; pages never link to it.
import { z } from 'zod';

export const SESSION_ID_RE = /^[A-Za-z0-9_-]{1,64}$/;

const CartLine = z.object({ product_id: z.string(), name: z.string(), price: z.number(), qty: z.number().int() });
type CartLine = z.infer<typeof CartLine>;

const Order = z.object({
  id: z.string(),
  items: z.array(CartLine),
  total: z.number(),
  shipping: z.record(z.string(), z.string()),
  placed_at: z.string(),
});
type Order = z.infer<typeof Order>;

const ShoppingListEntry = z.object({ recipe_id: z.string(), servings: z.number().int(), items: z.array(z.string()) });
type ShoppingListEntry = z.infer<typeof ShoppingListEntry>;

export const Submission = z.object({
  /** Which form: support | booking | register. */
  form: z.string(),
  /** Reference shown to the user (TCK-…, BK-…, REG-…). */
  ref: z.string(),
  fields: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())])),
  status: z.enum(['active', 'cancelled']),
  submitted_at: z.string(),
});
export type Submission = z.infer<typeof Submission>;

export const SessionState = z.object({
  id: z.string(),
  created_at: z.string(),
  /** Popups the user closed, per site (shop cookie banner, recipes newsletter, forms survey). */
  popups: z.record(z.string(), z.string()),
  /** Page views per site prefix (the recipes newsletter appears on the second view). */
  views: z.record(z.string(), z.number().int()),
  shop: z.object({ cart: z.array(CartLine), orders: z.array(Order) }),
  recipes: z.object({ favourites: z.array(z.string()), shopping_list: z.array(ShoppingListEntry) }),
  forms: z.object({ submissions: z.array(Submission), failed_attempts: z.number().int() }),
  downloads: z.array(z.object({ path: z.string(), filename: z.string(), at: z.string() })),
  /** Last pages seen (bounded), for debugging a failed episode. */
  visited: z.array(z.string()),
});
export type SessionState = z.infer<typeof SessionState>;

const MAX_VISITED = 200;

/** In-memory sessions; the oldest is evicted beyond `max` so a long run cannot grow without bound. */
export class SessionStore {
  private readonly sessions = new Map<string, SessionState>();
  private counter = 0;
  constructor(private readonly max = 5000) {}

  get(id: string): SessionState | undefined {
    return this.sessions.get(id);
  }

  getOrCreate(id: string): SessionState {
    let s = this.sessions.get(id);
    if (!s) {
      s = {
        id,
        created_at: new Date().toISOString(),
        popups: {},
        views: {},
        shop: { cart: [], orders: [] },
        recipes: { favourites: [], shopping_list: [] },
        forms: { submissions: [], failed_attempts: 0 },
        downloads: [],
        visited: [],
      };
      this.sessions.set(id, s);
      if (this.sessions.size > this.max) {
        const oldest = this.sessions.keys().next().value;
        if (oldest !== undefined) this.sessions.delete(oldest);
      }
    }
    return s;
  }

  /** A fresh id for visitors that arrive without one (not used by the runner, which supplies ids). */
  newId(): string {
    this.counter += 1;
    return `anon-${Date.now().toString(36)}-${this.counter}`;
  }

  /** Sequential per-session reference numbers (TCK-1001, …) keep pages deterministic. */
  nextRef(s: SessionState, prefix: string, base: number): string {
    const n = s.forms.submissions.filter((x) => x.ref.startsWith(prefix)).length + s.shop.orders.filter((o) => o.id.startsWith(prefix)).length;
    return `${prefix}-${base + n}`;
  }

  visit(s: SessionState, path: string): void {
    s.visited.push(path);
    if (s.visited.length > MAX_VISITED) s.visited.splice(0, s.visited.length - MAX_VISITED);
  }

  get size(): number {
    return this.sessions.size;
  }
}
