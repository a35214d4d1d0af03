// report.html: a self-contained page (inline CSS and SVG, no scripts from anywhere) for one run.
import { escapeHtml } from '../protocol/html.ts';
import type { RunSummary } from './types.ts';
import { classifyRow } from './summary.ts';

const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));

interface Bar {
  label: string;
  value: number;
  /** Text drawn after the bar (defaults to the value). */
  note?: string;
  color?: string;
}

/** Horizontal bars, one per row; `max` fixes the scale (e.g. 1 for rates). */
function hbarChart(title: string, bars: Bar[], opts: { max?: number } = {}): string {
  const rowH = 22;
  // Room for the longest label and note (12 px system-ui: < 7.5 px a character), so none is clipped.
  const labelW = Math.max(80, Math.ceil(Math.max(0, ...bars.map((b) => b.label.length)) * 7.5) + 12);
  const noteW = Math.max(60, Math.ceil(Math.max(0, ...bars.map((b) => (b.note ?? fmt(b.value)).length)) * 7.5) + 12);
  const barW = 320;
  const h = bars.length * rowH + 30;
  const max = opts.max ?? Math.max(1, ...bars.map((b) => b.value));
  const rows = bars
    .map((b, i) => {
      const y = 24 + i * rowH;
      const w = max > 0 ? Math.max(0, (b.value / max) * barW) : 0;
      return (
        `<text x="${labelW - 6}" y="${y + 14}" text-anchor="end">${escapeHtml(b.label)}</text>` +
        `<rect x="${labelW}" y="${y + 2}" width="${w.toFixed(1)}" height="${rowH - 6}" fill="${b.color ?? '#4a7bd0'}"/>` +
        `<text x="${labelW + w + 6}" y="${y + 14}">${escapeHtml(b.note ?? fmt(b.value))}</text>`
      );
    })
    .join('');
  const body = bars.length ? rows : `<text x="10" y="40">no data</text>`;
  return (
    `<svg class="chart" role="img" aria-label="${escapeHtml(title)}" xmlns="http://www.w3.org/2000/svg" width="${labelW + barW + noteW}" height="${Math.max(h, 50)}">` +
    `<text x="4" y="14" class="t">${escapeHtml(title)}</text>${body}</svg>`
  );
}

/** Vertical histogram of counts with labelled buckets. */
function histogramChart(title: string, buckets: { label: string; count: number }[]): string {
  const w = 560;
  const h = 180;
  const left = 30;
  const bottom = h - 30;
  const max = Math.max(1, ...buckets.map((b) => b.count));
  const bw = buckets.length ? (w - left - 10) / buckets.length : 0;
  const bars = buckets
    .map((b, i) => {
      const bh = (b.count / max) * (bottom - 30);
      const x = left + i * bw;
      return (
        `<rect x="${(x + 1).toFixed(1)}" y="${(bottom - bh).toFixed(1)}" width="${Math.max(1, bw - 2).toFixed(1)}" height="${bh.toFixed(1)}" fill="#5a9e6f"><title>${escapeHtml(b.label)}: ${b.count}</title></rect>` +
        (b.count > 0 ? `<text x="${(x + bw / 2).toFixed(1)}" y="${(bottom - bh - 3).toFixed(1)}" text-anchor="middle" class="s">${b.count}</text>` : '') +
        `<text x="${(x + bw / 2).toFixed(1)}" y="${bottom + 14}" text-anchor="middle" class="s">${escapeHtml(b.label)}</text>`
      );
    })
    .join('');
  return (
    `<svg class="chart" role="img" aria-label="${escapeHtml(title)}" xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">` +
    `<text x="4" y="14" class="t">${escapeHtml(title)}</text>` +
    `<line x1="${left}" y1="${bottom}" x2="${w - 10}" y2="${bottom}" stroke="#999"/>${buckets.length ? bars : '<text x="10" y="40">no data</text>'}</svg>`
  );
}

