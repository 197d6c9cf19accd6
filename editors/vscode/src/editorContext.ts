/**
 * Small helpers over the editor's state shared by the commands: the active
 * editor (and its selection) as a run's `context`, VS Code ranges as the
 * protocol's, error text, and JSON without `undefined` keys.
 */
import * as vscode from 'vscode';
import type { ContextItem, Range } from './protocol';

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function toRange(selection: vscode.Range): Range {
  return {
    start: { line: selection.start.line, character: selection.start.character },
    end: { line: selection.end.line, character: selection.end.character },
  };
}

/** The active editor (and its non-empty selection) as `context`, and its workspace folder. */
export function editorContext(): { context?: ContextItem[]; folder?: string } {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined) {
    const first = vscode.workspace.workspaceFolders?.[0];
    return { folder: first?.uri.toString() };
  }
  const item: ContextItem = { uri: editor.document.uri.toString() };
  if (!editor.selection.isEmpty) item.range = toRange(editor.selection);
  const folder = vscode.workspace.getWorkspaceFolder(editor.document.uri) ?? vscode.workspace.workspaceFolders?.[0];
  return { context: [item], folder: folder?.uri.toString() };
}

/** JSON without `undefined` keys (the server's models treat absent and null differently). */
export function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
