import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { changedFiles, mainArgument } from '../src/calls';
import type { RhemaEvent } from '../src/protocol';
import { FILE_TOOLS, TOOLS } from '../src/tools';

function result(name: string, isError = false): RhemaEvent {
  return { type: 'tool_result', id: 'c1', name, content: 'ok', isError, code: null };
}

describe('tool calls', () => {
  it('refreshes the changed-files card after every tool that changes files, rename_symbol too', () => {
    for (const name of ['edit_file', 'write_file', 'rename_path', 'delete_path', 'rename_symbol']) {
      assert.equal(changedFiles(result(name)), true, name);
    }
    assert.equal(changedFiles(result('rename_symbol', true)), false);
    for (const name of ['read_file', 'grep', 'run_command', 'update_plan', 'mcp__fs__write']) {
      assert.equal(changedFiles(result(name)), false, name);
    }
    const start: RhemaEvent = { type: 'tool_call_start', id: 'c1', name: 'edit_file' };
    assert.equal(changedFiles(start), false);
  });

  it('takes the file tools from the generated facts', () => {
    assert.deepEqual(
      [...FILE_TOOLS],
      Object.keys(TOOLS).filter((name) => TOOLS[name]?.changesFiles),
    );
  });

  it("shows a tool's own main argument, and a tool not ours by the fallback arguments", () => {
    assert.deepEqual(mainArgument('grep', { path: 'src', pattern: 'TODO' }), { key: 'pattern', value: 'TODO' });
    assert.deepEqual(mainArgument('symbols', { query: 'Foo', path: 'a.py' }), { key: 'query', value: 'Foo' });
    assert.deepEqual(mainArgument('rename_path', { from: 'a', to: 'b' }), { key: 'from', value: 'a', target: 'b' });
    assert.equal(mainArgument('update_plan', { path: 'x' }), undefined);
    assert.deepEqual(mainArgument('mcp__gh__search', { pattern: 'bug' }), { key: 'pattern', value: 'bug' });
    assert.deepEqual(mainArgument('mcp__fs__move', { from: 'a', to: 'b' }), { key: 'from', value: 'a' });
    assert.equal(mainArgument('toString', { path: 'x' })?.value, 'x');
    assert.equal(mainArgument('read_file', ['a']), undefined);
  });
});
