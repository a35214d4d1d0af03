// Grove viewer: runs list, episode page, side-by-side comparison. Plain ES module, no dependencies.
// Routes live in the hash: #/?filters, #/episode?id=…&step=…&filters, #/compare?a=…&b=…&step=…

const app = document.getElementById('app');
const FILTERS = ['run', 'suite', 'site', 'level', 'success', 'termination', 'verdict', 'status', 'layout'];
const LABELS = { run: 'run', suite: 'suite', site: 'site', level: 'level', success: 'success', termination: 'termination', verdict: 'judge verdict', status: 'status', layout: 'layout' };
const PAGE = 50;

// ---------- small helpers ----------
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'html') el.innerHTML = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}
const SVGNS = 'http://www.w3.org/2000/svg';
function s(tag, attrs) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  return el;
}
async function api(path, params) {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== '') qs.set(k, v);
  const r = await fetch(`/api/${path}?${qs}`);
  const body = await r.json();
  if (!r.ok) throw new Error(body?.error?.message || r.statusText);
  return body;
}
const fileUrl = (id, path) => `/api/file?${new URLSearchParams({ id, path })}`;
const diffUrl = (id, step) => `/api/diff?${new URLSearchParams({ id, step })}`;
function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, qs] = raw.split('?');
  return { path, params: Object.fromEntries(new URLSearchParams(qs || '')) };
}
function go(path, params, replace) {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') qs.set(k, v);
  const target = `#${path}${[...qs].length ? `?${qs}` : ''}`;
  if (replace) history.replaceState(null, '', target);
  else location.hash = target;
  if (replace) route();
}
const listParams = (p) => Object.fromEntries(Object.entries(p).filter(([k]) => FILTERS.includes(k) || k === 'q' || k === 'sort' || k === 'desc'));
const fmtMs = (ms) => (ms === undefined || ms === null ? '' : ms < 1000 ? `${Math.round(ms)} ms` : ms < 60000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.floor(ms / 60000)}m ${Math.round((ms % 60000) / 1000)}s`);
const trunc = (t, n) => (t && t.length > n ? `${t.slice(0, n - 1)}…` : t || '');

function statusDot(e) {
  if (e.status === 'running') return h('span', { class: 'dot run', title: 'running' });
  if (e.status === 'incomplete') return h('span', { class: 'dot inc', title: 'incomplete: the writer stopped before finishing' });
  if (e.success === true) return h('span', { class: 'dot ok', title: 'success' });
  if (e.success === false) return h('span', { class: 'dot bad', title: 'failure' });
  return h('span', { class: 'dot', title: 'outcome unknown' });
}
function verdictBadge(v) {
  const cls = { success: 'ok', failure: 'bad', judge_error: 'warn', mixed: 'warn' }[v] || '';
  return v && v !== 'none' ? h('span', { class: `badge ${cls}` }, v.replace('_', ' ')) : h('span', { class: 'badge' }, '—');
}
function terminationBadge(t) {
  if (!t) return '';
  const cls = t === 'task_completed' ? 'info' : ['env_error', 'website_error', 'generation_error', 'timeout', 'aborted'].includes(t) ? 'warn' : 'bad';
  return h('span', { class: `badge ${cls}` }, t.replace(/_/g, ' '));
}

// ---------- action description and overlay ----------
function describe(a) {
  const p = (x, y) => (x === undefined ? '' : ` (${Math.round(x * 10) / 10}, ${Math.round(y * 10) / 10})`);
  switch (a.action) {
    case 'click': return `click${a.button && a.button !== 'left' ? ' ' + a.button : ''}${p(a.x, a.y)}`;
    case 'double_click': case 'triple_click': case 'right_click': case 'hover': return `${a.action.replace('_', ' ')}${p(a.x, a.y)}`;
    case 'drag': return `drag${p(a.x, a.y)} → (${a.to_x}, ${a.to_y})`;
    case 'type': return `type ${JSON.stringify(a.text)}${p(a.x, a.y)}${a.clear ? ' [clear]' : ''}${a.submit ? ' ⏎' : ''}`;
    case 'key': return `key ${Array.isArray(a.keys) ? a.keys.join(', ') : a.keys}`;
    case 'scroll': return `scroll ${a.direction ? `${a.direction}${a.amount ? ' ' + a.amount : ''}` : `dx=${a.dx || 0} dy=${a.dy || 0}`}${p(a.x, a.y)}`;
    case 'goto': return `goto ${a.url}`;
    case 'new_tab': return `new tab${a.url ? ' ' + a.url : ''}`;
    case 'switch_tab': return `switch to tab ${a.index}`;
    case 'close_tab': return `close tab${a.index !== undefined ? ' ' + a.index : ''}`;
    case 'wait': return `wait${a.ms ? ' ' + a.ms + ' ms' : ''}`;
    case 'click_label': return `click [${a.label}]`;
    case 'type_label': return `type ${JSON.stringify(a.text)} into [${a.label}]`;
    case 'answer': return `answer: ${a.text}`;
    case 'terminate': return `terminate${a.status ? ' ' + a.status : ''}${a.reason ? ': ' + a.reason : ''}`;
    default: return a.action;
  }
}
function stepText(st) {
  if (!st) return '';
  if (st.actions && st.actions.length) return st.actions.map((r) => describe(r.action)).join(' ; ');
  if (st.exec) return `$ ${st.exec.command.split('\n')[0]}${st.exec.command.includes('\n') ? ' …' : ''} → ${st.exec.timed_out ? 'timed out' : `exit ${st.exec.exit_code}`}`;
  return st.action_text || (st.parse_error ? `parse error: ${st.parse_error}` : 'no action');
}

/** Draws a step's actions on an SVG whose user units are image pixels of the frame shown. */
function drawActions(svg, st, scale, W, H) {
  const r = Math.max(8, W * 0.014);
  const sw = Math.max(2, W * 0.003);
  const badges = [];
  for (const ra of st.actions || []) {
    const a = ra.action;
    const c = ra.css ? { x: ra.css.x * scale, y: ra.css.y * scale } : null;
    if (a.action === 'drag' && c && ra.to_css) {
      const t = { x: ra.to_css.x * scale, y: ra.to_css.y * scale };
      svg.append(s('line', { x1: c.x, y1: c.y, x2: t.x, y2: t.y, stroke: '#ff2d55', 'stroke-width': sw * 1.5, 'marker-end': 'url(#arr)', class: 'ov-drag' }));
      svg.append(s('circle', { cx: c.x, cy: c.y, r: r * 0.5, fill: '#ff2d55', class: 'ov-point', 'data-x': c.x, 'data-y': c.y }));
    } else if (a.action === 'scroll') {
      const p = c || { x: W / 2, y: H / 2 };
      const dir = a.direction || ((a.dy || 0) < 0 ? 'up' : (a.dy || 0) > 0 ? 'down' : (a.dx || 0) < 0 ? 'left' : 'right');
      const L = Math.max(40, H * 0.12);
      const d = { up: [0, -L], down: [0, L], left: [-L, 0], right: [L, 0] }[dir] || [0, L];
      svg.append(s('line', { x1: p.x, y1: p.y, x2: p.x + d[0], y2: p.y + d[1], stroke: '#ff2d55', 'stroke-width': sw * 2, 'marker-end': 'url(#arr)', class: 'ov-scroll' }));
      svg.append(s('circle', { cx: p.x, cy: p.y, r: r * 0.4, fill: '#ff2d55', class: 'ov-point', 'data-x': p.x, 'data-y': p.y }));
    } else if (c) {
      const g = s('g', { class: `ov-click ov-${a.action}`, 'data-x': c.x, 'data-y': c.y });
      g.append(s('circle', { cx: c.x, cy: c.y, r: r * 1.6, fill: 'rgba(255,45,85,0.18)' }));
      g.append(s('circle', { cx: c.x, cy: c.y, r, fill: 'none', stroke: '#ff2d55', 'stroke-width': sw }));
      g.append(s('line', { x1: c.x - r * 2.2, y1: c.y, x2: c.x - r * 0.4, y2: c.y, stroke: '#ff2d55', 'stroke-width': sw * 0.7 }));
      g.append(s('line', { x1: c.x + r * 0.4, y1: c.y, x2: c.x + r * 2.2, y2: c.y, stroke: '#ff2d55', 'stroke-width': sw * 0.7 }));
      g.append(s('line', { x1: c.x, y1: c.y - r * 2.2, x2: c.x, y2: c.y - r * 0.4, stroke: '#ff2d55', 'stroke-width': sw * 0.7 }));
      g.append(s('line', { x1: c.x, y1: c.y + r * 0.4, x2: c.x, y2: c.y + r * 2.2, stroke: '#ff2d55', 'stroke-width': sw * 0.7 }));
      g.append(s('circle', { cx: c.x, cy: c.y, r: Math.max(1.5, sw * 0.8), fill: '#ff2d55' }));
      svg.append(g);
    }
    if ((a.action === 'type' || a.action === 'type_label') && a.text) {
      badges.push({ at: c, text: `⌨ ${trunc(a.text, 80)}${a.submit ? ' ⏎' : ''}` });
    } else if (a.action === 'key') badges.push({ at: c, text: `⌨ ${Array.isArray(a.keys) ? a.keys.join(' ') : a.keys}` });
    else if (!c && a.action !== 'scroll') badges.push({ at: null, text: describe(a) });
  }
  let y0 = H * 0.03;
  for (const b of badges) {
    const fs = Math.max(12, W * 0.017);
    const x = b.at ? Math.min(b.at.x + r * 1.8, W * 0.6) : W * 0.02;
    const y = b.at ? Math.max(fs * 1.6, b.at.y - r * 1.8) : (y0 += fs * 1.9);
    const t = s('text', { x: x + fs * 0.5, y, 'font-size': fs, 'font-family': 'system-ui, sans-serif', fill: '#fff', class: 'ov-text' });
    t.textContent = b.text;
    const bg = s('rect', { x, y: y - fs * 1.1, width: Math.min(W - x, fs * 0.6 * b.text.length + fs), height: fs * 1.5, rx: fs * 0.3, fill: 'rgba(255,45,85,0.92)' });
    svg.append(bg, t);
  }
}

/** An image with an SVG overlay sized to the image's natural pixels. */
function shotWithOverlay(id, frame, st, scale, opts = {}) {
  const box = h('div', { class: 'shot' });
  if (!frame) {
    box.append(h('div', { class: 'none' }, opts.empty || 'No frame recorded for this state.'));
    return box;
  }
  const img = h('img', { src: opts.src || fileUrl(id, frame), alt: opts.alt || frame, decoding: 'async' });
  // Reserve the frame's space while it loads so the page does not jump between steps.
  if (opts.size && opts.size.width && opts.size.height) box.style.aspectRatio = `${opts.size.width} / ${opts.size.height}`;
  box.append(img);
  if (st && opts.overlay !== false) {
    const place = () => {
      const W = img.naturalWidth;
      const H = img.naturalHeight;
      box.querySelector('svg.ov')?.remove();
      const svg = s('svg', { class: 'ov', viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none' });
      const defs = s('defs');
      const m = s('marker', { id: 'arr', viewBox: '0 0 10 10', refX: 5, refY: 5, markerWidth: 4, markerHeight: 4, orient: 'auto-start-reverse' });
      m.append(s('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: '#ff2d55' }));
      defs.append(m);
      svg.append(defs);
      drawActions(svg, st, scale, W, H);
      box.append(svg);
      box.dataset.ready = '1';
    };
    if (img.complete && img.naturalWidth) place();
    else img.addEventListener('load', place, { once: true });
  } else {
    img.addEventListener('load', () => (box.dataset.ready = '1'), { once: true });
  }
  return box;
}

// ---------- runs list ----------
let listState = { items: [], sel: 0 };
let listSeq = 0;
// The filters as they are in the address now: a control changed while an earlier change is still loading
// must build on the newest filters, not on the ones its (about to be replaced) list was drawn with.
const liveListParams = () => listParams(parseHash().params);

async function renderList(params) {
  const mine = ++listSeq;
  const offset = Number(params.offset || 0);
  const [facets, page] = await Promise.all([api('facets'), api('episodes', { ...listParams(params), offset, limit: PAGE })]);
  if (mine !== listSeq) return; // a newer list render started while this one loaded: drawing it would show stale rows
  document.getElementById('root').textContent = facets.root;
  const search = h('input', { type: 'search', placeholder: 'Search task text or id…  ( / )', value: params.q || '', id: 'q' });
  let timer;
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => go('/', { ...liveListParams(), q: search.value, offset: 0 }, true), 250);
  });
  const selects = FILTERS.filter((f) => Object.keys(facets.facets[f] || {}).length > 0).map((f) => {
    const values = Object.entries(facets.facets[f]).sort((a, b) => (a[0] < b[0] ? -1 : 1));
    const sel = h('select', { 'data-filter': f, class: params[f] ? 'set' : '', title: LABELS[f] },
      h('option', { value: '' }, `${LABELS[f]}: all`),
      values.map(([v, n]) => h('option', { value: v, selected: params[f] === v }, `${v.replace(/_/g, ' ')} (${n})`)));
    sel.addEventListener('change', () => go('/', { ...liveListParams(), [f]: sel.value, offset: 0 }));
    return sel;
  });
  const clear = h('button', { onclick: () => go('/', {}) }, 'Clear');
  const st = page.stats || {};
  const judged = (st.success || 0) + (st.failure || 0);
  const stats = h('div', { class: 'stats' },
    h('span', {}, h('b', { id: 'total' }, page.total), ` of ${facets.total} episodes`),
    judged ? h('span', {}, 'success ', h('b', { class: 'rate' }, `${Math.round((100 * st.success) / judged)}%`), ` (${st.success}/${judged})`) : '',
    st.noops ? h('span', {}, h('b', {}, st.noops), ' no-op steps') : '',
    st.errors ? h('span', {}, h('b', {}, st.errors), ' steps with errors') : '',
    facets.errors.length ? h('span', { class: 'err', title: facets.errors.map((e) => `${e.id}: ${e.error}`).join('\n') }, `${facets.errors.length} unreadable`) : '');
  const sortable = (label, key, cls) => {
    const on = params.sort === key;
    return h('th', { class: cls, style: 'cursor:pointer', onclick: () => go('/', { ...listParams(params), sort: key, desc: on && params.desc !== '1' ? '1' : '', offset: 0 }) }, label, on ? (params.desc === '1' ? ' ↓' : ' ↑') : '');
  };
  const rows = page.items.map((e, i) =>
    h('tr', { class: 'row', 'data-id': e.id, onclick: () => openEpisode(e.id, params) },
      h('td', {}, statusDot(e)),
      h('td', { class: 'task' }, h('div', { class: 'q' }, e.question || '(no task text)'), h('div', { class: 'id' }, `${e.task_id}${e.run_id ? ` · ${e.run_id}` : ''} · ${e.id}`)),
      h('td', {}, e.site), h('td', {}, e.suite || ''), h('td', {}, e.level || ''),
      h('td', { class: 'num' }, e.steps),
      h('td', { class: 'num' }, e.noops || ''),
      h('td', { class: 'num' }, e.errors || ''),
      h('td', {}, e.status === 'complete' ? terminationBadge(e.termination) : h('span', { class: `badge ${e.status === 'running' ? 'info' : 'warn'}` }, e.status)),
      h('td', {}, verdictBadge(e.verdict)),
      h('td', { class: 'num' }, e.reward ?? ''),
      h('td', { class: 'num' }, fmtMs(e.duration_ms))));
  const table = page.items.length
    ? h('table', { class: 'runs' },
        h('thead', {}, h('tr', {}, h('th', {}, ''), sortable('Task', 'id'), h('th', {}, 'Site'), h('th', {}, 'Suite'), h('th', {}, 'Level'),
          sortable('Steps', 'steps', 'num'), sortable('No-ops', 'noops', 'num'), sortable('Errors', 'errors', 'num'), h('th', {}, 'End'), h('th', {}, 'Verdict'), sortable('Reward', 'reward', 'num'), h('th', { class: 'num' }, 'Time'))),
        h('tbody', {}, rows))
    : h('div', { class: 'empty' }, facets.total ? 'No episode matches these filters.' : `No episodes found under ${facets.root}.`);
  const pager = h('div', { class: 'pager' },
    h('span', {}, page.total ? `${offset + 1}–${Math.min(offset + PAGE, page.total)} of ${page.total}` : ''),
    h('button', { disabled: offset === 0, onclick: () => go('/', { ...listParams(params), offset: Math.max(0, offset - PAGE) }) }, '← Prev'),
    h('button', { disabled: offset + PAGE >= page.total, onclick: () => go('/', { ...listParams(params), offset: offset + PAGE }) }, 'Next →'));
  app.replaceChildren(h('div', { class: 'filters' }, search, selects, clear), stats, table, pager);
  listState = { items: page.items, sel: Math.min(listState.sel, Math.max(0, page.items.length - 1)), params };
  if (params.focus === 'q' || document.activeElement === document.body) {
    /* keep focus where the user was typing */
  }
  if (params.q !== undefined && params.q !== '') {
    search.focus();
    search.setSelectionRange(search.value.length, search.value.length);
  }
  markSelected();
  document.body.dataset.page = 'list';
  performance.mark('grove:list-rendered'); // read by bench/viewer.bench.ts
}
function markSelected() {
  const rows = app.querySelectorAll('tr.row');
  rows.forEach((r, i) => r.classList.toggle('sel', i === listState.sel));
  rows[listState.sel]?.scrollIntoView({ block: 'nearest' });
}
function openEpisode(id, params, step) {
  go('/episode', { id, ...listParams(params || {}), step });
}

// ---------- episode page ----------
let epState = null;

function beforeShot(ep, idx) {
  return (idx > 0 ? ep.steps[idx - 1].screenshot : ep.initial && ep.initial.screenshot) || (ep.steps[idx] && ep.steps[idx].screenshot);
}
function frameScale(ep, idx) {
  // idx: index into ep.steps of the step whose *before* frame is shown; the before frame is the previous step's
  // frame (or the initial one), so its scale comes from there.
  const prev = idx > 0 ? ep.steps[idx - 1].screenshot : ep.initial && ep.initial.screenshot;
  const own = ep.steps[idx] && ep.steps[idx].screenshot;
  return (prev && prev.scale) || (own && own.scale) || 1;
}
// error_kind comes from the server (recording/read/summary.ts stepErrorKind): 'action' when the output did not parse
// or an action failed, 'environment' when the actions ran but the environment reported a problem with the step.
const stepFlags = (st) => ({
  err: st.error_kind === 'action',
  env: st.error_kind === 'environment',
  noop: Boolean(st.diff && st.diff.noop),
  term: (st.actions || []).some((a) => a.action.action === 'answer' || a.action.action === 'terminate'),
});

async function renderEpisode(params) {
  const ep = await api('episode', { id: params.id });
  const nb = await api('neighbours', { id: params.id, ...listParams(params) }).catch(() => ({}));
  document.getElementById('root').textContent = ep.dir;
  epState = { ep, nb, params, mode: params.mode || 'action' };
  const n = ep.steps.length;
  let cur = params.step === undefined ? (n ? 1 : 0) : Math.max(0, Math.min(n, Number(params.step)));
  epState.cur = cur;
  const sum = ep.summary || {};
  const head = h('div', { class: 'ep-head' },
    h('div', { class: 'title' },
      h('h1', {}, ep.task.question || '(no task text)'),
      h('div', { class: 'meta' },
        statusDot(sum), h('span', { class: 'badge' }, ep.meta.status),
        terminationBadge(ep.meta.termination && ep.meta.termination.reason),
        verdictBadge(sum.verdict),
        ep.meta.reward !== undefined ? h('span', { class: 'badge' }, `reward ${ep.meta.reward}`) : '',
        h('span', {}, `${n} steps`), sum.noops ? h('span', { class: 'badge warn' }, `${sum.noops} no-op`) : '', sum.errors ? h('span', { class: 'badge bad' }, `${sum.errors} errors`) : '',
        sum.duration_ms ? h('span', {}, fmtMs(sum.duration_ms)) : '',
        h('span', {}, 'task ', h('code', {}, ep.task.id)), ep.meta.run_id ? h('span', {}, 'run ', h('code', {}, ep.meta.run_id)) : '',
        ep.task.site ? h('span', {}, 'site ', h('code', {}, ep.task.site)) : '', ep.task.level ? h('span', { class: 'badge' }, ep.task.level) : '',
        h('span', { class: 'badge' }, ep.layout),
        ep.damaged_lines ? h('span', { class: 'badge bad', title: 'lines of steps.jsonl that could not be read (torn by a crash?)' }, `${ep.damaged_lines} damaged lines`) : '')),
    h('div', { class: 'ep-nav' },
      h('button', { onclick: () => go('/', listParams(params)) }, '← Runs'),
      h('button', { id: 'prev-ep', disabled: !nb.prev, title: 'previous episode (k)', onclick: () => nb.prev && openEpisode(nb.prev, params) }, '↑ k'),
      h('span', { class: 'c' }, nb.index >= 0 ? `${nb.index + 1}/${nb.total}` : ''),
      h('button', { id: 'next-ep', disabled: !nb.next, title: 'next episode (j)', onclick: () => nb.next && openEpisode(nb.next, params) }, 'j ↓'),
      ep.siblings.length
        ? (() => {
            const sel = h('select', { title: 'Compare with another episode of the same task' }, h('option', { value: '' }, `Compare… (${ep.siblings.length})`),
              ep.siblings.map((x) => h('option', { value: x.id }, `${x.id} · ${x.steps} steps · ${x.success === true ? 'success' : x.success === false ? 'failure' : '?'}`)));
            sel.addEventListener('change', () => sel.value && go('/compare', { a: ep.id, b: sel.value, step: epState.cur }));
            return sel;
          })()
        : ''));
  const maxT = Math.max(1, ...ep.steps.map((x) => x.timings.total + ((x.policy && x.policy.latency_ms) || 0)));
  const cells = [h('div', { class: 'cell start', 'data-step': 0, title: 'start (after reset)', onclick: () => selectStep(0) }, h('div', { class: 'flags' }, ''), h('div', { class: 'bar', style: 'height:10px' }), h('div', { class: 'n' }, '0'))];
  ep.steps.forEach((st, i) => {
    const f = stepFlags(st);
    const t = st.timings.total + ((st.policy && st.policy.latency_ms) || 0);
    const tip = `${st.step}. ${stepText(st)}\n${t ? `time ${fmtMs(t)}` : ''}${f.noop ? '\nno visible change (missed click?)' : ''}${f.err ? `\nerror: ${st.parse_error || ((st.actions || []).find((a) => a.error) || {}).error?.message || (st.last_action_error && st.last_action_error.message) || ''}` : ''}${f.env ? `\nenvironment (the actions ran): ${st.last_action_error.message}` : ''}`;
    cells.push(h('div', { class: `cell${f.err ? ' err' : ''}${f.env ? ' env' : ''}${f.noop ? ' noop' : ''}${f.term ? ' term' : ''}`, 'data-step': i + 1, title: tip, onclick: () => selectStep(i + 1) },
      h('div', { class: 'flags' }, f.err ? '✖' : f.env ? '⚠' : f.noop ? '∅' : f.term ? '■' : ''),
      h('div', { class: 'bar', style: `height:${6 + Math.round((34 * t) / maxT)}px` }),
      h('div', { class: 'n' }, st.step)));
  });
  const timeline = h('div', { class: 'timeline', id: 'timeline' }, cells);
  const legend = h('div', { class: 'legend' },
    h('span', {}, h('i', { style: 'background:#b8c4d6' }), 'step (bar = time)'), h('span', {}, h('i', { style: 'background:var(--bad)' }), 'error'),
    h('span', {}, h('i', { style: 'background:var(--env)' }), 'environment problem (actions ran)'),
    h('span', {}, h('i', { style: 'background:var(--warn)' }), 'no visible change'), h('span', {}, h('i', { style: 'background:var(--term)' }), 'answer / terminate'));
  const body = h('div', { class: 'ep-body' }, h('div', { class: 'stage', id: 'stage' }), h('div', { class: 'side', id: 'side' }));
  app.replaceChildren(head, timeline, legend, body);
  document.body.dataset.page = 'episode';
  selectStep(cur, true);
  performance.mark('grove:episode-rendered');
}

function selectStep(i, initial) {
  const { ep } = epState;
  epState.cur = i;
  if (!initial) history.replaceState(null, '', `#/episode?${new URLSearchParams({ ...Object.fromEntries(Object.entries({ ...epState.params, step: i, mode: epState.mode }).filter(([, v]) => v !== undefined && v !== '')) })}`);
  document.querySelectorAll('#timeline .cell').forEach((c) => c.classList.toggle('cur', Number(c.dataset.step) === i));
  document.querySelector(`#timeline .cell[data-step="${i}"]`)?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  renderStage();
  renderSide();
  // Prefetch the neighbouring frames so arrow keys feel instant (frames are otherwise loaded lazily).
  for (const j of [i + 1, i + 2]) {
    const st = ep.steps[j - 1];
    if (st && st.before_frame) new Image().src = fileUrl(ep.id, st.before_frame);
  }
}

