/**
 * Next-edit suggestions in VS Code with the stable API only (decorations, a
 * context key and keybindings; no proposed API, so it works in the released
 * VS Code and in code-server).
 *
 * Contract: when typing pauses (`IDLE_MS`) in a document where inline
 * suggestions are on (see ./inline), the server is asked for the next edit
 * of exactly that document version (not while ghost text is shown for that
 * version: one suggestion at a time); the previous request is cancelled, and
 * an answer for another version is dropped. The edit is shown at its place:
 * the text it replaces marked (removed-text colours, struck through), the new
 * text beside it. While it is shown (`rhema.nextEditShown`) Tab applies it
 * (`rhema.acceptNextEdit`) and Escape dismisses it (`rhema.dismissNextEdit`);
 * any change to the document dismisses it.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { inlineEnabled, suggestedAt } from './inline';
import { NEXT_EDIT_METHOD, pickEdit, shownText, type NextEdit } from './nextEditWire';

const IDLE_MS = 600;
const CONTEXT_KEY = 'rhema.nextEditShown';

interface Shown {
  editor: vscode.TextEditor;
  version: number;
  range: vscode.Range;
  text: string;
}

export class NextEdits implements vscode.Disposable {
  private readonly old = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
    textDecoration: 'line-through',
  });
  private readonly added = vscode.window.createTextEditorDecorationType({
    after: { backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground'), margin: '0 0 0 0.5ch' },
  });
  private readonly disposables: vscode.Disposable[] = [];
  private shown: Shown | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pending: vscode.CancellationTokenSource | undefined;

  constructor(private readonly client: () => LanguageClient | undefined) {
    this.disposables.push(
      this.old,
      this.added,
      vscode.workspace.onDidChangeTextDocument((change) => this.changed(change)),
      vscode.window.onDidChangeActiveTextEditor(() => this.dismiss()),
      vscode.commands.registerCommand('rhema.acceptNextEdit', () => this.accept()),
      vscode.commands.registerCommand('rhema.dismissNextEdit', () => this.dismiss()),
    );
  }

  private changed(change: vscode.TextDocumentChangeEvent): void {
    const editor = vscode.window.activeTextEditor;
    if (change.contentChanges.length === 0 || editor?.document !== change.document) return;
    this.dismiss();
    this.pending?.cancel();
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.ask(editor), IDLE_MS);
  }

  private async ask(editor: vscode.TextEditor): Promise<void> {
    const running = this.client();
    const document = editor.document;
    if (running === undefined || !running.isRunning() || !inlineEnabled(document)) return;
    const version = document.version;
    if (suggestedAt.get(document.uri.toString()) === version) return; // ghost text is shown: one at a time
    const uri = running.code2ProtocolConverter.asUri(document.uri);
    const position = editor.selection.active;
    const source = new vscode.CancellationTokenSource();
    this.pending = source;
    let answer: unknown;
    try {
      answer = await running.sendRequest(
        NEXT_EDIT_METHOD,
        { textDocument: { uri, version }, position: { line: position.line, character: position.character } },
        source.token,
      );
    } catch {
      return; // cancelled, or the server could not answer
    }
    const edit = pickEdit(answer, uri, version);
    if (edit === undefined || source.token.isCancellationRequested || document.version !== version) return;
    await this.show(editor, version, edit);
  }

  private async show(editor: vscode.TextEditor, version: number, edit: NextEdit): Promise<void> {
    const { start, end } = edit.range;
    const range = new vscode.Range(start.line, start.character, end.line, end.character);
    // The key first: once the edit is on screen, Tab applies it.
    await vscode.commands.executeCommand('setContext', CONTEXT_KEY, true);
    if (editor.document.version !== version || this.shown !== undefined) {
      if (this.shown === undefined) void vscode.commands.executeCommand('setContext', CONTEXT_KEY, false);
      return;
    }
    editor.setDecorations(this.old, range.isEmpty ? [] : [range]);
    editor.setDecorations(this.added, [
      { range: new vscode.Range(range.end, range.end), renderOptions: { after: { contentText: shownText(edit.text) } } },
    ]);
    this.shown = { editor, version, range, text: edit.text };
  }

  /** Apply the edit shown (if the document is still the version it was for). */
  async accept(): Promise<void> {
    const shown = this.shown;
    this.dismiss();
    if (shown === undefined || shown.editor.document.version !== shown.version) return;
    await shown.editor.edit((builder) => builder.replace(shown.range, shown.text));
  }

  /** Remove the edit shown. */
  dismiss(): void {
    if (this.shown === undefined) return;
    this.shown.editor.setDecorations(this.old, []);
    this.shown.editor.setDecorations(this.added, []);
    this.shown = undefined;
    void vscode.commands.executeCommand('setContext', CONTEXT_KEY, false);
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.pending?.cancel();
    this.dismiss();
    for (const disposable of this.disposables) disposable.dispose();
  }
}
