import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diagnostics, documentSymbols, locations, workspaceEdit, workspaceSymbols } from '../src/languageJson';

const uri = (text: string) => ({ toString: () => text });
const at = (line: number, start: number, end: number) => ({ start: { line, character: start }, end: { line, character: end } });
const A = 'file:///w/src/core.ts';
const B = 'file:///w/src/use.ts';

describe('VS Code results as LSP JSON', () => {
  it('gives locations, a LocationLink as its target selection', () => {
    const got = locations([
      { uri: uri(A), range: at(0, 16, 21) },
      { targetUri: uri(B), targetRange: at(2, 0, 40), targetSelectionRange: at(2, 9, 14) },
      { targetUri: uri(B), targetRange: at(5, 0, 3) },
    ]);
    assert.deepEqual(got, [
      { uri: A, range: at(0, 16, 21) },
      { uri: B, range: at(2, 9, 14) },
      { uri: B, range: at(5, 0, 3) },
    ]);
    assert.deepEqual(locations(undefined), []);
  });

  it('gives a symbol tree as DocumentSymbol[] with LSP kinds, flat ones as SymbolInformation[]', () => {
    const fn = { name: 'greet', detail: '', kind: 11, range: at(0, 0, 3), selectionRange: at(0, 16, 21), children: [] };
    const cls = { name: 'Greeter', detail: 'class', kind: 4, tags: [1], range: at(4, 0, 9), selectionRange: at(4, 13, 20), children: [fn] };
    assert.deepEqual(documentSymbols([cls]), [
      {
        name: 'Greeter',
        detail: 'class',
        kind: 5,
        tags: [1],
        range: at(4, 0, 9),
        selectionRange: at(4, 13, 20),
        children: [{ name: 'greet', kind: 12, range: at(0, 0, 3), selectionRange: at(0, 16, 21), children: [] }],
      },
    ]);
    const flat = { name: 'greet', kind: 11, containerName: 'core', location: { uri: uri(A), range: at(0, 16, 21) } };
    assert.deepEqual(documentSymbols([flat]), [{ name: 'greet', kind: 12, containerName: 'core', location: { uri: A, range: at(0, 16, 21) } }]);
    assert.deepEqual(workspaceSymbols([flat]), documentSymbols([flat]));
  });

  it('gives a rename as {changes} by URI, edits of one URI together; no edit is null', () => {
    const edit = (line: number, text: string) => ({ range: at(line, 9, 14), newText: text });
    assert.deepEqual(
      workspaceEdit([
        [uri(A), [edit(0, 'hello')]],
        [uri(B), [edit(0, 'hello'), edit(2, 'hello')]],
        [uri(A), [edit(3, 'hello')]],
      ]),
      {
        changes: {
          [A]: [edit(0, 'hello'), edit(3, 'hello')],
          [B]: [edit(0, 'hello'), edit(2, 'hello')],
        },
      },
    );
    assert.equal(workspaceEdit(undefined), null);
  });

  it('gives diagnostics with LSP severities and a plain code', () => {
    const related = [{ location: { uri: uri(A), range: at(0, 22, 34) }, message: 'The expected type comes from here.' }];
    assert.deepEqual(
      diagnostics([
        { range: at(2, 6, 8), message: "Argument of type 'number' is not assignable", severity: 0, source: 'ts', code: 2345, relatedInformation: related },
        { range: at(1, 0, 5), message: 'unused', severity: 3, code: { value: 'no-unused' }, tags: [1] },
      ]),
      [
        {
          range: at(2, 6, 8),
          message: "Argument of type 'number' is not assignable",
          severity: 1,
          source: 'ts',
          code: 2345,
          relatedInformation: [{ location: { uri: A, range: at(0, 22, 34) }, message: 'The expected type comes from here.' }],
        },
        { range: at(1, 0, 5), message: 'unused', severity: 4, code: 'no-unused', tags: [1] },
      ],
    );
  });
});
