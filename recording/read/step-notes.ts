// The actions of a step as the model wrote them (in its format's own space), for the viewer to show beside the
// executed ones (a policy may execute another space than it prints: the scripted policy clicks css_px points and
// prints them in the run's format).
import type { Action } from '../../protocol/action.ts';
import { parseModelOutput } from '../../vlm-client/formats/index.ts';
import type { StepView } from './view.ts';

/**
 * The step's actions as its model output says, parsed with the recorded format: their coordinates are in the
 * format's space (rel1000 for qwen3vl/uitars/orchard) whatever space the executed actions used. Undefined when there
 * is no output, the parse fails, or no action carries a point.
 */
export function modelActions(s: Pick<StepView, 'model_output' | 'format' | 'screenshot'>): Action[] | undefined {
  if (!s.model_output || !s.format) return undefined;
  const r = parseModelOutput(s.format, s.model_output, s.screenshot ? { width: s.screenshot.width, height: s.screenshot.height } : {});
  if (!r.ok || !r.actions.some((a) => 'x' in a && typeof a.x === 'number')) return undefined;
  return r.actions;
}
