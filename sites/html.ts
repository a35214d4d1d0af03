// Tiny server-side HTML helpers shared by the offline sites (no template engine, no network assets).
import { escapeHtml as esc } from '../protocol/html.ts';

/** Tagged template that leaves nested `Html` values unescaped and escapes everything else. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export function html(strings: TemplateStringsArray, ...vals: unknown[]): Html {
  let out = strings[0];
  vals.forEach((v, i) => {
    out += render(v) + strings[i + 1];
  });
  return new Html(out);
}

function render(v: unknown): string {
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  if (v === false || v === null || v === undefined) return '';
  return esc(v);
}

const raw = (s: string): Html => new Html(s);

export interface PageOpts {
  title: string;
  brand: string;
  /** Accent colour of the site. */
  accent: string;
  home: string;
  nav: { href: string; label: string }[];
  body: Html;
  /** Modal markup (already built) shown over the page. */
  modal?: Html;
  script?: string;
  extraCss?: string;
}

const BASE_CSS = `
*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2330;background:#f6f7f9}
a{color:var(--accent)}header.top{background:var(--accent);color:#fff;padding:10px 24px;display:flex;align-items:center;gap:24px}
header.top a{color:#fff;text-decoration:none}header.top .brand{font-weight:700;font-size:20px}header.top nav{display:flex;gap:16px;margin-left:auto}
main{max-width:1100px;margin:0 auto;padding:18px 24px 60px}h1{font-size:24px;margin:8px 0 14px}h2{font-size:19px}
.card{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:14px 16px;margin-bottom:12px}
button,.btn{background:var(--accent);color:#fff;border:0;border-radius:6px;padding:8px 14px;font-size:15px;cursor:pointer;text-decoration:none;display:inline-block}
button.secondary,.btn.secondary{background:#e8ebf0;color:#1d2330}
input[type=text],input[type=email],input[type=number],input[type=search],input[type=tel],textarea{font:inherit;padding:7px 9px;border:1px solid #b9c0cc;border-radius:6px;background:#fff}
.muted{color:#667085}.error{color:#b42318;font-size:14px}.notice{background:#ecfdf3;border:1px solid #75e0a7;padding:10px 14px;border-radius:8px;margin-bottom:14px}
.errors{background:#fef3f2;border:1px solid #fda29b;padding:10px 14px;border-radius:8px;margin-bottom:14px}
.modal-bg{position:fixed;inset:0;background:rgba(15,20,30,.55);display:flex;align-items:center;justify-content:center;z-index:50}
.modal{background:#fff;border-radius:10px;padding:22px 24px;max-width:440px;box-shadow:0 10px 40px rgba(0,0,0,.3)}
.modal .actions{display:flex;gap:10px;margin-top:16px;justify-content:flex-end}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #e4e7ec;padding:8px;text-align:left}
.pager{display:flex;gap:8px;margin-top:14px;align-items:center}.pager a,.pager span{padding:5px 10px;border:1px solid #d0d5dd;border-radius:6px;background:#fff;text-decoration:none}
.pager span.cur{background:var(--accent);color:#fff}
footer{color:#98a2b3;text-align:center;font-size:13px;padding:20px}
`;

export function page(o: PageOpts): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(o.title)}</title><link rel="icon" href="data:,">
<style>:root{--accent:${o.accent}}${BASE_CSS}${o.extraCss ?? ''}</style></head>
<body><header class="top"><a class="brand" href="${esc(o.home)}">${esc(o.brand)}</a>
<nav>${o.nav.map((n) => `<a href="${esc(n.href)}">${esc(n.label)}</a>`).join('')}</nav></header>
<main>${o.body.value}</main><footer>${esc(o.brand)} · an offline demo site of Grove</footer>
${o.modal ? o.modal.value : ''}
${o.script ? `<script>${o.script}</script>` : ''}
</body></html>`;
}

/** A modal whose buttons POST the dismissal to the server (so it stays closed for the session) and hide it. */
export function modal(o: { id: string; dismissUrl: string; title: string; text: string; buttons: { label: string; value: string; primary?: boolean }[]; closeX?: boolean }): Html {
  return html`<div class="modal-bg" id="${o.id}" role="dialog" aria-modal="true" aria-label="${o.title}">
<div class="modal">${o.closeX ? html`<button class="secondary" style="float:right;padding:2px 9px" aria-label="Close" data-dismiss="closed">×</button>` : ''}
<h2 style="margin-top:0">${o.title}</h2><p>${o.text}</p>
<div class="actions">${o.buttons.map((b) => html`<button class="${b.primary ? '' : 'secondary'}" data-dismiss="${b.value}">${b.label}</button>`)}</div></div></div>
<script>(function(){var m=document.getElementById(${raw(JSON.stringify(o.id))});
m.querySelectorAll('[data-dismiss]').forEach(function(b){b.addEventListener('click',function(){
m.remove();fetch(${raw(JSON.stringify(o.dismissUrl))},{method:'POST',keepalive:true,headers:{'content-type':'application/json'},body:JSON.stringify({choice:b.getAttribute('data-dismiss')})});});});})();</script>`;
}

export function money(n: number): string {
  return '$' + n.toFixed(2);
}