function renderStage() {
  const { ep, cur, mode } = epState;
  const stage = document.getElementById('stage');
  const st = cur > 0 ? ep.steps[cur - 1] : null;
  const modes = st ? [['action', 'Action'], ['pair', 'Before / after'], ['diff', 'Diff']] : [['action', 'Start']];
  const m = st ? mode : 'action';
  const seg = h('div', { class: 'seg' }, modes.map(([k, label]) => h('button', { class: k === m ? 'on' : '', 'data-mode': k, onclick: () => { epState.mode = k; selectStep(epState.cur); } }, label)));
  const desc = h('span', { class: 'desc', title: st ? stepText(st) : '' }, st ? `${st.step}. ${stepText(st)}` : 'Start: the page after reset');
  let view;
  if (!st) view = shotWithOverlay(ep.id, ep.initial.frame, null, 1, { empty: 'No initial frame recorded.' });
  else if (m === 'pair') {
    view = h('div', { class: 'pair' },
      h('div', {}, h('div', { class: 'lbl' }, 'before (what the model saw)'), shotWithOverlay(ep.id, st.before_frame, st, frameScale(ep, cur - 1))),
      h('div', {}, h('div', { class: 'lbl' }, 'after'), shotWithOverlay(ep.id, st.frame, null, 1, { empty: 'No frame after this step.' })));
  } else if (m === 'diff') {
    view = st.before_frame && st.frame
      ? h('div', {}, h('div', { class: 'lbl' }, `changed pixels in red${st.diff ? ` · ${(st.diff.changed_share * 100).toFixed(2)}% changed` : ''}`), shotWithOverlay(ep.id, st.frame, null, 1, { src: diffUrl(ep.id, st.step), alt: 'diff' }))
      : h('div', { class: 'shot' }, h('div', { class: 'none' }, 'A diff needs both a before and an after frame.'));
  } else {
    view = shotWithOverlay(ep.id, st.before_frame || st.frame, st, frameScale(ep, cur - 1), { empty: 'No frame recorded before this step.', size: beforeShot(ep, cur - 1) });
  }
  const url = st ? (cur > 1 ? ep.steps[cur - 2].url : ep.initial.url) : ep.initial.url;
  stage.replaceChildren(h('div', { class: 'stage-bar' }, seg, desc), view, url ? h('div', { class: 'urlline' }, m === 'pair' || m === 'diff' ? `after: ${st.url}` : url) : '');
}