/** Buckets of latencies (ms) on a readable log-ish scale. */
export function latencyBuckets(ms: number[]): { label: string; count: number }[] {
  const edges = [50, 100, 200, 500, 1000, 2000, 5000, 10_000];
  const labels = ['<50', '50-100', '100-200', '200-500', '0.5-1s', '1-2s', '2-5s', '5-10s', '>10s'];
  const counts = new Array(labels.length).fill(0) as number[];
  for (const v of ms) {
    let i = edges.findIndex((e) => v < e);
    if (i === -1) i = edges.length;
    counts[i]++;
  }
  return labels.map((label, i) => ({ label, count: counts[i] }));
}

const REASON_COLORS: Record<string, string> = {
  task_completed: '#5a9e6f',
  agent_gave_up: '#b07050',
  max_steps_exhausted: '#d0a04a',
  consecutive_parse_failures: '#c0604a',
  generation_error: '#a04ac0',
  timeout: '#d07a4a',
  env_error: '#888',
  website_error: '#aaa',
  aborted: '#666',
};

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const excerpt = (t: string, n: number) => {
  const one = t.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
};

const RESULT_LABEL: Record<ReturnType<typeof classifyRow>, string> = {
  succeeded: '✔',
  failed: '✘',
  unparsed: 'no verdict',
  judge_error: 'judge error',
  aborted: 'aborted',
  infra: 'env',
};

