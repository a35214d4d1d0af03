// Orchard-GUI as published (MSR-Orchard/slime examples/orchard_gui): the tool list, the prompt's calls and
// web_env.py's semantics, through Grove's orchard format.
import { describe, expect, it } from 'vitest';
import { FORMATS, parseModelOutput } from '../../vlm-client/formats/index.ts';
import { CALLS, PROMPT_EXAMPLES, TOOL_SCHEMA } from './fixtures/orchard-calls.ts';

const orchard = FORMATS.orchard;
const tc = (name: string, args: object) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

/** A JSON schema without its descriptions (ours are our own words; the rest is the published fact). */
function schemaFacts(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(schemaFacts);
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'description').map(([k, x]) => [k, schemaFacts(x)]));
}

describe('orchard tools', () => {
  it('has the published tool names and argument schemas', () => {
    const tools = orchard.tools!();
    expect(tools.map((t) => t.function.name)).toEqual(Object.keys(TOOL_SCHEMA));
    for (const t of tools) {
      const facts = TOOL_SCHEMA[t.function.name];
      expect(schemaFacts(t.function.parameters), t.function.name).toEqual({ type: 'object', ...(facts.required ? { required: facts.required } : {}), properties: facts.properties });
    }
  });

  it('the system prompt teaches <think> then <tool_call> blocks and lists the tools', () => {
    const p = orchard.systemPrompt();
    expect(p).toMatch(/<think><\/think>/);
    expect(p).toMatch(/<tool_call>\n\{"name": <function-name>, "arguments": <args-json-object>\}\n<\/tool_call>/);
    for (const name of Object.keys(TOOL_SCHEMA)) expect(p).toContain(`"name":"${name}"`);
    expect(p).toMatch(/click → write → press_keys Enter, or new_tab → goto_url/);
    expect(orchard.systemPrompt({ native_tools: true })).not.toContain('<tools>');
  });

  it('defaults to the published environment: 1280x1000, PNG, rel1000', () => {
    expect(orchard.sandbox).toEqual({ viewport: { width: 1280, height: 1000 }, screenshot_format: 'png', coordinate_space: 'rel1000' });
  });
});

