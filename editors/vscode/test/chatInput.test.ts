/** The chat input's pieces: `@` mentions (`src/chat/mentions.ts`) and the prompt history (`src/chat/history.ts`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InputHistory } from '../src/chat/history';
import { mentionAt, mentionLabel, parseMentions, resourceMatches, resourceWord } from '../src/chat/mentions';

describe('mentions', () => {
  it('parses @file, @file:path, @selection and @problems once each', () => {
    assert.deepEqual(parseMentions('fix @problems in @file:src/a.py, see @selection and @file @problems'), [
      { kind: 'problems' },
      { kind: 'file', path: 'src/a.py' },
      { kind: 'selection' },
      { kind: 'file' },
    ]);
    assert.deepEqual(parseMentions('@file:"my dir/x.py" please'), [{ kind: 'file', path: 'my dir/x.py' }]);
  });

  it('reads an MCP resource mention as its server and URI', () => {
    assert.deepEqual(parseMentions('see @mcp:notes:fake://notes/readme, and @mcp:notes:"mem://a b" too'), [
      { kind: 'resource', server: 'notes', uri: 'fake://notes/readme' },
      { kind: 'resource', server: 'notes', uri: 'mem://a b' },
    ]);
    assert.deepEqual(parseMentions('@mcp:notes alone'), []);
    assert.equal(mentionLabel({ kind: 'resource', server: 'n', uri: 'x://y' }), '@mcp:n:x://y');
    assert.equal(resourceWord('n', 'x://a b'), '@mcp:n:"x://a b"');
    const listed = [
      { server: 'notes', uri: 'fake://notes/readme', name: 'readme', mimeType: null },
      { server: 'git', uri: 'git://log', name: 'log', mimeType: 'text/plain' },
    ];
    assert.deepEqual(resourceMatches(listed, '').length, 2);
    assert.deepEqual(resourceMatches(listed, 'rea').map((r) => r.uri), ['fake://notes/readme']);
    assert.deepEqual(resourceMatches(listed, 'mcp:git').map((r) => r.uri), ['git://log']);
    assert.deepEqual(resourceMatches(listed, 'file'), []);
  });

  it('ignores e-mail addresses and unknown words', () => {
    assert.deepEqual(parseMentions('mail me@selection.org or @someone, @filed'), []);
  });

  it('labels mentions and finds the one being typed', () => {
    assert.equal(mentionLabel({ kind: 'file', path: 'a.py' }), '@file:a.py');
    assert.equal(mentionLabel({ kind: 'problems' }), '@problems');
    assert.deepEqual(mentionAt('look at @sel', 12), { start: 8, word: 'sel' });
    assert.deepEqual(mentionAt('@', 1), { start: 0, word: '' });
    assert.equal(mentionAt('a@b', 3), undefined);
    assert.equal(mentionAt('@file done', 10), undefined);
  });
});

describe('input history', () => {
  it('walks up and down and brings the draft back', () => {
    const history = new InputHistory();
    history.add('one');
    history.add('two');
    history.add('two'); // a repeated neighbour is kept once
    assert.equal(history.up('draft'), 'two');
    assert.equal(history.up('two'), 'one');
    assert.equal(history.up('one'), undefined); // the oldest
    assert.equal(history.down(), 'two');
    assert.equal(history.down(), 'draft');
    assert.equal(history.down(), undefined); // not walking any more
    assert.deepEqual(history.all, ['one', 'two']);
  });

  it('ends the walk on send and caps its length', () => {
    const history = new InputHistory(['a', 'b'], 3);
    assert.equal(history.up(''), 'b');
    history.add('c');
    history.add('d');
    assert.deepEqual(history.all, ['b', 'c', 'd']);
    assert.equal(history.up(''), 'd');
    history.add('  ');
    assert.deepEqual(history.all, ['b', 'c', 'd']);
  });
});
