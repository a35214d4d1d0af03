// The PATCH bodies the API server accepts for a pod: JSON merge patch (RFC 7386; the strategic-merge patch of the
// metadata fields the client sends behaves the same) and JSON patch (RFC 6902). Any other content type is a 415.

export const PATCH_TYPES = new Set(['application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/json-patch+json']);

/** Applies `patch` of content type `type` to `doc` (not modified); throws on a JSON patch that does not apply. */
export function applyPatch(type: string, doc: any, patch: any): any {
  return type === 'application/json-patch+json' ? jsonPatch(doc, patch) : mergePatch(doc, patch);
}

function mergePatch(target: any, patch: any): any {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out = target && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function jsonPatch(doc: any, ops: any[]): any {
  const out = structuredClone(doc);
  for (const op of ops) {
    const parts = String(op.path).split('/').slice(1).map((p: string) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = parts.pop()!;
    let parent = out;
    for (const p of parts) parent = parent?.[p];
    if (parent === undefined) throw new Error(`path ${op.path} does not exist`);
    if (op.op === 'add' && Array.isArray(parent) && last === '-') parent.push(op.value);
    else if (op.op === 'add' || op.op === 'replace') parent[last] = op.value;
    else if (op.op === 'remove') delete parent[last];
    else if (op.op === 'test') {
      if (JSON.stringify(parent[last]) !== JSON.stringify(op.value)) throw new Error(`test failed at ${op.path}`);
    } else throw new Error(`unsupported op ${op.op}`);
  }
  return out;
}
