// HTML escaping, the one implementation: server-rendered pages (claw-env web UI, offline sites), the run report, the
// SVG text of the SoM overlay and of the GIF/video export, and the offline shop's client script (which inlines this
// function's source, so it stays plain, self-contained JS).

/** `v` as text safe inside HTML element content and quoted attribute values (& < > " ' escaped; null/undefined → ''). */
export function escapeHtml(v: unknown): string {
  return String(v ?? '').replace(/[&<>"']/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;'));
}
