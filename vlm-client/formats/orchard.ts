// Orchard-GUI, as published in MSR-Orchard/slime examples/orchard_gui: the tool list (env/prompts/tool_list.json),
// the system prompt (env/prompts/system_prompt.md) and the executor (env/web_env.py). The tool names, argument
// names, types, enums and defaults below are those facts; the descriptions and the prompt text are our own.
//
// Output, as the published prompt asks: `<think>…</think>`, then one or more
//   <tool_call>
//   {"name": "click", "arguments": {"point_2d": [512, 88]}}
//   </tool_call>
// blocks, executed top to bottom (the Qwen chat-template tool-call form the published parser reads; "parameters" is
// accepted for "arguments", as its regex fallback does). Also accepted: OpenAI `tool_calls` (server-side parsing), and
// — a common slip — the call object or a list of them without tags, found after the thought (a bracket inside the
// thought is not taken for the list).
//
// Semantics, as web_env.py executes them (resize_scale 1000, dpr 1):
//   click{point_2d, clicks=1, button=left}   click_count 1..3 → click / double_click / triple_click
//   write{message}         Control+A, Backspace, then type: the field is cleared first (canonical type with clear)
//   press_keys{keys, is_hotkey=false, presses=1}   hotkey: the keys together, `presses` times; else each key
//                          `presses` times in turn; key names as its validate_and_correct_key (unknown ones dropped,
//                          none left is a failure)
//   scroll{direction=down, amount=0.5, point_2d?}   amount is a fraction of the viewport (height for up/down, width
//                          for left/right), clamped to 0..1; with point_2d the element there scrolls
//   wait{seconds=3}  done{response}  goto_url{url}  go_back{}  hover{point_2d}  drag{start_point_2d, end_point_2d}
//   new_tab{} (blank)  switch_tab{tab_index}  close_tab{} (the current one)
// Coordinates are on a 0..1000 grid over the viewport (`rel1000`: web_env divides by resize_scale 1000). The
// environment defaults are Orchard's: a 1280×1000 viewport at DPR 1 and PNG screenshots (`sandbox`).
// The pieces: orchard-tools.ts (tool list), orchard-keys.ts (key names), orchard-parse.ts, orchard-print.ts,
// orchard-prompt.ts (system prompt), orchard-feedback.ts (feedback and observation text).
import { divisorOf } from './args.ts';
import { observationText } from './orchard-feedback.ts';
import { parse } from './orchard-parse.ts';
import { print } from './orchard-print.ts';
import { systemPrompt } from './orchard-prompt.ts';
import { toolDefs } from './orchard-tools.ts';
import type { PolicyFormat } from './types.ts';

const NAME = 'orchard';

export const orchard: PolicyFormat = {
  name: NAME,
  description: 'Orchard-GUI tool calls (MSR-Orchard/slime tool_list.json: click, write, press_keys, scroll, …) in <tool_call> blocks, rel1000 coordinates.',
  space: 'rel1000',
  // forward and reload are also printed (as the keys Alt+ArrowRight and F5), but the parser never produces them.
  actions: ['click', 'double_click', 'triple_click', 'right_click', 'hover', 'drag', 'type', 'key', 'scroll', 'wait', 'answer', 'terminate', 'goto', 'back', 'new_tab', 'switch_tab', 'close_tab'],
  sandbox: { viewport: { width: 1280, height: 1000 }, screenshot_format: 'png', coordinate_space: 'rel1000' },
  systemPrompt,
  tools: (opts) => toolDefs(divisorOf(opts)),
  observationText,
  parse,
  print,
};
