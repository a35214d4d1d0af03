// "Little Kitchen": a recipe site — search and browse (cuisine, diet, time, sort, pagination), recipe pages
// with a servings scaler, nutrition loaded late from a JSON API, favourites, a shopping list (clear asks
// confirm()), a recipe-card PDF download, a printable version in a new tab and a newsletter modal.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { countView, formBody, recordDownload, sendHtml, str, type SiteContext } from '../context.ts';
import { Html, html, modal, page } from '../html.ts';
import { textPdf } from '../pdf.ts';
import { CUISINES, DIETS, RECIPE_SORTS, browseRecipes, ingredientLines, recipeBySlug, RECIPES, type Recipe, type RecipeSort } from './data.ts';

const P = '/recipes';
const CSS = `.rgrid{display:grid;grid-template-columns:repeat(3,1fr);gap:12px}.tag{display:inline-block;background:#fef0c7;border-radius:10px;padding:0 8px;font-size:13px;margin-right:4px}
.chips a{display:inline-block;margin:0 8px 8px 0;padding:4px 10px;border:1px solid #d0d5dd;border-radius:14px;background:#fff;text-decoration:none}.chips a.on{background:var(--accent);color:#fff}
.searchbar{display:flex;gap:8px;margin-bottom:16px}.searchbar input{flex:1}.actions{display:flex;gap:10px;flex-wrap:wrap;align-items:center}`;

function layout(req: FastifyRequest, title: string, body: Html, script?: string): string {
  const s = req.groveSession;
  // The newsletter prompt appears from the second page view on, like many recipe sites.
  const showModal = !s.popups.recipes_newsletter && (s.views.recipes ?? 0) >= 2;
  return page({
    title: `${title} | Little Kitchen`,
    brand: 'Little Kitchen',
    accent: '#c2410c',
    home: `${P}/`,
    nav: [
      { href: `${P}/browse`, label: 'Browse recipes' },
      { href: `${P}/favourites`, label: `Favourites (${s.recipes.favourites.length})` },
      { href: `${P}/shopping-list`, label: 'Shopping list' },
    ],
    body,
    modal: showModal
      ? modal({
          id: 'newsletter',
          dismissUrl: `${P}/api/newsletter`,
          title: 'Get a new recipe every week',
          text: 'Join 40,000 home cooks and receive our free weekly newsletter.',
          buttons: [{ label: 'No thanks', value: 'declined' }],
          closeX: true,
        })
      : undefined,
    script,
    extraCss: CSS,
  });
}

function searchBar(q = ''): Html {
  return html`<form class="searchbar" action="${P}/browse" method="get" role="search">
<input type="search" name="q" value="${q}" placeholder="Search recipes or ingredients" aria-label="Search recipes">
<button type="submit">Search</button></form>`;
}

function card(r: Recipe): Html {
  return html`<div class="card recipe-card"><a href="${P}/r/${r.slug}"><b>${r.name}</b></a>
<div class="muted">${r.cuisine} · ${r.minutes} min · ${r.difficulty}</div>
<div>★ ${r.rating.toFixed(1)} <span class="muted">(${r.reviews} reviews)</span></div>
<div>${r.diets.map((d) => html`<span class="tag">${d}</span>`)}</div></div>`;
}

interface BrowseQuery {
  q?: string;
  cuisine?: string;
  diet?: string;
  max_time?: string;
  sort?: string;
  page?: string;
}

function browseHref(q: BrowseQuery, patch: Partial<BrowseQuery>): string {
  const m: Record<string, string | undefined> = { ...q, page: undefined, ...patch };
  const sp = new URLSearchParams();
  for (const k of ['q', 'cuisine', 'diet', 'max_time', 'sort', 'page']) if (m[k]) sp.set(k, m[k]!);
  const qs = sp.toString();
  return `${P}/browse${qs ? `?${qs}` : ''}`;
}

