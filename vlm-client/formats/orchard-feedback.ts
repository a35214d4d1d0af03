// What the model reads after each Orchard-GUI step: the feedback web_env.py gives (each call's outcome, navigations,
// new tabs, a click that changed neither, a scroll that moved nothing, a field whose value is not what was typed) and
// the observation laid out as the Orchard-GUI adapter does.
import type { Observation, ResolvedAction } from '../../protocol/observation.ts';
import { toolName } from './orchard-print.ts';

/**
 * The notes web_env.py (MSR-Orchard/slime examples/orchard_gui/env/web_env.py, `_execute_scroll`, `_execute_write`)
 * adds to a successful call: a page scroll (no point given) whose position did not change — the boundary; a `write`
 * whose field holds a non-empty value other than the typed text — reformatted or autocompleted. Each starts with a
 * space, to follow the call's `Succeed: …` text. Our wording of its facts.
 */
export function orchardNotes(r: ResolvedAction): string {
  const a = r.action;
  if (r.error) return '';
  if (a.action === 'scroll' && a.x === undefined && r.scrolled && Math.abs(r.scrolled.dx) < 1 && Math.abs(r.scrolled.dy) < 1) {
    return ' Note: the page did not scroll — it may be at its boundary in that direction.';
  }
  if ((a.action === 'type' || a.action === 'type_label') && r.field_value && r.field_value !== a.text) {
    return ` Note: the field now holds "${r.field_value}", not the typed text: the page may have reformatted or autocompleted it.`;
  }
  return '';
}

/**
 * The feedback web_env.py gives after a step, where it matters: each call's outcome (`Succeed: …` / `Failed: …`),
 * a navigation or a new tab, a click that changed neither, and the notes of `orchardNotes`.
 */
function feedback(obs: Observation, o: { parseError?: string; lastActions?: ResolvedAction[] }): string[] {
  const lines: string[] = [];
  if (o.parseError) lines.push(`Failed: your previous reply could not be executed: ${o.parseError}`);
  for (const r of o.lastActions ?? []) {
    const name = toolName(r.action);
    const at = r.raw ? ` at (${Math.round(r.raw.x)}, ${Math.round(r.raw.y)})` : '';
    lines.push(r.error ? `Failed: \`${name}\`${at} execution failed: ${r.error.message}` : `Succeed: \`${name}\`${at} executed.${orchardNotes(r)}`);
  }
  if (obs.last_action_error && !o.lastActions?.some((r) => r.error)) lines.push(`Failed: ${obs.last_action_error.message} (${obs.last_action_error.code})`);
  let moved = false;
  for (const e of obs.events) {
    if (e.type === 'navigation') lines.push(`Page navigated to ${e.url}.`);
    else if (e.type === 'popup') lines.push(`New tab opened (tab ${e.tab_index}).`);
    else if (e.type === 'tab_closed') lines.push(`Tab ${e.tab_index} was closed.`);
    else if (e.type === 'dialog') lines.push(`A ${e.dialog_type} dialog said "${e.message}" and was ${e.handled}.`);
    else if (e.type === 'download') lines.push(`Downloaded ${e.filename}.`);
    if (e.type === 'navigation' || e.type === 'popup') moved = true;
  }
  const clicked = o.lastActions?.some((r) => !r.error && ['click', 'double_click', 'triple_click', 'right_click'].includes(r.action.action));
  if (clicked && !moved) lines.push('Note: no visible navigation or new tab detected.');
  return lines;
}

/** The observation as the Orchard-GUI adapter lays it out (screen size, current tab, the tab list), after the feedback. */
export function observationText(obs: Observation, o: { parseError?: string; lastActions?: ResolvedAction[] } = {}): string {
  const lines = feedback(obs, o);
  const active = obs.tabs.find((t) => t.active);
  const size = obs.screenshot ? `${obs.screenshot.width} x ${obs.screenshot.height}` : `${obs.viewport.width} x ${obs.viewport.height}`;
  lines.push('<observation>', `screen size: ${size}`);
  if (active) lines.push(`Current tab: ${active.index}`);
  lines.push('Available tabs:');
  for (const t of obs.tabs.length ? obs.tabs : [{ index: 0, url: obs.url, title: obs.title, active: true }]) {
    lines.push(`- Tab ${t.index}${t.active ? ' (active)' : ''}: ${t.url}${t.title ? ` - ${t.title.slice(0, 50)}` : ''}`);
  }
  lines.push(obs.screenshot?.base64 ? 'screenshot:' : '(no screenshot for this step)', '</observation>');
  return lines.join('\n');
}
