// Every policy format on the wire, against the local test server: the request each sends (its system prompt, its
// tools when native, the screenshot) through the API its models use, and a reply shaped as those models write it,
// parsed back into canonical actions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Observation } from '../../protocol/observation.ts';
import type { Task } from '../../protocol/task.ts';
import { AnthropicClient } from '../../vlm-client/anthropic-client.ts';
import { ChatClient } from '../../vlm-client/client.ts';
import { FORMAT_NAMES, FORMATS, parseModelOutput } from '../../vlm-client/formats/index.ts';
import { VlmPolicy } from '../../vlm-client/policy.ts';
import { ResponsesClient } from '../../vlm-client/responses-client.ts';
import { startOpenAIServer, type OpenAITestServer, type ScriptedReply } from '../support/openai-server.ts';
import { PROMPT_EXAMPLES } from './fixtures/orchard-calls.ts';

const task: Task = { id: 't--1', suite: 'offline', site: 'shop', question: 'Open the cart.', extra: {}, flags: [] };
const SHOT = Buffer.from('frame').toString('base64');
const obs: Observation = {
  step: 1,
  url: 'https://shop.test/',
  title: 'Shop',
  tabs: [{ index: 0, url: 'https://shop.test/', title: 'Shop', active: true }],
  viewport: { width: 1280, height: 1000 },
  screenshot: { mime: 'image/png', width: 1280, height: 1000, base64: SHOT, scale: 1, scale_x: 1, scale_y: 1 },
  last_action_error: null,
  events: [],
  timings: { action: 0, settle: 0, capture: 0, encode: 0, total: 0 },
  som: [{ label: 3, tag: 'a', role: 'link', text: 'Cart', x: 1100, y: 20, width: 80, height: 30 }],
};

interface Case {
  format: string;
  api: 'chat' | 'anthropic' | 'responses';
  native?: boolean;
  reply: ScriptedReply;
  expected: unknown[];
}

const CASES: Case[] = [
  {
    format: 'qwen3vl',
    api: 'chat',
    reply: '<think>The cart link is top right.</think>\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [890, 35]}}\n</tool_call>',
    expected: [{ action: 'click', x: 890, y: 35, space: 'rel1000' }],
  },
  {
    format: 'orchard',
    api: 'chat',
    reply: PROMPT_EXAMPLES.clickWriteEnter,
    expected: [{ action: 'click', x: 379, y: 69, space: 'rel1000' }, { action: 'type', text: 'wireless mouse', clear: true }, { action: 'key', keys: 'Enter' }],
  },
  { format: 'uitars', api: 'chat', reply: "Thought: The cart link.\nAction: click(start_box='<|box_start|>(890,35)<|box_end|>')", expected: [{ action: 'click', x: 890, y: 35, space: 'rel1000' }] },
  // UI-TARS-1.5 sees 1280x1000 as 1288x1008 and answers in those pixels.
  { format: 'uitars15', api: 'chat', reply: "Thought: The cart link.\nAction: click(point='<point>1127 35</point>')", expected: [{ action: 'click', x: 1120.0, y: 34.72, space: 'image_px' }] },
  { format: 'webvoyager', api: 'chat', reply: 'Thought: The cart link is labelled 3.\nAction: Click [3]', expected: [{ action: 'click_label', label: 3 }] },
  {
    format: 'anthropic',
    api: 'chat',
    native: true,
    reply: { content: 'Opening the cart.', tool_calls: [{ name: 'computer', arguments: '{"action":"left_click","coordinate":[1140,35]}' }] },
    expected: [{ action: 'click', x: 1140, y: 35, space: 'image_px' }],
  },
  {
    format: 'anthropic',
    api: 'anthropic',
    native: true,
    reply: { content: 'Opening the cart.', tool_calls: [{ name: 'computer', arguments: '{"action":"left_click","coordinate":[1140,35]}' }] },
    expected: [{ action: 'click', x: 1140, y: 35, space: 'image_px' }],
  },
  {
    format: 'openai_cua',
    api: 'chat',
    native: true,
    reply: { content: null, tool_calls: [{ name: 'computer', arguments: '{"action":{"type":"click","button":"left","x":1140,"y":35}}' }] },
    expected: [{ action: 'click', x: 1140, y: 35, space: 'image_px' }],
  },
  {
    format: 'openai_cua',
    api: 'responses',
    native: true,
    reply: { content: null, tool_calls: [{ name: 'computer', arguments: '{"action":{"type":"click","button":"left","x":1140,"y":35}}' }] },
    expected: [{ action: 'click', x: 1140, y: 35, space: 'image_px' }],
  },
];

let server: OpenAITestServer;
const replies = new Map<string, ScriptedReply>();
beforeAll(async () => {
  server = await startOpenAIServer((r) => replies.get(r.body.model) ?? 'unscripted');
});
afterAll(() => server.close());

describe('formats on the wire', () => {
  it('covers every format', () => {
    expect(new Set(CASES.map((c) => c.format))).toEqual(new Set(FORMAT_NAMES));
  });

  it.each(CASES.map((c) => [`${c.format} over ${c.api}`, c] as const))('%s', async (label, c) => {
    replies.set(label, c.reply);
    const opts = { baseURL: server.url, model: label, apiKey: 'key', maxRetries: 0 };
    const client = c.api === 'anthropic' ? new AnthropicClient(opts) : c.api === 'responses' ? new ResponsesClient(opts) : new ChatClient(opts);
    const policy = new VlmPolicy({ client, format: c.format, nativeTools: c.native });
    await policy.start(task);
    const d = await policy.next(obs, { task, step: 1 });
    const req = server.requests.find((r) => r.body.model === label)!;
    expect(req.api).toBe(c.api);
    const f = FORMATS[c.format];
    const prompt = f.systemPrompt({ width: 1280, height: 1000, native_tools: !!c.native });
    const image = `data:image/png;base64,${SHOT}`;
    const wire = JSON.stringify(req.body);
    if (c.api === 'chat') {
      expect(req.body.messages[0]).toEqual({ role: 'system', content: prompt });
      if (c.native) expect(req.body.tools).toEqual(f.tools!({ width: 1280, height: 1000, native_tools: true }));
      else expect(req.body.tools).toBeUndefined();
    } else if (c.api === 'anthropic') {
      expect(req.body.system).toBe(prompt);
      expect(req.body.tools[0]).toMatchObject({ type: 'computer_20250124', display_width_px: 1280, display_height_px: 1000 });
    } else {
      expect(req.body.instructions).toBe(prompt);
      expect(req.body.tools[0]).toMatchObject({ type: 'computer_use_preview', display_width: 1280, display_height: 1000, environment: 'browser' });
    }
    expect(wire).toContain(c.api === 'anthropic' ? SHOT : image);
    expect(wire).toContain('Open the cart.');
    if (c.format === 'orchard') expect(wire).toContain('<observation>\\nscreen size: 1280 x 1000\\nCurrent tab: 0');
    if (c.format === 'webvoyager') expect(wire).toContain('Cart');
    const parsed = parseModelOutput(d.format!, d.output, { width: 1280, height: 1000, som: obs.som });
    expect(parsed.ok && parsed.actions).toEqual(c.expected);
  });
});
