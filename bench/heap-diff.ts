// Compares two V8 heap snapshots (`.heapsnapshot`, e.g. the ones `npm run soak -- --heap-snapshots DIR` takes at
// the start and the end of the soak's second half): what grew, by constructor, in count and bytes (self sizes).
//   node --import tsx bench/heap-diff.ts A.heapsnapshot B.heapsnapshot [--top 30]
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Count and self size per `type name` (strings, code and arrays by type only: their names are contents). */
function histogram(file: string): Map<string, { count: number; bytes: number }> {
  const s = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = s.snapshot.meta.node_fields;
  const types = s.snapshot.meta.node_types[0];
  const n = fields.length;
  const [iType, iName, iSize] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const out = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < s.nodes.length; i += n) {
    const type = types[s.nodes[i + iType]];
    const key = ['string', 'concatenated string', 'sliced string', 'code', 'number', 'hidden'].includes(type) ? `(${type})` : `${type} ${s.strings[s.nodes[i + iName]].slice(0, 80)}`;
    const row = out.get(key) ?? { count: 0, bytes: 0 };
    row.count++;
    row.bytes += s.nodes[i + iSize];
    out.set(key, row);
  }
  return out;
}

const [a, b] = process.argv.slice(2).filter((x) => !x.startsWith('--'));
const topIdx = process.argv.indexOf('--top');
const top = topIdx > 0 ? Number(process.argv[topIdx + 1]) : 30;
if (!a || !b) {
  console.error('usage: heap-diff A.heapsnapshot B.heapsnapshot [--top N]');
  process.exitCode = 2;
} else {
  const ha = histogram(a);
  const hb = histogram(b);
  const total = (h: Map<string, { bytes: number }>) => [...h.values()].reduce((x, r) => x + r.bytes, 0);
  const keys = new Set([...ha.keys(), ...hb.keys()]);
  const rows = [...keys].map((k) => {
    const x = ha.get(k) ?? { count: 0, bytes: 0 };
    const y = hb.get(k) ?? { count: 0, bytes: 0 };
    return { k, dCount: y.count - x.count, dBytes: y.bytes - x.bytes, count: y.count, bytes: y.bytes };
  });
  rows.sort((p, q) => q.dBytes - p.dBytes);
  console.log(`heap (self sizes): ${(total(ha) / 1e6).toFixed(1)} MB → ${(total(hb) / 1e6).toFixed(1)} MB`);
  console.log('  Δ bytes      Δ count    now count  constructor');
  for (const r of rows.slice(0, top)) {
    console.log(`  ${String(r.dBytes).padStart(10)}  ${String(r.dCount).padStart(9)}  ${String(r.count).padStart(10)}  ${r.k}`);
  }
}
