import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RhemaEvent } from '../src/contract';
import { applySubagent, MAX_CALLS, subagentState, type SubagentView } from '../src/chat/subagents';
import { apply, emptyState } from '../src/chat/transcript';
import type { ToolCard } from '../src/chat/messages';

type Inner = Extract<RhemaEvent, { type: 'subagent' }>['event'];

function child(event: Inner): RhemaEvent {
  return { type: 'subagent', id: 'task-1', session: 's-task-1', event };
}

describe('subagents', () => {
  it('folds a child run into its task card: calls, the streamed answer, how it ended', () => {
    const state = emptyState('s');
    apply(state, { kind: 'prompt', text: 'find greet', mentions: [] });
    apply(state, { kind: 'event', event: { type: 'tool_call_start', id: 'task-1', name: 'task' } });
    const events: Inner[] = [
      { type: 'step_start', iteration: 0 },
      { type: 'tool_call_start', id: 'r1', name: 'read_file' },
      { type: 'tool_call_args_delta', id: 'r1', delta: '{"path": "hello.py"}' },
      { type: 'tool_result', id: 'r1', name: 'read_file', content: 'x', isError: false, code: null },
      { type: 'step_start', iteration: 1 },
      { type: 'text_delta', text: 'greet is in ' },
      { type: 'text_delta', text: 'hello.py' },
    ];
    for (const event of events) assert.ok(apply(state, { kind: 'event', event: child(event) }).length === 1);
    const card = state.items.find((item) => item.kind === 'tool') as ToolCard;
    assert.equal(card.child?.session, 's-task-1');
    assert.deepEqual(card.child?.calls, [{ id: 'r1', name: 'read_file', args: '{"path": "hello.py"}', state: 'ok' }]);
    assert.equal(card.child?.answer, 'greet is in hello.py');
    assert.equal(subagentState(card.child), 'running');
    const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
    apply(state, { kind: 'event', event: child({ type: 'turn_end', stopReason: 'cancelled', text: '', steps: 2, usage }) });
    assert.equal(subagentState(card.child), 'cancelled');
    assert.equal(state.running, true); // the child's end is not the parent's
  });

  it('ignores a child of an unknown call and keeps what it shows bounded', () => {
    const state = emptyState('s');
    assert.deepEqual(apply(state, { kind: 'event', event: child({ type: 'text_delta', text: 'x' }) }), []);
    const card: { child?: SubagentView } = {};
    for (let n = 0; n < MAX_CALLS + 10; n++) {
      applySubagent(card, { type: 'subagent', id: 't', session: 'c', event: { type: 'tool_call_start', id: `c${n}`, name: 'grep' } });
    }
    applySubagent(card, { type: 'subagent', id: 't', session: 'c', event: { type: 'text_delta', text: 'y'.repeat(100_000) } });
    assert.equal(card.child?.calls.length, MAX_CALLS);
    assert.ok((card.child?.answer.length ?? 0) <= 4000);
  });
});
