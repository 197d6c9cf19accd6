import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pickEdit, shownText } from '../src/nextEditWire';

const uri = 'file:///w/calc.py';
const edit = {
  text: ', "m"',
  textDocument: { uri, version: 7 },
  range: { start: { line: 4, character: 15 }, end: { line: 4, character: 15 } },
};

describe('pickEdit', () => {
  it('keeps the first edit for exactly the version asked about', () => {
    assert.deepEqual(pickEdit({ edits: [edit] }, uri, 7), edit);
  });

  it('drops a stale version, another document, an empty or malformed answer', () => {
    assert.equal(pickEdit({ edits: [edit] }, uri, 8), undefined);
    assert.equal(pickEdit({ edits: [edit] }, 'file:///w/other.py', 7), undefined);
    assert.equal(pickEdit({ edits: [] }, uri, 7), undefined);
    assert.equal(pickEdit(null, uri, 7), undefined);
    assert.equal(pickEdit({ edits: [{ text: 5 }] }, uri, 7), undefined);
  });
});

describe('shownText', () => {
  it('is the first line, elided when there is more', () => {
    assert.equal(shownText(', "m"'), ', "m"');
    assert.equal(shownText('a\nb'), 'a …');
  });
});