function browsePage(req: FastifyRequest): string {
  const q = req.query as BrowseQuery;
  const sort = q.sort && q.sort in RECIPE_SORTS ? (q.sort as RecipeSort) : 'rating';
  const r = browseRecipes({ q: q.q, cuisine: q.cuisine, diet: q.diet, max_time: Number(q.max_time) || undefined, sort, page: Number(q.page) || 1 });
  const chip = (label: string, href: string, on: boolean) => html`<a class="${on ? 'on' : ''}" href="${href}">${label}</a>`;
  const body = html`${searchBar(q.q)}<h1>${q.q ? `Recipes matching “${q.q}”` : q.cuisine ? `${q.cuisine} recipes` : 'All recipes'}</h1>
<div class="chips"><b class="muted">Cuisine:</b> ${CUISINES.map((c) => chip(c, browseHref(q, { cuisine: c }), q.cuisine === c))}</div>
<div class="chips"><b class="muted">Diet:</b> ${DIETS.map((d) => chip(d[0].toUpperCase() + d.slice(1), browseHref(q, { diet: d }), q.diet === d))}
${chip('30 minutes or less', browseHref(q, { max_time: '30' }), q.max_time === '30')} <a href="${browseHref({ q: q.q }, {})}">Clear filters</a></div>
<div class="chips"><b class="muted">Sort:</b> ${(Object.keys(RECIPE_SORTS) as RecipeSort[]).map((k) => chip(RECIPE_SORTS[k], browseHref(q, { sort: k }), sort === k))}</div>
<p class="muted">${r.total} recipes · page ${r.page} of ${r.pages}</p>
<div class="rgrid">${r.items.map(card)}</div>
<div class="pager">${r.page > 1 ? html`<a href="${browseHref(q, { sort: q.sort, page: String(r.page - 1) })}">‹ Previous</a>` : ''}
${Array.from({ length: r.pages }, (_, i) => i + 1).map((n) => (n === r.page ? html`<span class="cur">${n}</span>` : html`<a href="${browseHref(q, { page: String(n) })}">${n}</a>`))}
${r.page < r.pages ? html`<a href="${browseHref(q, { page: String(r.page + 1) })}">Next ›</a>` : ''}</div>`;
  return layout(req, 'Browse', body);
}

const NUTRITION_JS = (slug: string) => `(function(){var el=document.getElementById('nutrition');
fetch('${P}/api/nutrition/${slug}').then(function(r){return r.json();}).then(function(n){
el.innerHTML='<table><tr><th>Calories</th><td>'+n.calories+' kcal</td></tr><tr><th>Protein</th><td>'+n.protein_g+' g</td></tr></table>';
}).catch(function(){el.textContent='Nutrition information is unavailable.';});})();`;

function recipePage(req: FastifyRequest, r: Recipe, servings: number, notice?: string): string {
  const s = req.groveSession;
  const fav = s.recipes.favourites.includes(r.slug);
  const body = html`${searchBar()}
${notice ? html`<div class="notice" role="status">${notice}</div>` : ''}
<div class="card"><h1>${r.name}</h1>
<p class="muted">${r.cuisine} · ${r.difficulty} · Total time ${r.minutes} minutes · ★ ${r.rating.toFixed(1)} (${r.reviews} reviews)</p>
<p>${r.diets.map((d) => html`<span class="tag">${d}</span>`)}</p>
<div class="actions">
<form method="post" action="${P}/r/${r.slug}/favourite"><button type="submit">${fav ? 'Remove from favourites' : 'Save to favourites'}</button></form>
<a class="btn secondary" href="${P}/r/${r.slug}/card.pdf" download>Download recipe card (PDF)</a>
<a href="${P}/r/${r.slug}/print" target="_blank" rel="noopener">Printable version ↗</a></div></div>
<div class="card"><h2>Ingredients</h2>
<form method="get" action="${P}/r/${r.slug}" class="actions"><label for="servings">Servings</label>
<input id="servings" type="number" name="servings" value="${servings}" min="1" max="48" aria-label="Servings" style="width:80px">
<button class="secondary" type="submit">Update servings</button></form>
<ul>${ingredientLines(r, servings).map((l) => html`<li>${l}</li>`)}</ul>
<form method="post" action="${P}/shopping-list/add"><input type="hidden" name="recipe" value="${r.slug}"><input type="hidden" name="servings" value="${servings}">
<button type="submit">Add ingredients to shopping list</button></form></div>
<div class="card"><h2>Method</h2><ol>${r.steps.map((st) => html`<li>${st}</li>`)}</ol></div>
<div class="card"><h2>Nutrition (per serving)</h2><div id="nutrition" class="muted">Loading nutrition…</div></div>`;
  return layout(req, r.name, body, NUTRITION_JS(r.slug));
}