describe('orchard parsing', () => {
  it('parses every example call of the published prompt', () => {
    expect(parseModelOutput('orchard', PROMPT_EXAMPLES.click)).toEqual({ ok: true, actions: [{ action: 'click', x: 379, y: 69, space: 'rel1000' }] });
    expect(parseModelOutput('orchard', PROMPT_EXAMPLES.clickWriteEnter)).toEqual({
      ok: true,
      thought: 'The search field is at the top; I will search for the product.',
      actions: [
        { action: 'click', x: 379, y: 69, space: 'rel1000' },
        { action: 'type', text: 'wireless mouse', clear: true },
        { action: 'key', keys: 'Enter' },
      ],
    });
    expect(parseModelOutput('orchard', PROMPT_EXAMPLES.newTabGoto)).toMatchObject({ ok: true, actions: [{ action: 'new_tab' }, { action: 'goto', url: 'URL' }] });
  });

  it('parses each of the realistic calls (every tool)', () => {
    const names = new Set<string>();
    for (const c of CALLS) {
      const r = parseModelOutput('orchard', `<think>next step</think>\n${tc(c.name, c.args)}`);
      expect(r.ok, `${c.name} ${JSON.stringify(c.args)}: ${!r.ok ? r.error : ''}`).toBe(true);
      names.add(c.name);
    }
    expect([...names].sort()).toEqual(Object.keys(TOOL_SCHEMA).sort());
  });

  it('maps arguments as web_env.py executes them', () => {
    const one = (name: string, args: object) => {
      const r = parseModelOutput('orchard', tc(name, args));
      if (!r.ok) throw new Error(r.error);
      return r.actions;
    };
    expect(one('click', { point_2d: [10, 20], clicks: 3 })).toEqual([{ action: 'triple_click', x: 10, y: 20, space: 'rel1000' }]);
    expect(one('click', { point_2d: [10, 20], button: 'middle' })).toEqual([{ action: 'click', x: 10, y: 20, space: 'rel1000', button: 'middle' }]);
    // Hotkey: all keys together, `presses` times; sequential: each key `presses` times in turn.
    expect(one('press_keys', { keys: ['ctrl', 'c'], is_hotkey: true, presses: 2 })).toEqual([{ action: 'key', keys: ['Control+c', 'Control+c'] }]);
    expect(one('press_keys', { keys: ['Tab', 'Enter'], presses: 2 })).toEqual([{ action: 'key', keys: ['Tab', 'Tab', 'Enter', 'Enter'] }]);
    // Unknown key names are dropped (validate_and_correct_key), a lone string is a list of one.
    expect(one('press_keys', { keys: ['Hyper', 'return', 'pgdn'] })).toEqual([{ action: 'key', keys: ['Enter', 'PageDown'] }]);
    expect(one('press_keys', { keys: 'Escape' })).toEqual([{ action: 'key', keys: 'Escape' }]);
    // Scroll amount is a viewport fraction, clamped to 0..1, default down by half a screen.
    expect(one('scroll', {})).toEqual([{ action: 'scroll', direction: 'down', amount: 0.5, unit: 'viewport' }]);
    expect(one('scroll', { direction: 'up', amount: 3 })).toEqual([{ action: 'scroll', direction: 'up', amount: 1, unit: 'viewport' }]);
    expect(one('wait', {})).toEqual([{ action: 'wait', ms: 3000 }]);
    expect(one('done', { response: '' })).toEqual([{ action: 'terminate', status: 'success' }]);
    // "parameters" for "arguments", as the published regex fallback reads.
    expect(parseModelOutput('orchard', '<tool_call>{"name": "go_back", "parameters": {}}</tool_call>')).toEqual({ ok: true, actions: [{ action: 'back' }] });
  });

  it('never reads a call out of the reasoning, and the untagged list is found past brackets in the thought', () => {
    const think = `<think>Earlier I wrote ${tc('click', { point_2d: [1, 1] })} by mistake; the [Search] button is at [500, 40].</think>\n${tc('click', { point_2d: [500, 40] })}`;
    expect(parseModelOutput('orchard', think)).toMatchObject({ ok: true, actions: [{ action: 'click', x: 500, y: 40 }] });
    const untagged = 'The [Search] button (see [1] above) is next.\n[{"name": "click", "arguments": {"point_2d": [500, 40]}}, {"name": "write", "arguments": {"message": "x"}}]';
    const r = parseModelOutput('orchard', untagged);
    expect(r).toEqual({
      ok: true,
      thought: 'The [Search] button (see [1] above) is next.',
      actions: [{ action: 'click', x: 500, y: 40, space: 'rel1000' }, { action: 'type', text: 'x', clear: true }],
    });
    expect(parseModelOutput('orchard', 'I think [1] and {2} are links.\n{"name": "go_back", "arguments": {}}')).toMatchObject({ ok: true, actions: [{ action: 'back' }] });
  });
});

describe('orchard printing', () => {
  it('prints what the published prompt teaches, and it parses back', () => {
    const printed = orchard.print(
      [{ action: 'click', x: 379, y: 69, space: 'rel1000' }, { action: 'type', text: 'wireless mouse', clear: true }, { action: 'key', keys: 'Enter' }],
      { thought: 'Search for it.' },
    );
    expect(printed).toBe(
      '<think>\nSearch for it.\n</think>\n' +
        '<tool_call>\n{"name":"click","arguments":{"point_2d":[379,69]}}\n</tool_call>\n' +
        '<tool_call>\n{"name":"write","arguments":{"message":"wireless mouse"}}\n</tool_call>\n' +
        '<tool_call>\n{"name":"press_keys","arguments":{"keys":["Enter"]}}\n</tool_call>',
    );
    expect(parseModelOutput('orchard', printed)).toMatchObject({ ok: true, thought: 'Search for it.' });
    // Actions other formats produce are written with Orchard's tools.
    expect(orchard.print([{ action: 'reload' }, { action: 'forward' }])).toBe(
      '<tool_call>\n{"name":"press_keys","arguments":{"keys":["F5"]}}\n</tool_call>\n<tool_call>\n{"name":"press_keys","arguments":{"keys":["Alt","ArrowRight"],"is_hotkey":true}}\n</tool_call>',
    );
    expect(orchard.print([{ action: 'scroll', direction: 'down', amount: 5 }])).toContain('{"direction":"down","amount":0.5}');
  });
});

