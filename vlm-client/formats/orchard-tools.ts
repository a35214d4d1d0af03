// Orchard-GUI's tools: names and argument schema as MSR-Orchard/slime examples/orchard_gui env/prompts/tool_list.json
// publishes them (names, argument names, types, enums, defaults); the descriptions are our own words.
import type { ToolDef } from '../client.ts';
import { functionTool } from './print-steps.ts';

const pointArg = (description: string, item: 'number' | 'integer' = 'number') => ({
  type: 'array',
  items: { type: item },
  minItems: 2,
  maxItems: 2,
  description,
});

export function toolDefs(d: number): ToolDef[] {
  const grid = `on the 0..${d} grid over the screenshot ([0, 0] top-left, [${d}, ${d}] bottom-right)`;
  return [
    functionTool(
      'click',
      'Click the mouse at a point of the page.',
      {
        point_2d: pointArg(`[x, y] of the point to click, ${grid}.`),
        clicks: { type: 'integer', description: 'How many clicks in a row: 1 for a click, 2 for a double click.', default: 1 },
        button: { type: 'string', enum: ['left', 'right', 'middle'], description: 'Which mouse button.', default: 'left' },
      },
      ['point_2d'],
    ),
    functionTool(
      'write',
      'Type text on the keyboard into the focused field. The field is emptied first (Ctrl+A, Backspace), so click the field before writing.',
      { message: { type: 'string', description: 'The text to type.' } },
      ['message'],
    ),
    functionTool(
      'press_keys',
      'Press keys or a shortcut: for navigation inside the page, shortcuts, or single key presses such as Enter.',
      {
        keys: {
          type: 'array',
          items: { type: 'string' },
          description:
            'Keys to press. Modifiers: "Alt", "Control", "Meta", "Shift"; actions: "Enter", "Tab", "Space", "Backspace", "Delete", ' +
            '"Escape"; navigation: "ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown"; ' +
            'letters "a"-"z", digits "0"-"9", "F1"-"F12".',
        },
        is_hotkey: { type: 'boolean', description: 'true: hold all keys together (e.g. ["Control", "c"]); false: press them one after another.', default: false },
        presses: { type: 'integer', description: 'How many times to repeat the press.', default: 1 },
      },
      ['keys'],
    ),
    functionTool(
      'scroll',
      'Scroll the page, or with point_2d the scrollable element at that point (a side panel, a dialog, a list).',
      {
        direction: { type: 'string', enum: ['up', 'down', 'left', 'right'], description: 'Scroll direction.', default: 'down' },
        amount: { type: 'number', minimum: 0.0, maximum: 1.0, description: 'How far, as a fraction of the visible page (0.5 = half a screen).', default: 0.5 },
        point_2d: pointArg(`Optional [x, y] of the element to scroll, ${grid}; without it the page scrolls.`),
      },
    ),
    functionTool('wait', 'Wait a few seconds, e.g. for a page to load or an animation to end.', {
      seconds: { type: 'integer', description: 'Seconds to wait.', default: 3 },
    }),
    functionTool(
      'done',
      'Finish the task with the final answer: when it is done, when it cannot be done, or when a CAPTCHA or bot check blocks the way.',
      { response: { type: 'string', description: 'The answer or result, or why the task could not be completed, with the relevant details.' } },
      ['response'],
    ),
    functionTool('goto_url', 'Open a URL in the current tab.', { url: { type: 'string', description: 'The full URL, e.g. "https://www.example.com".' } }, ['url']),
    functionTool('go_back', "Go back to the previous page of the tab's history.", {}),
    functionTool(
      'drag',
      'Drag with the left mouse button from one point to another.',
      {
        start_point_2d: pointArg(`[x, y] where the drag starts, ${grid}.`),
        end_point_2d: pointArg(`[x, y] where it ends, ${grid}.`),
        steps: { type: 'integer', description: 'Intermediate mouse moves (10-20 for an ordinary drag).', default: 10 },
      },
      ['start_point_2d', 'end_point_2d'],
    ),
    functionTool(
      'hover',
      'Move the mouse to a point without clicking: shows hover menus and tooltips.',
      { point_2d: pointArg(`[x, y] to move to, ${grid}.`, 'integer') },
      ['point_2d'],
    ),
    functionTool('new_tab', 'Open a new blank tab (then use goto_url in it).', {}),
    functionTool('switch_tab', 'Make another tab the current one.', { tab_index: { type: 'integer', description: 'Index of the tab, from 0.' } }, ['tab_index']),
    functionTool('close_tab', 'Close the current tab; the nearest remaining tab becomes current.', {}),
  ];
}

export const TOOL_NAMES = ['click', 'write', 'press_keys', 'scroll', 'wait', 'done', 'goto_url', 'go_back', 'drag', 'hover', 'new_tab', 'switch_tab', 'close_tab'];
