// Kubernetes label selectors as the API server evaluates them (the `labelSelector` query parameter).

export type Selector = (labels: Record<string, string>) => boolean;

/** Equality-based and set-based label selectors (=, ==, !=, in, notin, exists, !exists). */
export function parseSelector(s: string | null): Selector {
  if (!s) return () => true;
  const reqs: Selector[] = [];
  for (const part of s.match(/([^,(]+(\([^)]*\))?)/g) ?? []) {
    const p = part.trim();
    let m: RegExpMatchArray | null;
    if ((m = p.match(/^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/))) {
      const [, k, op, v] = m;
      reqs.push(op === '!=' ? (l) => l[k!] !== v : (l) => l[k!] === v);
    } else if ((m = p.match(/^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/))) {
      const set = new Set(m[3]!.split(',').map((x) => x.trim()));
      const k = m[1]!;
      reqs.push(m[2] === 'in' ? (l) => set.has(l[k] as string) : (l) => !set.has(l[k] as string));
    } else if (p.startsWith('!')) reqs.push((l) => !(p.slice(1) in l));
    else reqs.push((l) => p in l);
  }
  return (l) => reqs.every((r) => r(l ?? {}));
}
