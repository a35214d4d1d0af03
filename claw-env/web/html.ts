// Tiny HTML helpers for the server-rendered UI: escaping, the page shell, forms that post tool calls, and the
// headers every page goes out with. Mail, documents, events and contacts are hostile input (a task may seed
// `<script>` into a subject): everything interpolated is escaped, and the Content-Security-Policy runs no script
// at all on this origin (no script-src; the one <style> element is allowed by its hash, no inline style attributes).
import { createHash } from 'node:crypto';
import { escapeHtml as esc } from '../../protocol/html.ts';

export { esc };

/** Tagged template that escapes interpolations unless they are `raw()` (nested html``). */
export class Raw {
  constructor(readonly html: string) {}
  toString(): string {
    return this.html;
  }
}
export const raw = (s: string) => new Raw(s);

export function html(strings: TemplateStringsArray, ...vals: unknown[]): Raw {
  let out = strings[0];
  vals.forEach((v, i) => {
    const part = Array.isArray(v) ? v.map((x) => (x instanceof Raw ? x.html : esc(x))).join('') : v instanceof Raw ? v.html : esc(v);
    out += part + strings[i + 1];
  });
  return new Raw(out);
}

const CSS = `body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222}header{background:#234;color:#fff;padding:8px 16px;display:flex;gap:16px;align-items:center}
header a{color:#fff;text-decoration:none;font-weight:600}header a.on{text-decoration:underline}main{padding:16px;max-width:1000px}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
tr.unread td{font-weight:700}form.inline{display:inline}fieldset{margin:12px 0;border:1px solid #ccc}label{display:block;margin:4px 0}
input[type=text],input[type=email],input:not([type]),textarea,select{min-width:320px}textarea{min-height:80px}.error{background:#fee;border:1px solid #c00;padding:8px}
.muted{color:#777}.clock{margin-left:auto;font-weight:400}.pre{white-space:pre-wrap}`;

const STYLE_HASH = `'sha256-${createHash('sha256').update(CSS).digest('base64')}'`;

/** Content-Security-Policy of every HTML page: no script of any kind, no plugins, no framing, forms post here. */
export const PAGE_CSP = `default-src 'none'; script-src 'none'; style-src ${STYLE_HASH}; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;

/** Headers of every answer of the Claw origin (HTML and JSON). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

export interface PageCtx {
  user: string;
  /** Sandbox-clock time, shown so a browser agent knows "now". */
  now: string;
  apps: readonly string[];
}

export function page(title: string, active: string, ctx: PageCtx, body: Raw, error?: string): string {
  const nav = ['mail', 'calendar', 'contacts', 'docs', 'todo'].filter((a) => ctx.apps.includes(a));
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title><style>${CSS}</style></head><body>
<header>${nav.map((a) => `<a href="/${esc(a)}" class="${a === active ? 'on' : ''}">${esc(a[0].toUpperCase() + a.slice(1))}</a>`).join('')}<span class="clock">${esc(ctx.user)} · now ${esc(ctx.now)}</span></header>
<main><h1>${esc(title)}</h1>${error ? `<div class="error" role="alert">${esc(error)}</div>` : ''}${body.html}</main></body></html>`;
}

/** A form that calls a tool through POST /ui/call/<tool>; `back` is where to go afterwards. */
export function toolForm(tool: string, back: string, fields: Raw | string, button: string, opts: { inline?: boolean; hidden?: Record<string, string> } = {}): Raw {
  const hidden = Object.entries(opts.hidden ?? {}).map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`).join('');
  return raw(`<form method="post" action="/ui/call/${esc(tool)}"${opts.inline ? ' class="inline"' : ''}><input type="hidden" name="_back" value="${esc(back)}">${hidden}${typeof fields === 'string' ? fields : fields.html}<button type="submit">${esc(button)}</button></form>`);
}

export function field(label: string, name: string, opts: { value?: string; type?: string; textarea?: boolean; placeholder?: string } = {}): Raw {
  const id = `f_${name.replace(/[^\w]/g, '_')}`;
  const input = opts.textarea
    ? `<textarea id="${id}" name="${esc(name)}">${esc(opts.value ?? '')}</textarea>`
    : `<input id="${id}" name="${esc(name)}" type="${esc(opts.type ?? 'text')}" value="${esc(opts.value ?? '')}" placeholder="${esc(opts.placeholder ?? '')}">`;
  return raw(`<label for="${id}">${esc(label)}</label>${input}`);
}
