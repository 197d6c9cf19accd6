import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message, RhemaEvent } from '../src/protocol';
import { closingLine, formatCount, RunRenderer, summariseArgs, transcriptLines } from '../src/render';

/** A sink that records every append, like the output channel. */
class RecordingSink {
  readonly appends: string[] = [];
  append(text: string): void {
    this.appends.push(text);
  }
  get text(): string {
    return this.appends.join('');
  }
}

function render(events: RhemaEvent[], title = 'Ask: hello'): { sink: RecordingSink; renderer: RunRenderer } {
  const sink = new RecordingSink();
  const renderer = new RunRenderer(sink);
  renderer.begin(title);
  for (const event of events) renderer.event(event);
  return { sink, renderer };
}

describe('RunRenderer', () => {
  it('shows a compaction as one line and keeps the context fill', () => {
    const { sink, renderer } = render([
      { type: 'compaction', before: 170_000, after: 42_000, summaryTokens: 1_500 },
      { type: 'context', tokens: 42_000, window: 200_000 },
    ]);
    assert.equal(sink.text, '▶ Ask: hello\n⇣ compacted the conversation: 170,000 → 42,000 tokens (summary 1,500)\n');
    assert.deepEqual(renderer.contextFill, { tokens: 42_000, window: 200_000 });
  });

  it('sets reasoning apart and streams the answer as appends', () => {
    const { sink } = render([
      { type: 'step_start', iteration: 1 },
      { type: 'thinking_delta', text: 'The user wants' },
      { type: 'thinking_delta', text: ' a greeting.\nKeep it short.' },
      { type: 'text_delta', text: 'Hel' },
      { type: 'text_delta', text: 'lo, ' },
      { type: 'text_delta', text: 'world!' },
      { type: 'step_end', usage: { input: 120, output: 9, cacheRead: 0, cacheWrite: 0 }, stopReason: 'end_turn' },
      { type: 'turn_end', stopReason: 'end_turn', text: 'Hello, world!', steps: 1, usage: { input: 1200, output: 9, cacheRead: 0, cacheWrite: 0 } },
    ]);
    assert.equal(
      sink.text,
      [
        '▶ Ask: hello',
        '│ The user wants a greeting.',
        '│ Keep it short.',
        'Hello, world!',
        '■ end_turn · 1 step · 1,200 in · 9 out tokens',
        '',
      ].join('\n'),
    );
    // Each answer delta is its own append: no line per delta, no buffering.
    assert.ok(sink.appends.includes('Hel'));
    assert.ok(sink.appends.includes('lo, '));
    assert.ok(sink.appends.includes('world!'));
  });

  it('prefixes every reasoning line, including ones split across deltas', () => {
    const { sink } = render([
      { type: 'thinking_delta', text: 'a\n' },
      { type: 'thinking_delta', text: '\nb' },
      { type: 'thinking_delta', text: 'c\n' },
    ]);
    assert.equal(sink.text, '▶ Ask: hello\n│ a\n\n│ bc\n');
  });

  it('writes one status line per tool call, with its path', () => {
    const { sink } = render([
      { type: 'text_delta', text: 'Let me look.' },
      { type: 'tool_call_start', id: 'c1', name: 'read_file' },
      { type: 'tool_call_args_delta', id: 'c1', delta: '{"path": "src/' },
      { type: 'tool_call_args_delta', id: 'c1', delta: 'app.py"}' },
      { type: 'tool_result', id: 'c1', name: 'read_file', content: 'print(1)', isError: false, code: null },
      { type: 'tool_call_start', id: 'c2', name: 'edit_file' },
      { type: 'tool_call_args_delta', id: 'c2', delta: '{"path":"a.py","old_text":"x","new_text":"y"}' },
      {
        type: 'tool_result',
        id: 'c2',
        name: 'edit_file',
        content: 'old_text not found in a.py\nRe-read the file.',
        isError: true,
        code: 2,
      },
      { type: 'tool_call_start', id: 'c3', name: 'rename_path' },
      { type: 'tool_call_args_delta', id: 'c3', delta: '{"from":"a.py","to":"b.py"}' },
      { type: 'tool_result', id: 'c3', name: 'rename_path', content: 'ok', isError: false, code: null },
    ]);
    assert.equal(
      sink.text,
      [
        '▶ Ask: hello',
        'Let me look.',
        '🔧 read_file src/app.py ✓',
        '🔧 edit_file a.py ✗ (code 2): old_text not found in a.py …',
        '🔧 rename_path a.py → b.py ✓',
        '',
      ].join('\n'),
    );
  });

  it('streams command output under a header and closes with the exit status', () => {
    const { sink } = render([
      { type: 'tool_call_start', id: 'c1', name: 'run_command' },
      { type: 'tool_call_args_delta', id: 'c1', delta: '{"command":"pytest -q"}' },
      { type: 'tool_status', id: 'c1', status: { activity: 'approved', spent: null } },
      { type: 'tool_output_delta', id: 'c1', chunk: '..F\n' },
      { type: 'tool_output_delta', id: 'c1', chunk: '1 failed' },
      { type: 'tool_result', id: 'c1', name: 'run_command', content: '..F\n1 failed', isError: true, code: 1 },
    ]);
    assert.equal(
      sink.text,
      [
        '▶ Ask: hello',
        '🔧 run_command pytest -q …',
        '  ┊ ..F',
        '  ┊ 1 failed',
        '🔧 run_command pytest -q ✗ (approved, code 1): ..F …',
        '',
      ].join('\n'),
    );
  });

  it('shows retry countdowns, later steps and errors on their own lines', () => {
    const { sink } = render([
      { type: 'text_delta', text: 'partial' },
      { type: 'retry_wait', error: 'HTTP 429 Too Many Requests', delaySeconds: 4, attempt: 2, total: 5 },
      { type: 'step_start', iteration: 2 },
      { type: 'error', message: 'provider closed the stream' },
    ]);
    assert.equal(
      sink.text,
      [
        '▶ Ask: hello',
        'partial',
        '⏳ retry 2/5 in 4s: HTTP 429 Too Many Requests',
        '── step 2',
        '✖ provider closed the stream',
        '',
      ].join('\n'),
    );
  });

  it('closes from the result only when no turn_end did', () => {
    const closed = render([
      { type: 'turn_end', stopReason: 'cancelled', text: '', steps: 1, usage: { input: 5, output: 1, cacheRead: 0, cacheWrite: 0 } },
    ]);
    closed.renderer.finish({ stopReason: 'cancelled', usage: { input: 5, output: 1 }, steps: 1 });
    assert.equal(closed.sink.text, '▶ Ask: hello\n■ cancelled · 1 step · 5 in · 1 out tokens\n');

    const step = render([{ type: 'text_delta', text: 'ok' }], 'Step: go');
    step.renderer.finish({ stopReason: 'tool_use', usage: { input: 10, output: 2 } });
    assert.equal(step.sink.text, '▶ Step: go\nok\n■ tool_use · 10 in · 2 out tokens\n');
  });

  it('adds cumulative usage of the call in flight to finished steps', () => {
    const { renderer } = render([
      { type: 'step_start', iteration: 1 },
      { type: 'usage', input: 100, output: 10, cacheRead: 0, cacheWrite: 0 },
      { type: 'usage', input: 100, output: 20, cacheRead: 0, cacheWrite: 0 },
      { type: 'step_end', usage: { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 }, stopReason: 'tool_use' },
      { type: 'step_start', iteration: 2 },
      { type: 'usage', input: 150, output: 5, cacheRead: 0, cacheWrite: 0 },
    ]);
    assert.deepEqual(renderer.usage, { input: 250, output: 25 });
  });

  it('closes a cancelled run from its turn_end, and the normal result adds nothing', () => {
    const { sink, renderer } = render([
      { type: 'step_start', iteration: 1 },
      { type: 'text_delta', text: 'Once upon' },
      { type: 'step_end', usage: { input: 10, output: 2, cacheRead: 0, cacheWrite: 0 }, stopReason: 'end_turn' },
      { type: 'turn_end', stopReason: 'cancelled', text: 'Once upon', steps: 1, usage: { input: 10, output: 2, cacheRead: 0, cacheWrite: 0 } },
    ]);
    renderer.finish({ stopReason: 'cancelled', usage: { input: 10, output: 2 }, steps: 1 });
    assert.equal(sink.text, '▶ Ask: hello\nOnce upon\n■ cancelled · 1 step · 10 in · 2 out tokens\n');
  });

  it('fails a run with an error line and a closing line', () => {
    const { sink, renderer } = render([{ type: 'text_delta', text: 'Hal' }]);
    renderer.fail('cancelled');
    assert.equal(sink.text, '▶ Ask: hello\nHal\n✖ cancelled\n■ error · 0 in · 0 out tokens\n');
  });
});

