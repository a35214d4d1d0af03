// The one HTML escaping (protocol/html.ts): what a hostile string becomes in element content and in a quoted
// attribute, and that its source runs on its own (the offline shop's client script inlines it).
import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../../protocol/html.ts';

const HOSTILE = `"><script>alert('x')</script><img src=x onerror='alert(1)'>&amp;`;

describe('escapeHtml', () => {
  it('escapes the five characters that end text or a quoted attribute, and nothing else', () => {
    expect(escapeHtml(`a&b<c>d"e'f`)).toBe('a&amp;b&lt;c&gt;d&quot;e&#39;f');
    expect(escapeHtml('plain text, ü — 100%')).toBe('plain text, ü — 100%');
    expect(escapeHtml(null)).toBe('');
    expect(escapeHtml(undefined)).toBe('');
    expect(escapeHtml(42)).toBe('42');
  });

  it('an attacker string stays one text node / one attribute value', () => {
    const out = escapeHtml(HOSTILE);
    expect(out).not.toMatch(/[<>"']/);
    // An entity in the input is text, not markup: its & is escaped again.
    expect(out.endsWith('&amp;amp;')).toBe(true);
    const attr = `<a title="${out}" data-x='${out}'>${out}</a>`;
    expect(attr.match(/<[a-z]/gi)).toEqual(['<a']);
    expect(attr.match(/"/g)).toHaveLength(2);
    expect(attr.match(/'/g)).toHaveLength(2);
  });

  it('its source is self-contained JS (the shop inlines it into its page script)', () => {
    const inlined = new Function(`var esc=${escapeHtml.toString()};return esc;`)() as (v: unknown) => string;
    for (const s of [HOSTILE, `a&b<c>d"e'f`, 'x']) expect(inlined(s)).toBe(escapeHtml(s));
  });
});
