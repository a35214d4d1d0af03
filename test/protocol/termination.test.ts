// How an episode the agent ended is reported: terminate(failure) is agent_gave_up, never task_completed.
import { describe, expect, it } from 'vitest';
import { agentTermination } from '../../protocol/task.ts';

describe('agentTermination', () => {
  it('tells a completion from the agent giving up', () => {
    expect(agentTermination([{ action: 'answer', text: '42' }], 3)).toEqual({ reason: 'task_completed', detail: 'answer at step 3' });
    expect(agentTermination([{ action: 'terminate', status: 'success' }])).toEqual({ reason: 'task_completed', detail: 'terminate (success)' });
    expect(agentTermination([{ action: 'terminate' }])).toEqual({ reason: 'task_completed', detail: 'terminate' });
    expect(agentTermination([{ action: 'wait', ms: 1 }, { action: 'terminate', status: 'failure', reason: 'no such item' }])).toEqual({
      reason: 'agent_gave_up',
      detail: 'terminate (failure): no such item',
    });
  });
});