/** A judge's details (grove judge records, run verdicts): key points, per-screenshot scores, kept screenshots. */
function verdictDetails(d) {
  if (!d) return '';
  const parts = [];
  const facts = [];
  if (d.unparsed) facts.push(['reply', 'no verdict in the reply (unparsed)']);
  if (d.error_kind) facts.push(['error', d.error_kind]);
  if (d.prompts) facts.push(['prompts', d.prompts]);
  if (d.k !== undefined) facts.push(['screenshots (k)', d.images_sent !== undefined ? `${d.images_sent} of last ${d.k}` : d.k]);
  if (d.dimensions) facts.push(['dimensions', Object.entries(d.dimensions).filter(([, r]) => r !== null).map(([k, r]) => `${k}: ${r === 1 ? 'pass' : r === 0 ? 'fail' : r}`).join(', ')]);
  if (facts.length) parts.push(kv(facts));
  if (d.key_points) parts.push(h('div', { class: 'kp' }, h('div', { class: 'c' }, 'Key points'), h('pre', {}, d.key_points)));
  if (Array.isArray(d.image_judge_record) && d.image_judge_record.length) {
    parts.push(h('div', { class: 'imgs' }, h('div', { class: 'c' }, `Screenshot scores (kept: ${(d.kept_images || []).join(', ') || 'none'})`),
      h('ul', { class: 'plain' }, d.image_judge_record.map((r, i) => h('li', { class: r.kept ? 'kept' : '' },
        `#${r.index ?? i}: ${r.Score}${r.kept ? ' kept' : ''}${r.reason ? ` — ${trunc(r.reason, 160)}` : r.parse_error ? ` — ${r.parse_error}` : ''}`)))));
  }
  return parts.length ? h('details', { class: 'vd' }, h('summary', {}, 'Details'), parts) : '';
}