function homePage(req: FastifyRequest): string {
  const top = [...RECIPES].sort((a, b) => b.reviews - a.reviews).slice(0, 6);
  const body = html`${searchBar()}<h1>What shall we cook today?</h1>
<div class="chips">${CUISINES.map((c) => html`<a href="${P}/browse?cuisine=${encodeURIComponent(c)}">${c}</a>`)}
<a href="${P}/browse?max_time=30">Quick meals</a><a href="${P}/browse?diet=vegan">Vegan</a></div>
<h2>Most popular</h2><div class="rgrid">${top.map(card)}</div>`;
  return layout(req, 'Home', body);
}

function servingsOf(v: unknown, dflt: number): number {
  const n = Math.floor(Number(v));
  return Number.isFinite(n) && n >= 1 && n <= 48 ? n : dflt;
}

export function registerRecipes(app: FastifyInstance, ctx: SiteContext): void {
  const notFound = (req: FastifyRequest) => layout(req, 'Not found', html`<h1>Recipe not found</h1>`);
  app.get(`${P}`, async (_req, reply) => reply.redirect(`${P}/`));
  app.get(`${P}/`, async (req, reply) => {
    countView(req, 'recipes');
    return sendHtml(reply, homePage(req));
  });
  app.get(`${P}/browse`, async (req, reply) => {
    countView(req, 'recipes');
    return sendHtml(reply, browsePage(req));
  });
  app.get<{ Params: { slug: string }; Querystring: { servings?: string; done?: string } }>(`${P}/r/:slug`, async (req, reply) => {
    countView(req, 'recipes');
    const r = recipeBySlug(req.params.slug);
    if (!r) return sendHtml(reply, notFound(req), 404);
    const notes: Record<string, string> = { fav: 'Saved to your favourites.', unfav: 'Removed from your favourites.', list: 'Ingredients added to your shopping list.' };
    return sendHtml(reply, recipePage(req, r, servingsOf(req.query.servings, r.servings), notes[req.query.done ?? '']));
  });
  app.get<{ Params: { slug: string } }>(`${P}/r/:slug/print`, async (req, reply) => {
    const r = recipeBySlug(req.params.slug);
    if (!r) return sendHtml(reply, notFound(req), 404);
    return sendHtml(
      reply,
      page({
        title: `${r.name} (print) | Little Kitchen`, brand: 'Little Kitchen', accent: '#c2410c', home: `${P}/`, nav: [],
        body: html`<h1>${r.name}</h1><p>Serves ${r.servings} · ${r.minutes} minutes</p><h2>Ingredients</h2><ul>${ingredientLines(r, r.servings).map((l) => html`<li>${l}</li>`)}</ul>
<h2>Method</h2><ol>${r.steps.map((s) => html`<li>${s}</li>`)}</ol>`,
      }),
    );
  });
  app.get<{ Params: { slug: string } }>(`${P}/r/:slug/card.pdf`, async (req, reply) => {
    const r = recipeBySlug(req.params.slug);
    if (!r) return reply.code(404).send('no such recipe');
    const filename = `${r.slug}.pdf`;
    recordDownload(req, filename);
    const pdf = textPdf(r.name, [`Serves ${r.servings} - ${r.minutes} minutes - ${r.cuisine}`, '', 'Ingredients:', ...ingredientLines(r, r.servings).map((l) => `- ${l}`), '', 'Method:', ...r.steps.map((s, i) => `${i + 1}. ${s}`)]);
    return reply.header('content-type', 'application/pdf').header('content-disposition', `attachment; filename="${filename}"`).send(pdf);
  });
  app.get<{ Params: { slug: string } }>(`${P}/api/nutrition/:slug`, async (req, reply) => {
    const r = recipeBySlug(req.params.slug);
    await ctx.delay(req.url);
    if (!r) return reply.code(404).send({ error: 'not found' });
    return reply.header('cache-control', 'no-store').send({ calories: r.calories, protein_g: r.protein_g });
  });
  app.post(`${P}/api/newsletter`, async (req, reply) => {
    req.groveSession.popups.recipes_newsletter = str((req.body as Record<string, string> | undefined)?.choice) || 'closed';
    return reply.code(204).send();
  });
  app.post<{ Params: { slug: string } }>(`${P}/r/:slug/favourite`, async (req, reply) => {
    const r = recipeBySlug(req.params.slug);
    if (!r) return reply.code(404).send('no such recipe');
    const favs = req.groveSession.recipes.favourites;
    const i = favs.indexOf(r.slug);
    if (i >= 0) favs.splice(i, 1);
    else favs.push(r.slug);
    return reply.redirect(`${P}/r/${r.slug}?done=${i >= 0 ? 'unfav' : 'fav'}`, 303);
  });
  app.get(`${P}/favourites`, async (req, reply) => {
    countView(req, 'recipes');
    const favs = req.groveSession.recipes.favourites.map((s) => recipeBySlug(s)).filter((r): r is Recipe => !!r);
    return sendHtml(reply, layout(req, 'Favourites', html`${searchBar()}<h1>Your favourites</h1>${favs.length ? html`<div class="rgrid">${favs.map(card)}</div>` : html`<p class="card">No favourites yet.</p>`}`));
  });
  app.post(`${P}/shopping-list/add`, async (req, reply) => {
    const b = formBody(req);
    const r = recipeBySlug(str(b.recipe));
    if (!r) return reply.code(400).send('unknown recipe');
    const servings = servingsOf(str(b.servings), r.servings);
    const list = req.groveSession.recipes.shopping_list;
    const entry = { recipe_id: r.slug, servings, items: ingredientLines(r, servings) };
    const i = list.findIndex((e) => e.recipe_id === r.slug);
    if (i >= 0) list[i] = entry;
    else list.push(entry);
    return reply.redirect(`${P}/r/${r.slug}?servings=${servings}&done=list`, 303);
  });
  app.post(`${P}/shopping-list/clear`, async (req, reply) => {
    req.groveSession.recipes.shopping_list = [];
    return reply.redirect(`${P}/shopping-list`, 303);
  });
  app.get(`${P}/shopping-list`, async (req, reply) => {
    countView(req, 'recipes');
    const list = req.groveSession.recipes.shopping_list;
    const body = html`${searchBar()}<h1>Shopping list</h1>${list.length === 0 ? html`<p class="card">Your shopping list is empty.</p>` : html`
${list.map((e) => html`<div class="card"><h2>${recipeBySlug(e.recipe_id)?.name ?? e.recipe_id} <span class="muted">(${e.servings} servings)</span></h2><ul>${e.items.map((i) => html`<li>${i}</li>`)}</ul></div>`)}
<form method="post" action="${P}/shopping-list/clear" onsubmit="return confirm('Clear your whole shopping list?')"><button type="submit" class="secondary">Clear list</button></form>`}`;
    return sendHtml(reply, layout(req, 'Shopping list', body));
  });
}