describe('orchard observation text', () => {
  it('lays out screen size and tabs as the Orchard-GUI adapter does, after the environment feedback', () => {
    const text = orchard.observationText!(
      {
        step: 2,
        url: 'https://shop.test/cart',
        title: 'Cart',
        tabs: [
          { index: 0, url: 'https://shop.test/', title: 'Shop', active: false },
          { index: 1, url: 'https://shop.test/cart', title: 'Cart', active: true },
        ],
        viewport: { width: 1280, height: 1000 },
        screenshot: { mime: 'image/png', width: 1280, height: 1000, base64: 'AA==', scale: 1, scale_x: 1, scale_y: 1 },
        last_action_error: { code: 'no_such_tab', message: 'There is no tab 5.' },
        events: [{ type: 'popup', url: 'https://shop.test/cart', tab_index: 1, switched: true }],
        timings: { action: 0, settle: 0, capture: 0, encode: 0, total: 0 },
      },
      { parseError: undefined },
    );
    expect(text).toBe(
      [
        'Failed: There is no tab 5. (no_such_tab)',
        'New tab opened (tab 1).',
        '<observation>',
        'screen size: 1280 x 1000',
        'Current tab: 1',
        'Available tabs:',
        '- Tab 0: https://shop.test/ - Shop',
        '- Tab 1 (active): https://shop.test/cart - Cart',
        'screenshot:',
        '</observation>',
      ].join('\n'),
    );
  });
});

describe('orchard feedback', () => {
  it('reports each call of the last step as web_env.py does, and a click that changed nothing', () => {
    const base = {
      step: 3,
      url: 'https://shop.test/',
      title: 'Shop',
      tabs: [{ index: 0, url: 'https://shop.test/', title: 'Shop', active: true }],
      viewport: { width: 1280, height: 1000 },
      events: [],
      timings: { action: 0, settle: 0, capture: 0, encode: 0, total: 0 },
    };
    const text = orchard.observationText!(
      { ...base, last_action_error: { code: 'no_such_tab', message: 'There is no tab 4.' } },
      {
        lastActions: [
          { action: { action: 'click', x: 379, y: 69, space: 'rel1000' }, space: 'rel1000', raw: { x: 379, y: 69 }, css: { x: 485.12, y: 69 }, error: null, ms: 5 },
          { action: { action: 'type', text: 'mouse', clear: true }, error: null, ms: 5 },
          { action: { action: 'switch_tab', index: 4 }, error: { code: 'no_such_tab', message: 'There is no tab 4.' }, ms: 1 },
        ],
      },
    );
    expect(text.split('\n').slice(0, 4)).toEqual([
      'Succeed: `click` at (379, 69) executed.',
      'Succeed: `write` executed.',
      'Failed: `switch_tab` execution failed: There is no tab 4.',
      'Note: no visible navigation or new tab detected.',
    ]);
    const nav = orchard.observationText!(
      { ...base, last_action_error: null, events: [{ type: 'navigation', url: 'https://shop.test/cart' }] },
      { lastActions: [{ action: { action: 'click', x: 1, y: 2, space: 'rel1000' }, raw: { x: 1, y: 2 }, error: null, ms: 1 }] },
    );
    expect(nav.split('\n').slice(0, 3)).toEqual(['Succeed: `click` at (1, 2) executed.', 'Page navigated to https://shop.test/cart.', '<observation>']);
  });
});

describe('grove run with --format orchard', () => {
  it('creates every sandbox with the format environment, under what the offline sites need', async () => {
    const { sandboxFor } = await import('../../cli/commands/run-exec.ts');
    const task = { id: 't', suite: 'offline', question: 'q', extra: {}, flags: [] } as never;
    expect(sandboxFor('orchard', undefined)!(task)).toEqual({ viewport: { width: 1280, height: 1000 }, screenshot_format: 'png', coordinate_space: 'rel1000' });
    expect(sandboxFor('orchard', '127.0.0.1:5')!(task)).toMatchObject({ screenshot_format: 'png', som: true, network: { allow: ['127.0.0.1:5'] } });
    expect(sandboxFor('qwen3vl', undefined)).toBeUndefined();
  });
});
