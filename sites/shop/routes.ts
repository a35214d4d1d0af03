// "Northwind Market": a small shop in the spirit of DeepShop — search, facets (category, brand, price,
// rating), sort, pagination over a delayed JSON API, product pages, a spec sheet in a new tab, cart with
// confirm() on removal, checkout with validation, and a CSV invoice download.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { countView, formBody, recordDownload, sendHtml, str, type SiteContext } from '../context.ts';
import { escapeHtml } from '../../protocol/html.ts';
import { Html, html, modal, money, page } from '../html.ts';
import type { SessionState } from '../state.ts';
import { PRODUCTS, SHOP_CATEGORIES, SORTS, productById, searchProducts, type SearchQuery, type SortKey } from './data.ts';

const P = '/shop';
const PRICE_RANGES: { label: string; min?: number; max?: number }[] = [
  { label: 'Under $50', max: 50 },
  { label: '$50 to $100', min: 50, max: 100 },
  { label: '$100 to $200', min: 100, max: 200 },
  { label: 'Over $200', min: 200 },
];

const CSS = `.layout{display:grid;grid-template-columns:220px 1fr;gap:20px}.facets h3{font-size:14px;margin:14px 0 6px;text-transform:uppercase;color:#667085}
.facets a{display:block;padding:2px 0;text-decoration:none}.facets .on{font-weight:700}.sortbar{display:flex;gap:12px;flex-wrap:wrap;margin-bottom:10px;font-size:14px}
.sortbar .on{font-weight:700}.grid{display:grid;grid-template-columns:repeat(2,1fr);gap:12px}.stars{color:#b54708}.price{font-size:18px;font-weight:700}
.searchbar{display:flex;gap:8px;margin-bottom:16px}.searchbar input{flex:1}.tiles{display:grid;grid-template-columns:repeat(3,1fr);gap:12px}
.tile{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:22px;text-align:center;text-decoration:none;font-weight:600}`;

function cartCount(s: SessionState): number {
  return s.shop.cart.reduce((n, l) => n + l.qty, 0);
}

function layout(req: FastifyRequest, title: string, body: Html, script?: string): string {
  const s = req.groveSession;
  const consent = s.popups.shop_cookies
    ? undefined
    : modal({
        id: 'cookie-consent',
        dismissUrl: `${P}/api/consent`,
        title: 'We value your privacy',
        text: 'Northwind Market uses cookies to keep your cart and remember your preferences. Choose whether to allow optional cookies.',
        buttons: [
          { label: 'Reject optional', value: 'rejected' },
          { label: 'Accept all cookies', value: 'accepted', primary: true },
        ],
      });
  return page({
    title: `${title} | Northwind Market`,
    brand: 'Northwind Market',
    accent: '#1f5fae',
    home: `${P}/`,
    nav: [
      { href: `${P}/search`, label: 'All products' },
      { href: `${P}/orders`, label: 'Orders' },
      { href: `${P}/cart`, label: `Cart (${cartCount(s)})` },
    ],
    body,
    modal: consent,
    script,
    extraCss: CSS,
  });
}

function searchBar(q = ''): Html {
  return html`<form class="searchbar" action="${P}/search" method="get" role="search">
<input type="search" name="q" value="${q}" placeholder="Search products" aria-label="Search products">
<button type="submit">Search</button></form>`;
}

function parseQuery(q: Record<string, string | undefined>): SearchQuery {
  const num = (v?: string) => (v !== undefined && v !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined);
  const sort = q.sort && q.sort in SORTS ? (q.sort as SortKey) : undefined;
  return {
    q: q.q || undefined,
    category: q.category || undefined,
    brand: q.brand || undefined,
    min: num(q.min),
    max: num(q.max),
    rating: num(q.rating),
    sort,
    page: num(q.page),
  };
}

function searchHref(base: SearchQuery, patch: Partial<Record<keyof SearchQuery, string | number | undefined>>): string {
  const merged: Record<string, unknown> = { ...base, page: undefined, ...patch };
  const sp = new URLSearchParams();
  for (const k of ['q', 'category', 'brand', 'min', 'max', 'rating', 'sort', 'page']) {
    const v = merged[k];
    if (v !== undefined && v !== '') sp.set(k, String(v));
  }
  const qs = sp.toString();
  return `${P}/search${qs ? `?${qs}` : ''}`;
}

