// Orchard-GUI tool responses and the env message's DOM-change line, each expected value written from what
// MSR-Orchard/slime examples/orchard_gui/env/web_env.py reports for the same call on the same page (its fixed forms;
// the notes in our words with the same facts).
import { describe, expect, it } from 'vitest';
import type { ResolvedAction, SomElement, Tab } from '../../protocol/observation.ts';
import { domChanges, elementAt, invalidCall, py0f, pyFloat, pyStrList, refuse, toolResponse, unknownTool, type CallFacts, type PageFacts } from '../../server/orchard-gui/feedback.ts';

const U = 'http://127.0.0.1:9000/a';
const tab = (index: number, url: string, active: boolean): Tab => ({ index, url, title: '', active });
const som: SomElement[] = [
  { label: 0, tag: 'a', role: 'link', text: 'Next page', x: 0, y: 0, width: 100, height: 20 },
  { label: 1, tag: 'input', role: 'checkbox', type: 'checkbox', checked: false, text: 'Remember me', x: 0, y: 30, width: 20, height: 20 },
  { label: 2, tag: 'button', role: 'tab', text: 'A very long button label that goes on and on', x: 0, y: 60, width: 300, height: 30 },
  { label: 3, tag: 'div', role: 'button', text: 'outer', x: 0, y: 100, width: 400, height: 100 },
  { label: 4, tag: 'span', role: 'button', text: 'inner', x: 10, y: 110, width: 50, height: 20 },
];
const page = (o: Partial<PageFacts> = {}): PageFacts => ({ url: U, tabs: [tab(0, U, true)], som, focused: null, ...o });
const ok: ResolvedAction = { action: { action: 'wait', ms: 0 }, error: null, ms: 1 };
const facts = (name: string, args: Record<string, unknown>, o: Partial<CallFacts> = {}): CallFacts => ({
  name, args, css: {}, before: page(), after: page(), resolved: [ok], ...o,
});

describe('Python formatting web_env prints with', () => {
  it(':.0f rounds half to even; a float repr keeps .0; a str list is repr()', () => {
    expect([py0f(320.5), py0f(321.5), py0f(10.4), py0f(10.6), py0f(0)]).toEqual(['320', '322', '10', '11', '0']);
    expect([pyFloat(640), pyFloat(333.3333333333333)]).toEqual(['640.0', '333.3333333333333']);
    expect(pyStrList(['Control', 'a'])).toBe("['Control', 'a']");
    expect(pyStrList(["it's", 'x\\y'])).toBe(`["it's", 'x\\\\y']`);
  });
});