describe('helpers', () => {
  it('formats counts with separators', () => {
    assert.equal(formatCount(0), '0');
    assert.equal(formatCount(999), '999');
    assert.equal(formatCount(1234567), '1,234,567');
  });

  it('names steps in the closing line', () => {
    assert.equal(closingLine('max_steps', { input: 1, output: 2 }, 3), '■ max_steps · 3 steps · 1 in · 2 out tokens');
  });

  it('summarises arguments, and tolerates broken JSON', () => {
    assert.equal(summariseArgs('grep', '{"pattern":"TODO","path":"src"}'), 'TODO');
    assert.equal(summariseArgs('read_file', '{"path":"a.py","offset":3}'), 'a.py');
    assert.equal(summariseArgs('rename_path', '{"from":"a.py","to":"b.py"}'), 'a.py → b.py');
    assert.equal(summariseArgs('update_plan', '{"entries":[]}'), '');
    assert.equal(summariseArgs('read_file', '{"path": "a.p'), '');
    assert.equal(summariseArgs('read_file', '[]'), '');
  });

  it('renders a reopened transcript in the server message shapes', () => {
    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'Fix it', provider_data: null }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', text: 'Read first.\nThen edit.', signature: null, provider_data: null },
          { type: 'text', text: 'Done.', provider_data: null },
          { type: 'tool_call', id: 'c1', name: 'edit_file', args: { path: 'a.py' }, raw_args: '{"path":"a.py"}', provider_id: null, provider_data: null },
          { type: 'tool_call', id: 'c2', name: 'read_file', args: { path: 'b.py' }, raw_args: null, provider_id: null, provider_data: null },
          { type: 'tool_call', id: 'c3', name: 'run_command', args: { command: 'make' }, raw_args: null, provider_id: null, provider_data: null },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool_result', id: 'c1', content: 'ok', is_error: false, code: null, images: [] },
          { type: 'tool_result', id: 'c2', content: 'no such file\nat all', is_error: true, code: 2, images: [] },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'All good.', provider_data: null }] },
    ];
    assert.deepEqual(transcriptLines(messages), [
      'you: Fix it',
      '│ Read first.',
      '│ Then edit.',
      'rhema: Done.',
      '🔧 edit_file a.py ✓',
      '🔧 read_file b.py ✗: no such file …',
      '🔧 run_command make …',
      'rhema: All good.',
    ]);
    assert.deepEqual(transcriptLines(['not a message', { role: 'user', content: 'not parts' }]), []);
  });
});
