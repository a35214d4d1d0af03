// Set-of-Mark: find visible, uncovered interactive elements in the viewport, number them, and draw the
// numbered boxes onto a screenshot (an SVG composited by sharp, so the page itself is never touched).
import { Progress } from '../sandbox/progress.ts';
import type { Page } from 'playwright-core';
import type { FocusedElement, ScrollState, SomElement } from '../protocol/observation.ts';
import { inPage } from './util.ts';
import { escapeHtml } from '../protocol/html.ts';

/** Runs in the page. Kept self-contained: Playwright serialises it. */
function collectInteractive(max: number) {
  const SELECTOR = [
    'a[href]', 'button', 'input:not([type=hidden])', 'select', 'textarea', 'summary', 'label[for]',
    '[role=button]', '[role=link]', '[role=checkbox]', '[role=tab]', '[role=menuitem]', '[role=option]',
    '[onclick]', '[contenteditable=""]', '[contenteditable=true]', '[contenteditable=plaintext-only]',
  ].join(',');
  const vw = window.innerWidth;
  const vh = window.innerHeight;
  const implicitRole = (el: Element): string | undefined => {
    const explicit = el.getAttribute('role');
    if (explicit) return explicit;
    const tag = el.tagName.toLowerCase();
    if (tag === 'a') return 'link';
    if (tag === 'button' || tag === 'summary') return 'button';
    if (tag === 'select') return 'combobox';
    if (tag === 'textarea') return 'textbox';
    if (tag === 'input') {
      const t = (el as HTMLInputElement).type;
      if (t === 'checkbox' || t === 'radio') return t;
      if (t === 'submit' || t === 'button' || t === 'reset' || t === 'image') return 'button';
      return 'textbox';
    }
    return undefined;
  };
  const textOf = (el: Element): string => {
    const h = el as HTMLElement & { value?: string; placeholder?: string; labels?: NodeListOf<HTMLLabelElement> | null; type?: string };
    const checkable = h.type === 'checkbox' || h.type === 'radio';
    const parts = [
      el.getAttribute('aria-label'),
      (h.innerText ?? '').trim(),
      h.labels && h.labels.length ? h.labels[0].innerText : '',
      typeof h.value === 'string' && el.tagName !== 'SELECT' && !checkable ? h.value : '',
      h.placeholder,
      el.getAttribute('title'),
      el.querySelector('img[alt]')?.getAttribute('alt'),
    ];
    const t = parts.find((p) => p && p.trim().length > 0) ?? '';
    return t.replace(/\s+/g, ' ').trim().slice(0, 100);
  };
  const kept: { el: Element; x: number; y: number; w: number; h: number }[] = [];
  for (const el of Array.from(document.querySelectorAll(SELECTOR))) {
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) continue;
    const x0 = Math.max(0, r.left);
    const y0 = Math.max(0, r.top);
    const x1 = Math.min(vw, r.right);
    const y1 = Math.min(vh, r.bottom);
    if (x1 - x0 < 2 || y1 - y0 < 2) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || cs.display === 'none' || Number(cs.opacity) === 0) continue;
    if ((el as HTMLInputElement).disabled) continue;
    // Covered check: some sample point of the visible box must hit the element or something inside it.
    const samples: [number, number][] = [
      [(x0 + x1) / 2, (y0 + y1) / 2],
      [x0 + (x1 - x0) * 0.2, y0 + (y1 - y0) * 0.2],
      [x0 + (x1 - x0) * 0.8, y0 + (y1 - y0) * 0.8],
      [x0 + (x1 - x0) * 0.8, y0 + (y1 - y0) * 0.2],
      [x0 + (x1 - x0) * 0.2, y0 + (y1 - y0) * 0.8],
    ];
    let hit = false;
    for (const [sx, sy] of samples) {
      const t = document.elementFromPoint(sx, sy);
      if (t && (t === el || el.contains(t))) {
        hit = true;
        break;
      }
      // A label's click reaches its control: count hits on the label of this input.
      if (t && t instanceof HTMLLabelElement && t.control === el) {
        hit = true;
        break;
      }
    }
    if (!hit) continue;
    kept.push({ el, x: x0, y: y0, w: x1 - x0, h: y1 - y0 });
  }
  // Keep the innermost of nested interactive elements (a <button> inside an <a> wins).
  const inner = kept.filter((k) => !kept.some((o) => o !== k && k.el.contains(o.el)));
  const typeOf = (el: Element) => (el.tagName === 'INPUT' ? (el.getAttribute('type') ?? undefined) : undefined);
  const elements = inner.slice(0, max).map((k, i) => {
    const type = typeOf(k.el);
    return {
      label: i,
      tag: k.el.tagName.toLowerCase(),
      role: implicitRole(k.el),
      text: textOf(k.el),
      ...(type ? { type } : {}),
      ...(type === 'checkbox' || type === 'radio' ? { checked: (k.el as HTMLInputElement).checked } : {}),
      x: Math.round(k.x),
      y: Math.round(k.y),
      width: Math.round(k.w),
      height: Math.round(k.h),
    };
  });
  // In the same pass: where the page is scrolled to, and what has the keyboard focus (with a field's value).
  const se = document.scrollingElement ?? document.documentElement;
  const scroll = { x: window.scrollX, y: window.scrollY, max_x: Math.max(0, se.scrollWidth - se.clientWidth), max_y: Math.max(0, se.scrollHeight - se.clientHeight) };
  let focused = null;
  let a = document.activeElement;
  while (a && a.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
  if (a && a !== document.body && a !== document.documentElement) {
    const h = a as HTMLElement & { value?: unknown; placeholder?: string };
    const type = typeOf(a);
    const field = a.tagName === 'TEXTAREA' || (a.tagName === 'INPUT' && typeof h.value === 'string') || h.isContentEditable;
    const label = [a.getAttribute('aria-label'), h.placeholder, (a.textContent ?? '').replace(/\s+/g, ' ').trim()].find((p) => p && p.trim()) ?? '';
    focused = {
      tag: a.tagName.toLowerCase(),
      ...(type ? { type } : {}),
      ...(a.getAttribute('role') ? { role: a.getAttribute('role') as string } : {}),
      label: label.slice(0, 100),
      ...(field && type !== 'password' ? { value: String(h.isContentEditable ? (h.innerText ?? '') : h.value).slice(0, 2000) } : {}),
    };
  }
  return { elements, scroll, focused };
}