// Client side of the search page: results come from the JSON API after a server delay.
const SEARCH_JS = `(function(){
var box=document.getElementById('results'),info=document.getElementById('result-info'),pager=document.getElementById('pager');
var esc=${escapeHtml.toString()};
var params=new URLSearchParams(location.search);
fetch('${P}/api/products?'+params.toString(),{headers:{accept:'application/json'}}).then(function(r){return r.json();}).then(function(d){
 if(!d.items.length){box.innerHTML='<p class="card">No products match your search.</p>';info.textContent='0 results';return;}
 var first=(d.page-1)*d.page_size+1;info.textContent='Showing '+first+'–'+(first+d.items.length-1)+' of '+d.total+' results';
 box.innerHTML=d.items.map(function(p){return '<div class="card product-card"><a class="pname" href="${P}/p/'+p.id+'">'+esc(p.name)+'</a>'+
 '<div class="price">$'+p.price.toFixed(2)+'</div><div><span class="stars">★ '+p.rating.toFixed(1)+'</span> <span class="muted">('+p.reviews.toLocaleString('en-US')+' reviews)</span></div>'+
 '<div class="muted">'+esc(p.brand)+' · '+esc(p.color)+'</div></div>';}).join('');
 var h='';function link(n,label){params.set('page',String(n));return '<a href="${P}/search?'+params.toString()+'">'+label+'</a>';}
 if(d.page>1)h+=link(d.page-1,'‹ Previous');
 for(var i=1;i<=d.pages;i++)h+=(i===d.page?'<span class="cur">'+i+'</span>':link(i,String(i)));
 if(d.page<d.pages)h+=link(d.page+1,'Next ›');pager.innerHTML=d.pages>1?h:'';
}).catch(function(){box.innerHTML='<p class="card error">Could not load results. Please reload the page.</p>';});
})();`;

function searchPage(req: FastifyRequest): string {
  const q = parseQuery(req.query as Record<string, string>);
  const scope = searchProducts({ q: q.q, category: q.category });
  const brands = [...new Set(scope.all.map((p) => p.brand))].sort();
  const facet = (label: string, href: string, on: boolean) => html`<a class="${on ? 'on' : ''}" href="${href}">${label}</a>`;
  const catLabel = SHOP_CATEGORIES.find((c) => c.slug === q.category)?.label;
  const body = html`${searchBar(q.q)}
<h1>${q.q ? `Results for “${q.q}”` : catLabel ?? 'All products'}</h1>
<div class="layout"><aside class="facets">
<h3>Category</h3>${SHOP_CATEGORIES.map((c) => facet(c.label, searchHref({ q: q.q }, { category: c.slug }), q.category === c.slug))}
<h3>Brand</h3>${brands.map((b) => facet(b, searchHref(q, { brand: b }), q.brand === b))}
<h3>Price</h3>${PRICE_RANGES.map((r) => facet(r.label, searchHref(q, { min: r.min, max: r.max }), q.min === r.min && q.max === r.max))}
<h3>Customer rating</h3>${[4, 3].map((r) => facet(`${r} stars & up`, searchHref(q, { rating: r }), q.rating === r))}
<h3>&nbsp;</h3><a href="${searchHref({ q: q.q }, {})}">Clear filters</a>
</aside><section>
<div class="sortbar"><span class="muted">Sort by:</span>${(Object.keys(SORTS) as SortKey[]).map((k) =>
    (q.sort ?? 'featured') === k ? html`<span class="on">${SORTS[k]}</span>` : html`<a href="${searchHref(q, { sort: k })}">${SORTS[k]}</a>`,
  )}</div>
<p id="result-info" class="muted">Loading results…</p>
<div id="results" class="grid" aria-live="polite"></div><div id="pager" class="pager"></div>
</section></div>`;
  return layout(req, q.q ? `Search: ${q.q}` : 'All products', body, SEARCH_JS);
}

function stars(r: number): string {
  return '★'.repeat(Math.round(r)) + '☆'.repeat(5 - Math.round(r));
}

