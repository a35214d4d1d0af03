// Where a redirect of the Claw origin may go (`/login?next=`, a form's `_back`): only a path of this origin.
// The value is parsed against the origin and its origin compared, and every spelling a browser would read as
// another host is refused first: `//host`, `/\host`, schemes, control characters, tabs and newlines (which URL
// parsers drop), backslashes, and percent-encoded forms of those (decoded a few times over).

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\\]/;

function decodedForms(v: string): string[] {
  const out = [v];
  let cur = v;
  for (let i = 0; i < 3; i++) {
    let next: string;
    try {
      next = decodeURIComponent(cur);
    } catch {
      return out;
    }
    if (next === cur) break;
    out.push(next);
    cur = next;
  }
  return out;
}

/** A path (with query and fragment) on `origin` to redirect to, or `fallback` when `raw` is not one. */
export function sameOriginPath(raw: string | null | undefined, origin: string, fallback = '/'): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 2000) return fallback;
  for (const form of decodedForms(raw)) {
    const t = form.trimStart();
    if (CONTROL.test(form) || !t.startsWith('/') || t.startsWith('//')) return fallback;
  }
  let u: URL;
  try {
    u = new URL(raw, origin);
  } catch {
    return fallback;
  }
  if (u.origin !== new URL(origin).origin) return fallback;
  // The serialised path is percent-encoded by the URL parser: nothing in it can split a header.
  return `${u.pathname}${u.search}${u.hash}`;
}