export interface SomCollection {
  elements: SomElement[];
  scroll: ScrollState;
  focused: FocusedElement | null;
}

/** SoM elements of the page's main frame, in document order, labelled from 0; with the scroll position and the
 * focused element read in the same pass. */
export async function collectSom(page: Page, timeoutMs: number, max = 300): Promise<SomCollection> {
  return (await Progress.after(timeoutMs, 'SoM collection').race(page.evaluate(inPage(collectInteractive, max)))) as SomCollection;
}

const COLORS = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#008080', '#9a6324', '#800000', '#000075', '#e6007e'];

/** An SVG of the numbered boxes at image size (`sx`, `sy` = image px per CSS px). */
export function somOverlaySvg(elements: SomElement[], width: number, height: number, sx: number, sy: number): Buffer {
  const fs = Math.max(10, Math.round(14 * Math.min(sx, sy)));
  const parts = elements.map((e) => {
    const c = COLORS[e.label % COLORS.length];
    const x = e.x * sx;
    const y = e.y * sy;
    const w = e.width * sx;
    const h = e.height * sy;
    const label = String(e.label);
    const tw = label.length * fs * 0.62 + 4;
    const ty = y >= fs + 2 ? y - fs - 2 : y;
    return (
      `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${w.toFixed(1)}" height="${h.toFixed(1)}" fill="none" stroke="${c}" stroke-width="2"/>` +
      `<rect x="${x.toFixed(1)}" y="${ty.toFixed(1)}" width="${tw.toFixed(1)}" height="${fs + 2}" fill="${c}"/>` +
      `<text x="${(x + 2).toFixed(1)}" y="${(ty + fs - 1).toFixed(1)}" font-family="DejaVu Sans, sans-serif" font-size="${fs}" font-weight="bold" fill="#fff">${escapeHtml(label)}</text>`
    );
  });
  return Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${parts.join('')}</svg>`);
}