function productPage(req: FastifyRequest, id: string, added?: number): string | undefined {
  const p = productById(id);
  if (!p) return undefined;
  const cat = SHOP_CATEGORIES.find((c) => c.slug === p.category)!;
  const body = html`${searchBar()}
<p class="muted"><a href="${P}/search?category=${p.category}">${cat.label}</a> › ${p.brand}</p>
${added ? html`<div class="notice" role="status">Added ${added} × ${p.name} to your cart. <a href="${P}/cart">View cart</a></div>` : ''}
<div class="card"><h1>${p.name}</h1>
<div class="price">${money(p.price)}</div>
<p><span class="stars" aria-hidden="true">${stars(p.rating)}</span> ${p.rating.toFixed(1)} out of 5 · <a href="#reviews">${p.reviews.toLocaleString('en-US')} ratings</a></p>
<p>${p.description}</p><p>Brand: <b>${p.brand}</b> · Colour: ${p.color}</p>
<p><a href="${P}/p/${p.id}/specs" target="_blank" rel="noopener">Specifications sheet ↗</a></p>
<form method="post" action="${P}/cart/add" style="display:flex;gap:10px;align-items:center">
<input type="hidden" name="product_id" value="${p.id}">
<label for="qty">Quantity</label><input id="qty" type="number" name="qty" value="1" min="1" max="10" aria-label="Quantity" style="width:80px">
<button type="submit">Add to cart</button></form></div>
<div class="card" id="reviews"><h2>Customer reviews</h2><p>${p.rating.toFixed(1)} out of 5 stars, from ${p.reviews.toLocaleString('en-US')} reviews.</p></div>`;
  return layout(req, p.name, body);
}

function specsPage(id: string): string | undefined {
  const p = productById(id);
  if (!p) return undefined;
  return page({
    title: `Specifications: ${p.name}`,
    brand: 'Northwind Market',
    accent: '#1f5fae',
    home: `${P}/`,
    nav: [],
    body: html`<h1>Specifications — ${p.name}</h1><div class="card"><table>
<tr><th>Product code</th><td>${p.id.toUpperCase()}</td></tr><tr><th>Brand</th><td>${p.brand}</td></tr>
${Object.entries(p.specs).map(([k, v]) => html`<tr><th>${k}</th><td>${v}</td></tr>`)}</table></div>`,
  });
}

function cartPage(req: FastifyRequest): string {
  const s = req.groveSession;
  const total = s.shop.cart.reduce((n, l) => n + l.price * l.qty, 0);
  const body = html`<h1>Shopping cart</h1>
${s.shop.cart.length === 0
    ? html`<div class="card"><p>Your cart is empty.</p><a class="btn" href="${P}/search">Continue shopping</a></div>`
    : html`<div class="card"><table><tr><th>Product</th><th>Price</th><th>Quantity</th><th></th></tr>
${s.shop.cart.map((l) => html`<tr><td><a href="${P}/p/${l.product_id}">${l.name}</a></td><td>${money(l.price)}</td>
<td><form method="post" action="${P}/cart/update" style="display:flex;gap:6px"><input type="hidden" name="product_id" value="${l.product_id}">
<input type="number" name="qty" value="${l.qty}" min="0" max="10" style="width:70px" aria-label="Quantity of ${l.name}"><button class="secondary" type="submit" aria-label="Update ${l.name}">Update</button></form></td>
<td><form method="post" action="${P}/cart/remove" onsubmit="return confirm('Remove ${l.name.replace(/'/g, '')} from your cart?')">
<input type="hidden" name="product_id" value="${l.product_id}"><button class="secondary" type="submit" aria-label="Remove ${l.name}">Remove</button></form></td></tr>`)}
<tr><th>Subtotal</th><th>${money(total)}</th><th></th><th></th></tr></table></div>
<a class="btn" href="${P}/checkout">Proceed to checkout</a>`}`;
  return layout(req, 'Cart', body);
}

const CHECKOUT_FIELDS = [
  { name: 'full_name', label: 'Full name', type: 'text' },
  { name: 'email', label: 'Email', type: 'email' },
  { name: 'address', label: 'Street address', type: 'text' },
  { name: 'city', label: 'City', type: 'text' },
  { name: 'postcode', label: 'Postcode', type: 'text' },
] as const;

function validateCheckout(v: Record<string, string>): Record<string, string> {
  const e: Record<string, string> = {};
  for (const f of CHECKOUT_FIELDS) if (!v[f.name]) e[f.name] = `${f.label} is required.`;
  if (v.email && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(v.email)) e.email = 'Enter a valid email address.';
  if (v.postcode && !/^\d{5}$/.test(v.postcode)) e.postcode = 'Postcode must be 5 digits.';
  return e;
}