export function renderReport(s: RunSummary): string {
  const siteBars = Object.entries(s.by_site).map(([k, r]) => ({ label: k, value: r.success_rate, note: `${pct(r.success_rate)} (${r.succeeded}/${r.total})` }));
  const levelBars = Object.entries(s.by_level).map(([k, r]) => ({ label: k, value: r.success_rate, note: `${pct(r.success_rate)} (${r.succeeded}/${r.total})` }));
  const reasonBars = Object.entries(s.termination_reasons).map(([k, v]) => ({ label: k, value: v, color: REASON_COLORS[k] }));
  const stepBuckets = Object.entries(s.steps.histogram).map(([label, count]) => ({ label, count }));
  const lat = latencyBuckets(s.episodes.flatMap((e) => e.step_ms));

  const rows = s.episodes
    .map((e) => {
      const cls = classifyRow(e);
      // The judge's reasoning, cut to an excerpt: why the episode failed (or why the judge could not tell).
      const verdicts = e.verdicts
        .map((v) => `${escapeHtml(v.judge)}: ${escapeHtml(v.outcome)}${v.reasoning && cls !== 'succeeded' ? `<div class="s why">${escapeHtml(excerpt(v.reasoning, 300))}</div>` : ''}`)
        .join('<br>');
      const href = `${e.dir.split('/').map(encodeURIComponent).join('/')}/`;
      // Opened through `grove view <run dir>` (which serves this report at /report.html), "view" opens the episode
      // page of the viewer; from disk, the task link opens the folder.
      const view = `./#/episode?${new URLSearchParams({ id: e.dir }).toString()}`;
      const counts = [e.parse_failures ? `${e.parse_failures} parse error${e.parse_failures > 1 ? 's' : ''}` : '', e.noops ? `${e.noops} no-op${e.noops > 1 ? 's' : ''}` : ''].filter(Boolean).join(', ');
      return (
        `<tr class="${cls}"><td><a href="${escapeHtml(href)}">${escapeHtml(e.task_id)}</a>` +
        ` <a class="s" href="${escapeHtml(href)}episode.json">json</a> <a class="s view" href="${escapeHtml(view)}">view</a></td>` +
        `<td>${escapeHtml(e.site)}</td><td>${escapeHtml(e.level ?? '')}</td>` +
        `<td>${RESULT_LABEL[cls]}</td>` +
        `<td>${escapeHtml(e.termination.reason)}${e.termination.detail ? `<div class="s">${escapeHtml(e.termination.detail.slice(0, 300))}</div>` : ''}</td>` +
        `<td>${e.steps}${counts ? `<div class="s">${counts}</div>` : ''}</td><td>${e.attempts}</td><td>${(e.duration_ms / 1000).toFixed(1)} s</td>` +
        `<td>${e.mean_step_ms !== undefined ? `${e.mean_step_ms.toFixed(0)} ms` : ''}</td>` +
        `<td class="ans">${escapeHtml((e.answer ?? '').slice(0, 200))}</td><td>${verdicts}</td></tr>`
      );
    })
    .join('\n');

  const facts: [string, string][] = [
    ['suite', s.suite],
    ['model', s.model ?? ''],
    ['policy', s.policy ?? ''],
    ['judge', s.judge ?? ''],
    ['started', s.started_at],
    ['duration', `${(s.duration_ms / 1000).toFixed(1)} s`],
    ['tasks', String(s.total)],
    ['succeeded', `${s.succeeded} (${pct(s.success_rate)}; strict ${pct(s.success_rate_all)})`],
    ['failed', String(s.failed)],
    ['judge errors', String(s.judge_errors)],
    ['no verdict (unparsed)', String(s.unparsed)],
    ['env/website failures', String(s.infra_failures)],
    ['aborted', String(s.aborted)],
    ['env retries', String(s.env_retries)],
    ['parse errors', `${sum(s.episodes.map((e) => e.parse_failures ?? 0))} steps in ${s.episodes.filter((e) => (e.parse_failures ?? 0) > 0).length} episodes`],
    ['no-op steps', `${sum(s.episodes.map((e) => e.noops ?? 0))} steps in ${s.episodes.filter((e) => (e.noops ?? 0) > 0).length} episodes (no visible change)`],
    ['tokens', `${s.tokens.prompt} prompt / ${s.tokens.completion} completion`],
  ];
  if (s.cost_usd !== undefined) facts.push(['cost', `$${s.cost_usd.toFixed(4)}`]);
  if (s.stopped_early) facts.push(['stopped early', s.stopped_early]);
  if (s.not_started) facts.push(['not started', String(s.not_started)]);

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Grove run ${escapeHtml(s.run_id)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
tr.succeeded td:nth-child(4){color:#2b7a3d}tr.failed td:nth-child(4){color:#b0302a}tr.infra{color:#777}tr.judge_error{background:#fff6dc}
.facts td:first-child{color:#666}.charts{display:flex;flex-wrap:wrap;gap:24px}
svg.chart{font:12px system-ui,sans-serif;background:#fafafa;border:1px solid #eee}svg .t{font-weight:600}svg .s,.s{font-size:11px;color:#666}
td.ans{max-width:280px;overflow-wrap:anywhere}
</style></head><body>
<h1>Grove run <code>${escapeHtml(s.run_id)}</code></h1>
<table class="facts">${facts.filter(([, v]) => v !== '').map(([k, v]) => `<tr><td>${escapeHtml(k)}</td><td>${escapeHtml(v)}</td></tr>`).join('')}</table>
<h2>Charts</h2>
<div class="charts">
${hbarChart('Success rate by site', siteBars, { max: 1 })}
${levelBars.length ? hbarChart('Success rate by level', levelBars, { max: 1 }) : ''}
${hbarChart('Termination reasons', reasonBars)}
${histogramChart('Steps per episode', stepBuckets)}
${histogramChart(`Env step latency (p50 ${s.step_latency_ms.p50.toFixed(0)} ms, p90 ${s.step_latency_ms.p90.toFixed(0)} ms)`, lat)}
</div>
<h2>Episodes</h2>
<p class="s">Open this report through <code>grove view &lt;run dir&gt;</code> (at <code>/report.html</code>) for the "view" links to open each episode in the viewer.</p>
<table class="episodes"><thead><tr><th>task</th><th>site</th><th>level</th><th>result</th><th>termination (why)</th><th>steps</th><th>attempts</th><th>time</th><th>step latency</th><th>answer</th><th>verdicts</th></tr></thead>
<tbody>
${rows}
</tbody></table>
</body></html>
`;
}
