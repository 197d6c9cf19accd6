/** The chat transcript's reducer (`src/chat/transcript.ts`): prompts, events, ends, changed files, plans, reopened sessions. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Action, TranscriptState } from '../src/chat/messages';
import {
  apply,
  emptyState,
  fromMessages,
  meterText,
  placeChanges,
  runnablePlan,
  toolDetail,
  toolTarget,
  withoutLastPrompt,
} from '../src/chat/transcript';
import type { RhemaEvent } from '../src/protocol';

function run(actions: Action[]): { state: TranscriptState; touched: number[][] } {
  const state = emptyState();
  const touched = actions.map((action) => apply(state, action));
  return { state, touched };
}

const ev = (event: RhemaEvent): Action => ({ kind: 'event', event });
const usage = { input: 10, output: 4, cacheRead: 0, cacheWrite: 0 };

describe('transcript reducer', () => {
  it('takes the last prompt and what followed it out for a retry that sends it again', () => {
    const { state } = run([
      { kind: 'prompt', text: 'first', mentions: [] },
      ev({ type: 'text_delta', text: 'answer' }),
      { kind: 'end', stopReason: 'end_turn', usage, steps: 1 },
      { kind: 'prompt', text: 'second', mentions: ['image a.png'] },
      { kind: 'failed', message: 'image a.png not sent' },
    ]);
    withoutLastPrompt(state);
    assert.deepEqual(
      state.items.map((item) => item.kind),
      ['user', 'answer', 'end'],
    );
    withoutLastPrompt(state);
    withoutLastPrompt(state); // nothing left to take: no change, no error
    assert.deepEqual(state.items, []);
  });

  it('merges deltas, collapses the thinking when the answer starts and ends once', () => {
    const { state, touched } = run([
      { kind: 'prompt', text: 'hi @selection', mentions: ['@selection'] },
      ev({ type: 'thinking_delta', text: 'Let me ' }),
      ev({ type: 'thinking_delta', text: 'think.' }),
      ev({ type: 'text_delta', text: '# Title' }),
      ev({ type: 'text_delta', text: '\n\nbody' }),
      ev({ type: 'turn_end', stopReason: 'end_turn', text: '', steps: 1, usage }),
      { kind: 'end', stopReason: 'end_turn', usage, steps: 1 },
    ]);
    assert.deepEqual(
      state.items.map((item) => item.kind),
      ['user', 'thinking', 'answer', 'end'],
    );
    assert.deepEqual(state.items[1], { kind: 'thinking', text: 'Let me think.', collapsed: true });
    assert.deepEqual(state.items[2], { kind: 'answer', text: '# Title\n\nbody' });
    // The first answer delta touched the thinking (collapsed) and the new answer.
    assert.deepEqual(touched[3], [1, 2]);
    assert.deepEqual(touched[6], []); // the command's result after turn_end adds nothing
    assert.equal(state.running, false);
  });

  it('keeps one card per tool call, found by id, with output and result', () => {
    const { state } = run([
      { kind: 'prompt', text: 'run it', mentions: [] },
      ev({ type: 'thinking_delta', text: 'plan' }),
      ev({ type: 'tool_call_start', id: 'a', name: 'run_command' }),
      ev({ type: 'tool_call_start', id: 'b', name: 'read_file' }),
      ev({ type: 'tool_call_args_delta', id: 'a', delta: '{"command":"ls -l"}' }),
      ev({ type: 'tool_call_args_delta', id: 'b', delta: '{"path":"x.py","offset":3}' }),
      ev({ type: 'tool_output_delta', id: 'a', chunk: 'total 0\n' }),
      ev({ type: 'tool_status', id: 'a', status: { activity: 'running 1s', spent: null } }),
      ev({ type: 'tool_result', id: 'a', name: 'run_command', content: 'exit 2', isError: true, code: 2 }),
      ev({ type: 'tool_result', id: 'b', name: 'read_file', content: 'x = 1', isError: false, code: null }),
    ]);
    const [, thinking, a, b] = state.items;
    assert.equal(thinking?.kind === 'thinking' && thinking.collapsed, true);
    assert.deepEqual(a, {
      kind: 'tool',
      id: 'a',
      name: 'run_command',
      args: '{"command":"ls -l"}',
      status: 'running 1s',
      output: 'total 0\n',
      state: 'error',
      result: 'exit 2',
      code: 2,
    });
    assert.equal(b?.kind === 'tool' && b.state, 'ok');
    assert.equal(state.items.length, 4);
  });

  it('keeps one retry notice per stretch, updated per attempt, failed by an error', () => {
    const { state, touched } = run([
      { kind: 'prompt', text: 'x', mentions: [] },
      ev({ type: 'retry_wait', error: 'HTTP 429', delaySeconds: 2, attempt: 1, total: 3 }),
      ev({ type: 'retry_wait', error: 'HTTP 503', delaySeconds: 4, attempt: 2, total: 3 }),
      ev({ type: 'error', message: 'boom' }),
      { kind: 'failed', message: 'cancelled' },
    ]);
    assert.deepEqual(touched[2], [1]); // the second attempt updated the same notice
    assert.deepEqual(state.items.slice(1), [
      { kind: 'retry', error: 'HTTP 503', delaySeconds: 4, attempt: 2, total: 3, state: 'failed' },
      { kind: 'notice', level: 'error', text: 'boom' },
      { kind: 'notice', level: 'error', text: 'cancelled' },
    ]);
    assert.equal(state.running, false);
  });

  it('names the rules files of a turn on one line, completed when a nested one joins', () => {
    const { state, touched } = run([
      { kind: 'prompt', text: 'x', mentions: [] },
      ev({ type: 'rules', files: ['AGENTS.md'] }),
      ev({ type: 'text_delta', text: 'Reading.' }),
      ev({ type: 'rules', files: ['AGENTS.md', 'pkg/AGENTS.md'] }),
      { kind: 'prompt', text: 'y', mentions: [] },
      ev({ type: 'rules', files: ['AGENTS.md'] }),
    ]);
    assert.deepEqual(touched[3], [1]); // the same line, updated
    const rules = state.items.filter((item) => item.kind === 'notice' && item.level === 'rules');
    assert.deepEqual(rules, [
      { kind: 'notice', level: 'rules', text: 'Rules: AGENTS.md, pkg/AGENTS.md' },
      { kind: 'notice', level: 'rules', text: 'Rules: AGENTS.md' },
    ]);
  });

  it('settles a retry as retried when the model answers, and waits for the model until then', () => {
    const { state, touched } = run([
      { kind: 'prompt', text: 'x', mentions: [] },
      ev({ type: 'step_start', iteration: 1 }),
      ev({ type: 'retry_wait', error: 'HTTP 503', delaySeconds: 0.3, attempt: 1, total: 4 }),
      ev({ type: 'text_delta', text: 'Hi' }),
    ]);
    assert.deepEqual(state.items[1], { kind: 'retry', error: 'HTTP 503', delaySeconds: 0.3, attempt: 1, total: 4, state: 'retried' });
    assert.deepEqual(touched[3], [1, 2]); // the retry settled, the answer began
    assert.equal(state.waiting, undefined);
    const waiting = run([{ kind: 'prompt', text: 'x', mentions: [] }, ev({ type: 'step_start', iteration: 1 })]).state;
    assert.deepEqual(waiting.waiting, { what: 'model' });
  });

  it('waits for the model at each step and for the user while an approval is asked', () => {
    const { state } = run([
      { kind: 'prompt', text: 'x', mentions: [] },
      ev({ type: 'tool_call_start', id: 'a', name: 'run_command' }),
      { kind: 'approval', waiting: true, detail: 'Rhema wants to run pytest' },
      ev({ type: 'step_start', iteration: 2 }),
    ]);
    assert.deepEqual(state.waiting, { what: 'approval', detail: 'Rhema wants to run pytest' });
    apply(state, { kind: 'approval', waiting: false });
    apply(state, ev({ type: 'step_start', iteration: 2 }));
    assert.deepEqual(state.waiting, { what: 'model' });
    apply(state, ev({ type: 'turn_end', stopReason: 'end_turn', text: '', steps: 2, usage }));
    assert.equal(state.waiting, undefined);
  });

  it('keeps calls of two steps apart even when the provider reuses their ids', () => {
    const { state } = run([
      { kind: 'prompt', text: 'x', mentions: [] },
      ev({ type: 'step_start', iteration: 1 }),
      ev({ type: 'tool_call_start', id: 'call_1', name: 'edit_file' }),
      ev({ type: 'tool_call_args_delta', id: 'call_1', delta: '{"path":"a.py"}' }),
      ev({ type: 'tool_result', id: 'call_1', name: 'edit_file', content: 'ok', isError: false, code: null }),
      ev({ type: 'step_start', iteration: 2 }),
      ev({ type: 'tool_call_start', id: 'call_1', name: 'edit_file' }),
      ev({ type: 'tool_call_args_delta', id: 'call_1', delta: '{"path":"b.py"}' }),
    ]);
    const cards = state.items.filter((item) => item.kind === 'tool');
    assert.deepEqual(
      cards.map((card) => card.kind === 'tool' && card.args),
      ['{"path":"a.py"}', '{"path":"b.py"}'],
    );
  });

  it("a retried turn's tool_use steps are not its end", () => {
    const { state } = run([
      { kind: 'resume' },
      ev({ type: 'turn_end', stopReason: 'tool_use', text: '', steps: 1, usage }),
    ]);
    assert.equal(state.running, true);
    assert.deepEqual(state.items, []);
  });

  it('keeps a live changed-files card below the output: listed mid-answer, it splits nothing', () => {
    const file = { uri: 'file:///w/a.py', path: 'a.py', status: 'modified' as const, before: 'rhema-checkpoint:a', state: 'asLeft' as const };
    const { state, touched } = run([
      { kind: 'prompt', text: 'x', mentions: [] },
      ev({ type: 'step_start', iteration: 2 }),
      ev({ type: 'thinking_delta', text: 'Let me ' }),
      { kind: 'changes', session: 's', turn: 1, files: [file], live: true },
      ev({ type: 'thinking_delta', text: 'think.' }),
      ev({ type: 'text_delta', text: 'Done' }),
      ev({ type: 'tool_call_start', id: 'c', name: 'read_file' }),
      ev({ type: 'tool_result', id: 'c', name: 'read_file', content: 'ok', isError: false, code: null }),
      ev({ type: 'turn_end', stopReason: 'end_turn', text: '', steps: 2, usage }),
    ]);
    assert.deepEqual(
      state.items.map((item) => item.kind),
      ['user', 'thinking', 'answer', 'tool', 'end', 'changes'],
    );
    assert.deepEqual(state.items[1], { kind: 'thinking', text: 'Let me think.', collapsed: true });
    assert.deepEqual(touched[3], [2]); // the card came after the reasoning
    assert.deepEqual(touched[5], [1, 2, 3]); // the answer took its place, the card moved down
    assert.deepEqual(touched[7], [3]); // the result found its call above the card
    // The next prompt goes below the card: it belongs to the turn before.
    apply(state, { kind: 'prompt', text: 'y', mentions: [] });
    apply(state, ev({ type: 'text_delta', text: 'Next' }));
    assert.deepEqual(state.items.slice(5).map((item) => item.kind), ['changes', 'user', 'answer']);
  });

  it('lists changed files, grows the list live and records per-file decisions; no files, no list', () => {
    const file = { uri: 'file:///w/a.py', path: 'a.py', status: 'modified' as const, before: 'rhema-checkpoint:a', state: 'asLeft' as const };
    const other = { ...file, uri: 'file:///w/b.py', path: 'b.py', added: 3, removed: 1 };
    const { state, touched } = run([
      { kind: 'changes', session: 's', turn: 2, files: [] },
      { kind: 'changes', session: 's', turn: 3, files: [file], live: true },
      { kind: 'changes', session: 's', turn: 3, files: [file, other], live: true },
      { kind: 'changes', session: 's', turn: 3, files: [file, other] },
      { kind: 'decision', turn: 3, uri: file.uri, decision: 'rejected', undoable: true },
      { kind: 'decision', turn: 9, uri: file.uri, decision: 'accepted' },
    ]);
    assert.deepEqual(touched, [[], [0], [0], [0], [0], []]);
    const item = state.items[0];
    assert.equal(state.items.length, 1); // one card per turn, grown in place
    assert.equal(item?.kind === 'changes' && item.live, false);
    assert.deepEqual(item?.kind === 'changes' && item.files.map((f) => f.path), ['a.py', 'b.py']);
    assert.deepEqual(item?.kind === 'changes' && item.decisions, { [file.uri]: { decision: 'rejected', undoable: true } });
    apply(state, { kind: 'decision', turn: 3, uri: file.uri, decision: 'undecided' });
    assert.deepEqual(item?.kind === 'changes' && item.decisions, {});
  });

  it("places a reopened session's changed files at the end of each turn", () => {
    const file = (path: string, state: 'asLeft' | 'restored') => ({
      uri: `file:///w/${path}`,
      path,
      status: 'modified' as const,
      before: `rhema-checkpoint:${path}`,
      state,
    });
    const items = fromMessages([
      { role: 'user', content: [{ type: 'text', text: 'first' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'one' }] },
      { role: 'user', content: [{ type: 'text', text: 'second' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'two' }] },
    ]);
    const turns = [
      { turn: 1, title: 'first', createdAt: '', inConversation: true, interrupted: false, files: [file('a.py', 'restored')] },
      { turn: 2, title: 'second', createdAt: '', inConversation: true, interrupted: true, files: [file('b.py', 'asLeft')] },
    ];
    const placed = placeChanges(items, 's', turns, turns.map((t) => t.files));
    assert.deepEqual(
      placed.map((item) => (item.kind === 'changes' ? `changes ${item.turn}` : item.kind)),
      ['user', 'answer', 'changes 1', 'user', 'answer', 'changes 2'],
    );
    const first = placed[2];
    assert.deepEqual(first?.kind === 'changes' && first.decisions, { 'file:///w/a.py': { decision: 'rejected' } });
  });

  it('tracks the run\'s usage across steps and the context fill for the meter', () => {
    const tally = (input: number, output: number) => ({ input, output, cacheRead: 0, cacheWrite: 0 });
    const { state } = run([
      { kind: 'prompt', text: 'x', mentions: [] },
      ev({ type: 'usage', ...tally(1000, 10) }),
      ev({ type: 'step_end', usage: tally(1000, 12), stopReason: 'tool_use' }),
      ev({ type: 'usage', ...tally(200, 18) }),
      ev({ type: 'context', tokens: 12_300, window: 128_000 }),
    ]);
    assert.equal(meterText(state.context, state.usage), '1,200 in · 30 out · context 12.3k / 128.0k (10%)');
    assert.equal(meterText(undefined, state.usage), '1,200 in · 30 out');
    assert.equal(meterText({ tokens: 900, window: null }, state.usage), '1,200 in · 30 out · context 900');
  });

  it('rebuilds a reopened session from its messages', () => {
    const items = fromMessages([
      {
        role: 'user',
        content: [{ type: 'text', text: "First\n\nhello.py (the editor's current text, unsaved changes included):\n```python\nx\n```" }],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', text: 'hmm', signature: '' },
          { type: 'text', text: 'Sure.' },
          { type: 'tool_call', id: 'c1', name: 'edit_file', args: { path: 'a.py' }, raw_args: '{"path":"a.py"}' },
        ],
      },
      { role: 'tool', content: [{ type: 'tool_result', id: 'c1', content: 'edited', is_error: false }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
      'garbage',
    ] as unknown[]);
    assert.deepEqual(
      items.map((item) => item.kind),
      ['user', 'thinking', 'answer', 'tool', 'answer'],
    );
    assert.deepEqual(items[0], { kind: 'user', text: 'First', mentions: [] }); // without the context
    assert.equal(items[1]?.kind === 'thinking' && items[1].collapsed, true);
    assert.equal(items[3]?.kind === 'tool' && items[3].state, 'ok');
  });

  it('finds the file and place a tool call points at', () => {
    assert.deepEqual(toolTarget('{"path":"a.py","offset":12}'), { path: 'a.py', line: 12 });
    assert.deepEqual(toolTarget('{"path":"a.py","old_text":"x","new_text":"\\n  y = 2\\n"}'), {
      path: 'a.py',
      find: '  y = 2',
    });
    assert.deepEqual(toolTarget('{"from":"a.py","to":"b.py"}'), { path: 'b.py' });
    assert.equal(toolTarget('{"command":"ls"}'), undefined);
    assert.equal(toolTarget('{"path":'), undefined); // still streaming
    assert.equal(toolDetail('run_command', '{"command":"make test\\nmore"}'), 'make test');
    assert.equal(toolDetail('grep', '{"pattern":"TODO","path":"src"}'), 'TODO');
    assert.equal(toolDetail('rename_path', '{"from":"a.py","to":"b.py"}'), 'a.py → b.py');
  });
});

describe('plans', () => {
  const step = (content: string, status: 'pending' | 'in_progress' | 'completed') => ({ content, status });

  it('puts the plan under the prompt, above the answer, and ticks it in place', () => {
    const { state, touched } = run([
      { kind: 'prompt', text: 'do it', mentions: [] },
      ev({ type: 'text_delta', text: 'Let me plan.' }),
      ev({ type: 'tool_call_start', id: 'c1', name: 'update_plan' }),
      ev({ type: 'plan', entries: [step('read', 'in_progress'), step('fix', 'pending')] }),
      ev({ type: 'plan', entries: [step('read', 'completed'), step('fix', 'in_progress')] }),
    ]);
    assert.deepEqual(
      state.items.map((item) => item.kind),
      ['user', 'plan', 'answer'],
    );
    assert.deepEqual(touched[3], [1, 2]); // inserted: everything below it moved
    assert.deepEqual(touched[4], [1]); // ticked in place
    assert.deepEqual(state.items[1], { kind: 'plan', entries: [step('read', 'completed'), step('fix', 'in_progress')] });
    assert.equal(runnablePlan(state, 1), false); // still running
  });

  it('offers to run the latest plan between runs, until it is all done', () => {
    const { state, touched } = run([
      { kind: 'prompt', text: 'plan it', mentions: [] },
      ev({ type: 'plan', entries: [step('read', 'pending')] }),
      ev({ type: 'turn_end', stopReason: 'end_turn', text: '', steps: 1, usage }),
    ]);
    assert.ok(touched[2]?.includes(1)); // the end re-renders the plan: its buttons show
    assert.equal(runnablePlan(state, 1), true);
    apply(state, { kind: 'prompt', text: 'Carry out the plan.', mentions: [] });
    assert.equal(runnablePlan(state, 1), false);
    apply(state, ev({ type: 'plan', entries: [step('read', 'completed')] }));
    apply(state, ev({ type: 'turn_end', stopReason: 'end_turn', text: '', steps: 1, usage }));
    assert.deepEqual(
      state.items.map((item) => item.kind),
      ['user', 'plan', 'end', 'user', 'plan', 'end'],
    );
    assert.equal(runnablePlan(state, 4), false); // all done
  });

  it('shows a reopened session\'s update_plan calls as its plan, without tool cards', () => {
    const items = fromMessages([
      { role: 'user', content: [{ type: 'text', text: 'plan it' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_call', id: 'c1', name: 'update_plan', args: { entries: [step('read', 'pending')] } }],
      },
      { role: 'tool', content: [{ type: 'tool_result', id: 'c1', content: 'Plan updated' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Ready.' }] },
    ]);
    assert.deepEqual(
      items.map((item) => item.kind),
      ['user', 'plan', 'answer'],
    );
  });
});