function checkoutPage(req: FastifyRequest, values: Record<string, string> = {}, errors: Record<string, string> = {}): string {
  const s = req.groveSession;
  const total = s.shop.cart.reduce((n, l) => n + l.price * l.qty, 0);
  const body = html`<h1>Checkout</h1>
${Object.keys(errors).length ? html`<div class="errors" role="alert">Please correct the highlighted fields.</div>` : ''}
<div class="card"><p>${s.shop.cart.length} item(s) · Order total <b>${money(total)}</b></p>
<form method="post" action="${P}/checkout" novalidate>
${CHECKOUT_FIELDS.map((f) => html`<p><label for="${f.name}">${f.label}</label><br>
<input id="${f.name}" name="${f.name}" type="${f.type}" value="${values[f.name] ?? ''}" aria-label="${f.label}" style="width:360px">
${errors[f.name] ? html`<br><span class="error">${errors[f.name]}</span>` : ''}</p>`)}
<button type="submit">Place order</button></form></div>`;
  return layout(req, 'Checkout', body);
}

function orderPage(req: FastifyRequest, id: string): string | undefined {
  const o = req.groveSession.shop.orders.find((x) => x.id === id);
  if (!o) return undefined;
  const body = html`<div class="notice" role="status">Thank you! Your order ${o.id} has been placed.</div>
<h1>Order ${o.id}</h1><div class="card"><table><tr><th>Product</th><th>Qty</th><th>Price</th></tr>
${o.items.map((l) => html`<tr><td>${l.name}</td><td>${l.qty}</td><td>${money(l.price * l.qty)}</td></tr>`)}
<tr><th>Total</th><th></th><th>${money(o.total)}</th></tr></table>
<p>Ship to: ${o.shipping.full_name}, ${o.shipping.address}, ${o.shipping.city} ${o.shipping.postcode}</p>
<a class="btn" href="${P}/orders/${o.id}/invoice.csv" download>Download invoice (CSV)</a></div>`;
  return layout(req, `Order ${o.id}`, body);
}

function homePage(req: FastifyRequest): string {
  const deals = [...PRODUCTS].sort((a, b) => b.reviews - a.reviews).slice(0, 4);
  const body = html`${searchBar()}<h1>Shop by category</h1>
<div class="tiles">${SHOP_CATEGORIES.map((c) => html`<a class="tile" href="${P}/search?category=${c.slug}">${c.label}</a>`)}</div>
<h2>Customer favourites</h2><div class="grid">${deals.map((p) => html`<div class="card"><a href="${P}/p/${p.id}">${p.name}</a>
<div class="price">${money(p.price)}</div><span class="muted">${p.reviews.toLocaleString('en-US')} reviews</span></div>`)}</div>`;
  return layout(req, 'Home', body);
}

