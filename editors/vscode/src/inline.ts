/**
 * Inline completion (ghost text) backed by the server's LSP 3.18
 * `textDocument/inlineCompletion`, through VS Code's stable
 * `InlineCompletionItemProvider` API (no proposed API: it works in the
 * released VS Code and in code-server).
 *
 * Contract: asked only while the client runs, `editor.inlineSuggest.enabled`
 * is on and `rhema.inlineCompletion` is on for the document's language (the
 * setting is language-overridable: `"[markdown]": {"rhema.inlineCompletion": false}`
 * turns it off there); VS Code's cancellation token goes with the request, so a
 * request VS Code drops reaches the server as `$/cancelRequest` (never sent to the
 * model within the server's debounce, aborted after it). Tab accepts and
 * word-by-word accept are VS Code's own commands on the item.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';

/** The method of LSP 3.18's inline completion. */
export const INLINE_COMPLETION_METHOD = 'textDocument/inlineCompletion';

interface WirePosition {
  line: number;
  character: number;
}

interface WireItem {
  insertText: string | { value: string };
  range?: { start: WirePosition; end: WirePosition };
}

type WireAnswer = { items: WireItem[] } | WireItem[] | null;

/** The document version each document last got ghost text for (a next edit waits while it shows). */
export const suggestedAt = new Map<string, number>();

/** Whether ghost text is wanted in `document` (the editor's and rhema's settings for its language). */
export function inlineEnabled(document: vscode.TextDocument): boolean {
  const editor = vscode.workspace.getConfiguration('editor.inlineSuggest', document);
  const rhema = vscode.workspace.getConfiguration('rhema', document);
  return editor.get<boolean>('enabled', true) && rhema.get<boolean>('inlineCompletion', true) !== false;
}

function toRange(range: WireItem['range']): vscode.Range | undefined {
  if (range === undefined) return undefined;
  return new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character);
}

/** The server's answer as VS Code's items. */
export function toItems(answer: WireAnswer): vscode.InlineCompletionItem[] {
  const items = answer === null ? [] : Array.isArray(answer) ? answer : answer.items;
  return items.map((item) => {
    const text = typeof item.insertText === 'string' ? item.insertText : item.insertText.value;
    return new vscode.InlineCompletionItem(text, toRange(item.range));
  });
}

/** Register the provider; `client` gives the running client (or none). */
export function registerInlineCompletion(client: () => LanguageClient | undefined): vscode.Disposable {
  const provider: vscode.InlineCompletionItemProvider = {
    async provideInlineCompletionItems(document, position, context, token) {
      const running = client();
      if (running === undefined || !running.isRunning() || !inlineEnabled(document)) return undefined;
      const params = {
        textDocument: { uri: running.code2ProtocolConverter.asUri(document.uri) },
        position: { line: position.line, character: position.character },
        context: { triggerKind: context.triggerKind === vscode.InlineCompletionTriggerKind.Invoke ? 1 : 2 },
      };
      try {
        const answer = await running.sendRequest<WireAnswer>(INLINE_COMPLETION_METHOD, params, token);
        if (token.isCancellationRequested) return undefined;
        const items = toItems(answer);
        if (items.length > 0) suggestedAt.set(document.uri.toString(), document.version);
        return items;
      } catch {
        return undefined; // cancelled, or the server could not answer: no ghost text
      }
    },
  };
  return vscode.languages.registerInlineCompletionItemProvider([{ scheme: 'file' }, { scheme: 'untitled' }], provider);
}
