/**
 * The wire of next-edit suggestions: `textDocument/copilotInlineEdit`, the
 * request copilot-language-server's clients send. Pure (no `vscode`), so the
 * unit tests run it.
 *
 * Contract: `pickEdit` keeps the first edit the server answered for exactly
 * the document version asked about (any other is stale); `shownText` is the
 * new text as one line beside the old (the rest of a multi-line edit elided).
 */

/** The method of a next-edit suggestion. */
export const NEXT_EDIT_METHOD = 'textDocument/copilotInlineEdit';

export interface WirePosition {
  line: number;
  character: number;
}

export interface NextEdit {
  text: string;
  textDocument: { uri: string; version: number };
  range: { start: WirePosition; end: WirePosition };
}

/** The edit to show: the first one for exactly `version` of `uri`, if any. */
export function pickEdit(answer: unknown, uri: string, version: number): NextEdit | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const edits = (answer as { edits?: unknown }).edits;
  if (!Array.isArray(edits)) return undefined;
  const edit = edits[0] as Partial<NextEdit> | undefined;
  if (edit === undefined || typeof edit.text !== 'string' || edit.range === undefined) return undefined;
  if (edit.textDocument?.uri !== uri || edit.textDocument.version !== version) return undefined;
  return edit as NextEdit;
}

/** The new text as shown beside the old: its first line, `…` when there is more. */
export function shownText(text: string): string {
  const [first = '', ...rest] = text.split('\n');
  return rest.length > 0 ? `${first} …` : first;
}
