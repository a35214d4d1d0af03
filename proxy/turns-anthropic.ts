// Anthropic Messages calls (`POST /v1/messages`) as turns. From Anthropic's public API reference: `system` (a string
// or text blocks), `messages` alternating user/assistant with string or block content — text, image (base64 source
// with media_type, or url), tool_use {id, name, input}, tool_result {tool_use_id, content}, thinking — and an answer
// that is one assistant message of content blocks. Mapped to chat-completions form: tool_use → tool_calls, each
// tool_result → a `tool` message (before the user's other blocks, where the API requires them), thinking →
// reasoning_content, images → image_url parts with a data URL.
import type { CallRecord, Json, Turn } from './types.ts';

type Part = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

function imagePart(b: Json): Part | undefined {
  const s = b.source ?? {};
  if (s.type === 'base64' && typeof s.data === 'string') return { type: 'image_url', image_url: { url: `data:${s.media_type ?? 'image/png'};base64,${s.data}` } };
  if (s.type === 'url' && typeof s.url === 'string') return { type: 'image_url', image_url: { url: s.url } };
  return undefined;
}

/** Text-only content as one string, else text and image parts. */
function contentOf(blocks: Json[]): string | Part[] {
  const parts: Part[] = [];
  for (const b of blocks) {
    if (b?.type === 'text' && typeof b.text === 'string') parts.push({ type: 'text', text: b.text });
    else if (b?.type === 'image') {
      const p = imagePart(b);
      if (p) parts.push(p);
    }
  }
  return parts.every((p) => p.type === 'text') ? parts.map((p) => (p as { text: string }).text).join('\n') : parts;
}

const blocksOf = (content: unknown): Json[] => (typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : []);

/** An assistant message of content blocks in chat form. */
function assistantOf(content: unknown): Json {
  const blocks = blocksOf(content);
  const text = blocks.filter((b) => b?.type === 'text').map((b) => String(b.text ?? '')).join('\n');
  const msg: Json = { role: 'assistant', content: text || null };
  const calls = blocks.filter((b) => b?.type === 'tool_use');
  if (calls.length) msg.tool_calls = calls.map((b) => ({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }));
  const thinking = blocks.filter((b) => b?.type === 'thinking' && typeof b.thinking === 'string').map((b) => b.thinking);
  if (thinking.length) msg.reasoning_content = thinking.join('\n');
  return msg;
}

function userOf(content: unknown): Json[] {
  const blocks = blocksOf(content);
  const out: Json[] = [];
  for (const b of blocks) {
    if (b?.type !== 'tool_result') continue;
    out.push({ role: 'tool', tool_call_id: b.tool_use_id, content: contentOf(blocksOf(b.content)) });
  }
  const rest = blocks.filter((b) => b?.type !== 'tool_result');
  if (rest.length || !out.length) out.push({ role: 'user', content: contentOf(rest) });
  return out;
}

/** The conversation of a Messages request in chat-completions form. */
function anthropicMessages(sent: Json): Json[] {
  const out: Json[] = [];
  const system = typeof sent.system === 'string' ? sent.system : Array.isArray(sent.system) ? contentOf(sent.system) : undefined;
  if (system) out.push({ role: 'system', content: system });
  for (const m of Array.isArray(sent.messages) ? sent.messages : []) {
    if (m?.role === 'assistant') out.push(assistantOf(m.content));
    else out.push(...userOf(m?.content));
  }
  return out;
}

export function anthropicTurn(r: CallRecord, sent: Json, resp: Json): Turn | undefined {
  if (!Array.isArray(sent.messages) || resp.type !== 'message' || !Array.isArray(resp.content)) return undefined;
  const turn: Turn = { call_id: r.call_id, seq: r.seq, api: 'anthropic', messages: anthropicMessages(sent), completion: assistantOf(resp.content) };
  if (sent.tools) turn.tools = sent.tools;
  return turn;
}