export function registerShop(app: FastifyInstance, ctx: SiteContext): void {
  app.get(`${P}`, async (_req, reply) => reply.redirect(`${P}/`));
  app.get(`${P}/`, async (req, reply) => {
    countView(req, 'shop');
    return sendHtml(reply, homePage(req));
  });
  app.get(`${P}/search`, async (req, reply) => {
    countView(req, 'shop');
    return sendHtml(reply, searchPage(req));
  });
  app.get(`${P}/api/products`, async (req, reply) => {
    const q = parseQuery(req.query as Record<string, string>);
    await ctx.delay(req.url);
    const r = searchProducts(q);
    return reply.header('cache-control', 'no-store').send({ total: r.total, page: r.page, pages: r.pages, page_size: 8, items: r.items });
  });
  app.post(`${P}/api/consent`, async (req, reply) => {
    const choice = str((req.body as Record<string, string> | undefined)?.choice) || 'closed';
    req.groveSession.popups.shop_cookies = choice;
    return reply.code(204).send();
  });
  app.get<{ Params: { id: string }; Querystring: { added?: string } }>(`${P}/p/:id`, async (req, reply) => {
    countView(req, 'shop');
    const added = Number(req.query.added) || undefined;
    const body = productPage(req, req.params.id, added);
    return body ? sendHtml(reply, body) : sendHtml(reply, layout(req, 'Not found', html`<h1>Product not found</h1>`), 404);
  });
  app.get<{ Params: { id: string } }>(`${P}/p/:id/specs`, async (req, reply) => {
    const body = specsPage(req.params.id);
    return body ? sendHtml(reply, body) : sendHtml(reply, layout(req, 'Not found', html`<h1>Product not found</h1>`), 404);
  });
  app.post(`${P}/cart/add`, async (req, reply) => {
    const b = formBody(req);
    const p = productById(str(b.product_id));
    if (!p) return reply.code(400).send('unknown product');
    const qty = Math.min(10, Math.max(1, Math.floor(Number(str(b.qty))) || 1));
    const cart = req.groveSession.shop.cart;
    const line = cart.find((l) => l.product_id === p.id);
    if (line) line.qty = Math.min(10, line.qty + qty);
    else cart.push({ product_id: p.id, name: p.name, price: p.price, qty });
    return reply.redirect(`${P}/p/${p.id}?added=${qty}`, 303);
  });
  app.post(`${P}/cart/update`, async (req, reply) => {
    const b = formBody(req);
    const cart = req.groveSession.shop.cart;
    const i = cart.findIndex((l) => l.product_id === str(b.product_id));
    const qty = Math.floor(Number(str(b.qty)));
    if (i >= 0 && Number.isFinite(qty)) {
      if (qty <= 0) cart.splice(i, 1);
      else cart[i].qty = Math.min(10, qty);
    }
    return reply.redirect(`${P}/cart`, 303);
  });
  app.post(`${P}/cart/remove`, async (req, reply) => {
    const b = formBody(req);
    const cart = req.groveSession.shop.cart;
    const i = cart.findIndex((l) => l.product_id === str(b.product_id));
    if (i >= 0) cart.splice(i, 1);
    return reply.redirect(`${P}/cart`, 303);
  });
  app.get(`${P}/cart`, async (req, reply) => {
    countView(req, 'shop');
    return sendHtml(reply, cartPage(req));
  });
  app.get(`${P}/checkout`, async (req, reply) => {
    countView(req, 'shop');
    if (req.groveSession.shop.cart.length === 0) return reply.redirect(`${P}/cart`);
    return sendHtml(reply, checkoutPage(req));
  });
  app.post(`${P}/checkout`, async (req, reply) => {
    const b = formBody(req);
    const s = req.groveSession;
    const values = Object.fromEntries(CHECKOUT_FIELDS.map((f) => [f.name, str(b[f.name])]));
    if (s.shop.cart.length === 0) return reply.redirect(`${P}/cart`, 303);
    const errors = validateCheckout(values);
    if (Object.keys(errors).length) return sendHtml(reply, checkoutPage(req, values, errors), 422);
    const id = ctx.store.nextRef(s, 'NW', 50001);
    const items = s.shop.cart.map((l) => ({ ...l }));
    const total = Math.round(items.reduce((n, l) => n + l.price * l.qty, 0) * 100) / 100;
    s.shop.orders.push({ id, items, total, shipping: values, placed_at: new Date().toISOString() });
    s.shop.cart = [];
    return reply.redirect(`${P}/orders/${id}`, 303);
  });
  app.get(`${P}/orders`, async (req, reply) => {
    const orders = req.groveSession.shop.orders;
    const body = html`<h1>Your orders</h1>${orders.length === 0 ? html`<p class="card">No orders yet.</p>` : orders.map((o) => html`<div class="card"><a href="${P}/orders/${o.id}">Order ${o.id}</a> · ${money(o.total)}</div>`)}`;
    return sendHtml(reply, layout(req, 'Orders', body));
  });
  app.get<{ Params: { id: string } }>(`${P}/orders/:id`, async (req, reply) => {
    countView(req, 'shop');
    const body = orderPage(req, req.params.id);
    return body ? sendHtml(reply, body) : sendHtml(reply, layout(req, 'Not found', html`<h1>Order not found</h1>`), 404);
  });
  app.get<{ Params: { id: string } }>(`${P}/orders/:id/invoice.csv`, async (req, reply) => {
    const o = req.groveSession.shop.orders.find((x) => x.id === req.params.id);
    if (!o) return reply.code(404).send('no such order');
    const filename = `invoice-${o.id}.csv`;
    recordDownload(req, filename);
    const rows = [['product_id', 'name', 'qty', 'unit_price', 'line_total'], ...o.items.map((l) => [l.product_id, `"${l.name}"`, String(l.qty), l.price.toFixed(2), (l.price * l.qty).toFixed(2)]), ['', 'TOTAL', '', '', o.total.toFixed(2)]];
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${filename}"`)
      .send(rows.map((r) => r.join(',')).join('\n') + '\n');
  });
}