function card(title, ...content) {
  return h('div', { class: 'card' }, h('h3', {}, title), ...content);
}
function kv(pairs) {
  return h('dl', { class: 'kv' }, pairs.filter(([, v]) => v !== undefined && v !== null && v !== '').map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

/** Where an executed action pointed: in the space the action gave (css_px needs no conversion), then CSS px. */
function pointText(ra) {
  const space = ra.space || ra.action.space || '?';
  const to = ra.to_css ? ` → ${ra.to_css.x}, ${ra.to_css.y}` : '';
  if (space === 'css_px') return `css_px ${ra.raw.x}, ${ra.raw.y}${to}`;
  return `${space} ${ra.raw.x}, ${ra.raw.y} → css_px ${ra.css ? `${ra.css.x}, ${ra.css.y}` : '—'}${to}`;
}

/**
 * The model's own points (its output parsed with its format, by the server) when they are not the executed ones:
 * a policy may execute another space than it prints (the scripted policy clicks css_px points and prints rel1000).
 */
function modelWrote(st) {
  const pts = (st.model_actions || []).filter((a) => a.x !== undefined);
  if (!pts.length) return '';
  const key = (space, x, y) => `${space} ${x}, ${y}`;
  const executed = new Set((st.actions || []).filter((ra) => ra.raw).map((ra) => key(ra.space || ra.action.space, ra.raw.x, ra.raw.y)));
  if (pts.every((a) => executed.has(key(a.space, a.x, a.y)))) return '';
  return `model wrote (${st.format}): ${pts.map((a) => `${a.action} ${key(a.space, a.x, a.y)}`).join(' ; ')}`;
}

function renderSide() {
  const { ep, cur } = epState;
  const side = document.getElementById('side');
  const st = cur > 0 ? ep.steps[cur - 1] : null;
  const cards = [];
  if (!st) {
    cards.push(card('Start', kv([['url', ep.initial.url || ep.task.start_url], ['title', ep.initial.title], ['started', ep.meta.started_at]])));
    if (ep.initial.tabs && ep.initial.tabs.length) cards.push(card('Tabs', tabList(ep.initial.tabs)));
  } else {
    const acts = (st.actions || []).map((ra) => h('div', { class: 'act' },
      h('div', { class: 'd' }, describe(ra.action)),
      ra.raw ? h('div', { class: 'c point' }, pointText(ra)) : '',
      ra.error ? h('div', { class: 'c err' }, `${ra.error.code}: ${ra.error.message}`) : '',
      h('div', { class: 'c' }, `${Math.round(ra.ms)} ms`)));
    const wrote = modelWrote(st);
    cards.push(card(`Step ${st.step}`, acts.length ? acts : h('div', { class: 'c' }, st.action_text || 'no action'),
      wrote ? h('div', { class: 'c model-wrote' }, wrote) : '',
      st.parse_error ? h('div', { class: 'err' }, `parse error: ${st.parse_error}`) : '',
      st.last_action_error && !(st.actions || []).some((a) => a.error && a.error.message === st.last_action_error.message)
        ? h('div', { class: st.error_kind === 'environment' ? 'env' : 'err' }, `${st.error_kind === 'environment' ? 'environment: ' : ''}${st.last_action_error.code}: ${st.last_action_error.message}`)
        : '',
      st.diff ? h('div', { class: st.diff.noop ? 'badge warn' : 'badge' }, `${(st.diff.changed_share * 100).toFixed(2)}% of pixels changed${st.diff.noop ? ' — no visible effect (missed click?)' : ''}`) : ''));
    if (st.exec) {
      // A shell step (SWE episodes): the command, its exit code, what it printed and the files it changed.
      cards.push(card(`Command · ${st.exec.timed_out ? 'timed out' : `exit ${st.exec.exit_code}`} · ${fmtMs(st.exec.duration_ms)}`,
        h('pre', { class: 'exec-command' }, st.exec.command),
        st.exec.changed_files && st.exec.changed_files.length ? h('div', { class: 'c' }, `changed: ${st.exec.changed_files.join(', ')}`) : '',
        h('pre', { class: 'exec-output' }, st.exec.output || '(no output)')));
    }
    if (st.thought) cards.push(card('Thought', h('pre', {}, st.thought)));
    if (st.model_output) cards.push(card(`Model output${st.format ? ` · ${st.format}` : ''}`, h('pre', { id: 'model-output' }, prettyOutput(st.model_output))));
    if (st.tool_calls && st.tool_calls.length) cards.push(...toolCallCards(st.tool_calls));
    if (st.actions && st.actions.length) {
      cards.push(h('details', { class: 'card', open: !st.model_output || undefined }, h('summary', {}, 'Parsed action (canonical)'), h('pre', {}, JSON.stringify(st.actions.map((a) => a.action), null, 1))));
    }
    if (st.url || st.title) cards.push(card('Page after', kv([['url', st.url], ['title', st.title]]), st.tabs && st.tabs.length > 1 ? tabList(st.tabs) : ''));
    if (st.events && st.events.length) cards.push(card('Events', h('ul', { class: 'plain' }, st.events.map((e) => h('li', {}, `${e.type}: ${eventText(e)}`)))));
    // Foreign layouts (WebVoyager, Online-Mind2Web folders) record no timings: "—", not a made-up 0 ms.
    const t = ep.layout === 'grove' ? st.timings : {};
    const ms = (x) => (x === undefined ? '—' : fmtMs(x));
    cards.push(card('Timings', kv([['action', ms(t.action)], ['settle', ms(t.settle)], ['capture', ms(t.capture)], ['encode', ms(t.encode)], ['total', ms(t.total)],
      ['model', st.policy && fmtMs(st.policy.latency_ms)], ['tokens', st.policy && st.policy.prompt_tokens !== undefined ? `${st.policy.prompt_tokens} in / ${st.policy.completion_tokens ?? '?'} out` : ''], ['at', st.ts]])));
  }
  if (ep.meta.answer !== undefined) cards.push(card('Final answer', h('pre', {}, ep.meta.answer)));
  const v = ep.meta.verdicts || [];
  cards.push(card(`Verdicts (${v.length})`, v.length
    ? v.map((x) => h('div', { class: 'verdict' }, h('b', {}, x.judge), ' ', verdictBadge(x.outcome), x.score !== undefined ? h('span', { class: 'c' }, ` score ${x.score}`) : '', x.reasoning ? h('div', { class: 'r' }, x.reasoning) : '', verdictDetails(x.details)))
    : h('div', { class: 'c' }, 'No judge verdicts recorded.')));
  if (ep.har) {
    cards.push(h('details', { class: 'card' }, h('summary', {}, `Network recording · ${ep.har.entries} requests`),
      kv([['statuses', Object.entries(ep.har.statuses).map(([k, n]) => `${k}: ${n}`).join(', ')], ['bytes', ep.har.bytes]]),
      h('ul', { class: 'plain' }, ep.har.urls.slice(0, 50).map((u) => h('li', {}, trunc(u, 90)))),
      h('a', { href: fileUrl(ep.id, ep.har.file), download: ep.har.file }, `download ${ep.har.file}`)));
  }
  if (ep.meta.termination) cards.push(card('Ended', kv([['reason', ep.meta.termination.reason], ['detail', ep.meta.termination.detail], ['finished', ep.meta.finished_at]])));
  side.replaceChildren(...cards);
}
// Claw (tool-calling) steps: each call with what the app answered, and the state it changed.
function toolCallCards(calls) {
  const changes = calls.flatMap((c) => c.changes || []);
  return [
    card(`Tool calls (${calls.length})`, calls.map((c) => h('div', { class: 'act' },
      h('div', { class: 'd' }, `${c.name}(${trunc(JSON.stringify(c.arguments), 160)})`),
      h('div', { class: c.status >= 400 ? 'c err' : 'c' }, c.status >= 400 ? `${c.status} ${c.error ? `${c.error.code}: ${c.error.message}` : ''}` : `200 ${trunc(JSON.stringify(c.result), 240)}`)))),
    card(`State changes (${changes.length})`, changes.length
      ? h('ul', { class: 'plain' }, changes.map((ch) => h('li', {}, `${ch.op} ${ch.collection} ${ch.id}${ch.fields ? `: ${Object.entries(ch.fields).map(([k, v]) => `${k} ${trunc(JSON.stringify(v[0]), 40)} → ${trunc(JSON.stringify(v[1]), 60)}`).join('; ')}` : ch.record ? ` ${trunc(JSON.stringify(ch.record), 160)}` : ''}`)))
      : h('div', { class: 'c' }, 'No state change.')),
  ];
}
function tabList(tabs) {
  return h('ul', { class: 'plain' }, tabs.map((t) => h('li', {}, `${t.active ? '● ' : ''}${t.index}: ${trunc(t.title, 40)} — ${trunc(t.url, 80)}`)));
}
function eventText(e) {
  const { type, ...rest } = e;
  return Object.entries(rest).map(([k, v]) => `${k}=${typeof v === 'string' ? trunc(v, 120) : v}`).join(' ');
}
function prettyOutput(t) {
  try {
    return JSON.stringify(JSON.parse(t), null, 1);
  } catch {
    return t;
  }
}

// ---------- comparison ----------
let cmpState = null;
async function renderCompare(params) {
  const [a, b] = await Promise.all([api('episode', { id: params.a }), api('episode', { id: params.b })]);
  cmpState = { a, b, cur: Number(params.step || 1) };
  document.getElementById('root').textContent = `${a.dir}  ⇄  ${b.dir}`;
  drawCompare();
  document.body.dataset.page = 'compare';
}
function drawCompare() {
  const { a, b } = cmpState;
  const max = Math.max(a.steps.length, b.steps.length);
  cmpState.cur = Math.max(0, Math.min(max, cmpState.cur));
  const cur = cmpState.cur;
  history.replaceState(null, '', `#/compare?${new URLSearchParams({ a: a.id, b: b.id, step: cur })}`);
  const col = (ep) => {
    const st = cur > 0 ? ep.steps[cur - 1] : null;
    const sum = ep.summary || {};
    const frame = !cur ? ep.initial.frame : st ? st.before_frame || st.frame : ep.steps.at(-1)?.frame;
    return h('div', { class: 'col' },
      h('div', { class: 'card' }, h('h2', {}, h('a', { href: `#/episode?${new URLSearchParams({ id: ep.id, step: cur })}` }, ep.id)),
        h('div', { class: 'meta' }, statusDot(sum), ' ', terminationBadge(ep.meta.termination && ep.meta.termination.reason), ' ', verdictBadge(sum.verdict), ` ${ep.steps.length} steps`),
        h('div', { class: 'act' }, h('div', { class: 'd' }, st ? `${st.step}. ${stepText(st)}` : cur ? `(ended after ${ep.steps.length} steps)` : 'start'))),
      shotWithOverlay(ep.id, frame, st, st ? frameScale(ep, cur - 1) : 1, { empty: 'No frame.' }),
      st && st.thought ? h('div', { class: 'card' }, h('h3', {}, 'Thought'), h('pre', {}, st.thought)) : '');
  };
  app.replaceChildren(
    h('div', { class: 'ep-head' }, h('div', { class: 'title' }, h('h1', {}, a.task.question), h('div', { class: 'meta' }, `Comparing two episodes of task ${a.task.id} · step ${cur} of ${max}`)),
      h('div', { class: 'ep-nav' }, h('button', { onclick: () => go('/episode', { id: a.id, step: cur }) }, '← Episode'), h('button', { onclick: () => { cmpState.cur--; drawCompare(); } }, '←'), h('button', { onclick: () => { cmpState.cur++; drawCompare(); } }, '→'))),
    h('div', { class: 'cmp', style: 'margin-top:12px' }, col(a), col(b)));
}

// ---------- routing and keys ----------
async function route() {
  const { path, params } = parseHash();
  try {
    if (path === '/episode' && params.id) await renderEpisode(params);
    else if (path === '/compare' && params.a && params.b) await renderCompare(params);
    else await renderList(params);
  } catch (e) {
    app.replaceChildren(h('div', { class: 'empty' }, `Could not load: ${e.message}`));
  }
}
window.addEventListener('hashchange', route);

document.addEventListener('keydown', (e) => {
  const typing = ['INPUT', 'SELECT', 'TEXTAREA'].includes(document.activeElement?.tagName);
  if (typing) {
    if (e.key === 'Escape') document.activeElement.blur();
    return;
  }
  if (e.metaKey || e.ctrlKey || e.altKey) return;
  const page = document.body.dataset.page;
  if (page === 'list') {
    if (e.key === 'j' || e.key === 'ArrowDown') { listState.sel = Math.min(listState.items.length - 1, listState.sel + 1); markSelected(); e.preventDefault(); }
    else if (e.key === 'k' || e.key === 'ArrowUp') { listState.sel = Math.max(0, listState.sel - 1); markSelected(); e.preventDefault(); }
    else if (e.key === 'Enter' || e.key === 'o') { const it = listState.items[listState.sel]; if (it) openEpisode(it.id, listState.params); }
    else if (e.key === '/') { document.getElementById('q')?.focus(); e.preventDefault(); }
  } else if (page === 'episode' && epState) {
    const n = epState.ep.steps.length;
    if (e.key === 'ArrowRight') { if (epState.cur < n) selectStep(epState.cur + 1); e.preventDefault(); }
    else if (e.key === 'ArrowLeft') { if (epState.cur > 0) selectStep(epState.cur - 1); e.preventDefault(); }
    else if (e.key === 'Home') selectStep(0);
    else if (e.key === 'End') selectStep(n);
    else if (e.key === 'j' && epState.nb.next) openEpisode(epState.nb.next, epState.params);
    else if (e.key === 'k' && epState.nb.prev) openEpisode(epState.nb.prev, epState.params);
    else if (e.key === 'b' || e.key === 'a') { epState.mode = e.key === 'b' ? 'action' : 'pair'; selectStep(epState.cur); }
    else if (e.key === 'd') { epState.mode = epState.mode === 'diff' ? 'action' : 'diff'; selectStep(epState.cur); }
    else if (e.key === 'Escape' || e.key === 'Backspace') go('/', listParams(epState.params));
  } else if (page === 'compare' && cmpState) {
    if (e.key === 'ArrowRight') { cmpState.cur++; drawCompare(); }
    else if (e.key === 'ArrowLeft') { cmpState.cur--; drawCompare(); }
    else if (e.key === 'Escape') go('/episode', { id: cmpState.a.id, step: cmpState.cur });
  }
});

route();