describe('tool responses', () => {
  it('click names the element under the point (innermost; explicit roles only; checked state; 30 characters)', () => {
    expect(elementAt(som, 50, 10)).toBe('<a> "Next page"');
    expect(elementAt(som, 5, 35)).toBe('<input> type=checkbox unchecked "Remember me"');
    expect(elementAt(som, 100, 70)).toBe('<button> role=tab "A very long button label that ..."');
    expect(elementAt(som, 20, 115)).toBe('<span> role=button "inner"');
    expect(elementAt(som, 600, 600)).toBe('');
    const click = facts('click', { point_2d: [500, 500] }, { css: { point_2d: [50.5, 10] } });
    expect(toolResponse(click)).toBe('Succeed: `click` on <a> "Next page" at (50, 10) executed. Note: the click changed neither the URL nor the tabs.');
    const nav = { ...click, after: page({ url: `${U}-next` }) };
    expect(toolResponse(nav)).toBe(`Succeed: \`click\` on <a> "Next page" at (50, 10) executed. Page navigated to ${U}-next.`);
    const popup = { ...click, after: page({ url: 'http://b/', tabs: [tab(0, U, false), tab(1, 'http://b/', true)] }) };
    expect(toolResponse(popup)).toBe('Succeed: `click` on <a> "Next page" at (50, 10) executed. Page navigated to http://b/. New tab opened (tab 1).');
    expect(toolResponse({ ...click, css: { point_2d: [600, 600] } })).toBe('Succeed: `click` at (600, 600) executed. Note: the click changed neither the URL nor the tabs.');
    const failed = { ...click, resolved: [{ ...ok, error: { code: 'action_failed' as const, message: 'boom' } }] };
    expect(toolResponse(failed)).toBe('Failed: `click` at (50, 10) execution failed: boom');
  });

  it('hover names the element; write the text and the focused field; press_keys the keys; wait the seconds', () => {
    expect(toolResponse(facts('hover', { point_2d: [1, 1] }, { css: { point_2d: [5, 35] } }))).toBe('Succeed: `hover` on <input> type=checkbox unchecked "Remember me" at (5, 35) executed.');
    const field = { tag: 'input', type: 'search', label: 'Search recipes', value: 'pasta' };
    expect(toolResponse(facts('write', { message: 'pasta' }, { after: page({ focused: field }) }))).toBe('Succeed: `write` typed "pasta" into <input> type=search "Search recipes".');
    const reformatted = facts('write', { message: 'pasta' }, {
      after: page({ focused: field, url: `${U}?q=pasta` }),
      resolved: [{ action: { action: 'type', text: 'pasta', clear: true }, field_value: 'Pasta', error: null, ms: 1 }],
    });
    expect(toolResponse(reformatted)).toMatch(/^Succeed: `write` typed "pasta" into <input> type=search "Search recipes"\. Page navigated to http:\/\/127\.0\.0\.1:9000\/a\?q=pasta\. Note: the field now holds "Pasta", not the typed text/);
    expect(toolResponse(facts('write', { message: 'x' }))).toBe('Succeed: `write` typed "x".');
    expect(toolResponse(facts('press_keys', { keys: ['ctrl', 'a', 'nonsense'] }))).toBe("Succeed: `press_keys` ['Control', 'a'] executed.");
    expect(toolResponse(facts('press_keys', { keys: 'enter' }, { after: page({ url: 'http://b/' }) }))).toBe("Succeed: `press_keys` ['Enter'] executed. Page navigated to http://b/.");
    expect(toolResponse(facts('wait', { seconds: 2 }))).toBe('Succeed: waited 2 seconds.');
    expect(toolResponse(facts('wait', {}))).toBe('Succeed: waited 3 seconds.');
  });

  it('scroll says direction and share, the point as floats; a page scroll that moved nothing is noted', () => {
    const moved: ResolvedAction = { action: { action: 'scroll', direction: 'down', amount: 0.5, unit: 'viewport' }, scrolled: { dx: 0, dy: 400 }, error: null, ms: 1 };
    const stuck: ResolvedAction = { ...moved, scrolled: { dx: 0, dy: 0 } };
    expect(toolResponse(facts('scroll', { direction: 'down', amount: 0.5 }, { resolved: [moved] }))).toBe('Succeed: `scroll` down by 50% executed.');
    expect(toolResponse(facts('scroll', {}, { resolved: [moved] }))).toBe('Succeed: `scroll` down by 50% executed.');
    expect(toolResponse(facts('scroll', { direction: 'up', amount: 2 }, { resolved: [stuck] }))).toMatch(/^Succeed: `scroll` up by 100% executed\. Note: the page did not scroll/);
    const at: ResolvedAction = { ...stuck, action: { ...stuck.action, x: 500, y: 500, space: 'rel1000' } as ResolvedAction['action'] };
    expect(toolResponse(facts('scroll', { direction: 'down', amount: 0.25, point_2d: [500, 500] }, { css: { point_2d: [640, 333.3333333333333] }, resolved: [at] }))).toBe(
      'Succeed: `scroll` down by 25% at (640.0, 333.3333333333333) executed.',
    );
  });

  it('tab tools report tab indices; out of range and the last tab are refused as web_env refuses them', () => {
    const two = [tab(0, U, false), tab(1, 'about:blank', true)];
    expect(toolResponse(facts('new_tab', {}, { after: page({ url: 'about:blank', tabs: two }) }))).toBe('Succeed: `new_tab` opened blank tab (tab 1).');
    const back = [tab(0, U, true), tab(1, 'about:blank', false)];
    expect(toolResponse(facts('switch_tab', { tab_index: 0 }, { before: page({ tabs: two }), after: page({ tabs: back }) }))).toBe(`Succeed: \`switch_tab\` switched to tab 0 (${U}).`);
    expect(toolResponse(facts('close_tab', {}, { before: page({ tabs: two }), after: page() }))).toBe('Succeed: `close_tab` closed tab 1, now on tab 0.');
    expect(refuse('switch_tab', { tab_index: 5 }, page({ tabs: two }))).toBe('Failed: `switch_tab` tab_index 5 out of range (0-1).');
    expect(refuse('switch_tab', { tab_index: 1 }, page({ tabs: two }))).toBeNull();
    expect(refuse('close_tab', {}, page())).toMatch(/^Failed: `close_tab` cannot close the only tab/);
    expect(refuse('close_tab', {}, page({ tabs: two }))).toBeNull();
    expect(refuse('press_keys', { keys: ['nonsense', 'alsobad'] }, page())).toBe("Failed: no valid keys found in ['nonsense', 'alsobad'].");
  });

  it('done, goto_url, go_back and drag; an unknown tool; a call whose arguments do not parse', () => {
    expect(toolResponse(facts('done', { response: '42' }))).toBe('Succeed: task marked as done. Response: 42');
    expect(toolResponse(facts('goto_url', { url: 'http://x/' }))).toBe('Succeed: `goto_url` navigated to http://x/.');
    expect(toolResponse(facts('go_back', {}))).toBe('Succeed: `go_back` executed.');
    expect(toolResponse(facts('drag', {}))).toBe('Succeed: `drag` executed.');
    expect(unknownTool('fly')).toBe('Error: Action fly is not supported by the environment!');
    expect(invalidCall('click', '"point_2d" is missing.')).toBe('Failed: `click` "point_2d" is missing.');
  });
});

describe('the env message DOM-change line', () => {
  const el = (tag: string, text: string, type?: string): SomElement => ({ label: 0, tag, text, ...(type ? { type } : {}), x: 0, y: 0, width: 1, height: 1 });
  it('counts what appeared and disappeared (a multiset), shows five and says how many more', () => {
    expect(domChanges([el('a', 'x')], [el('a', 'x')])).toBe('');
    expect(domChanges([el('a', 'x'), el('a', 'x')], [el('a', 'x')])).toBe("DOM changes: 1 element(s) disappeared [<a> 'x'].");
    const added = Array.from({ length: 7 }, (_, i) => el('button', `b${i}`));
    expect(domChanges([el('input', '', 'text')], [el('input', '', 'text'), ...added, el('input', 'Remember me', 'checkbox')])).toBe(
      "DOM changes: 8 element(s) appeared [<button> 'b0', <button> 'b1', <button> 'b2', <button> 'b3', <button> 'b4'] and 3 more.",
    );
    expect(domChanges([el('a', 'Old link')], [el('input', 'Remember me', 'checkbox')])).toBe(
      "DOM changes: 1 element(s) appeared [<input> type=checkbox 'Remember me']; 1 element(s) disappeared [<a> 'Old link'].",
    );
    expect(domChanges([], [el('p', 'a label longer than thirty characters in all')])).toBe("DOM changes: 1 element(s) appeared [<p> 'a label longer than thirty cha'].");
  });
});
