/**
 * The status-bar toggle of inline suggestions: an item showing whether
 * ghost text and next edits are on for the active document, and the command
 * `rhema.toggleInlineCompletion` (the item's click) that flips
 * `rhema.inlineCompletion` in the user's (Global) settings.
 *
 * Contract: the item shows while a text editor on a `file` or `untitled`
 * document is active, hidden otherwise; it follows the active editor and
 * every change of `rhema.inlineCompletion` or `editor.inlineSuggest`. A
 * workspace or language setting that still wins after the toggle is named
 * to the user rather than silently ignored. Text and tooltip: `inlineStatus.ts`.
 */
import * as vscode from 'vscode';
import { type InlineState, inlineView, toggledValue } from './inlineStatus';

export const TOGGLE_INLINE_COMMAND = 'rhema.toggleInlineCompletion';

function stateOf(document: vscode.TextDocument): InlineState {
  const rhema = vscode.workspace.getConfiguration('rhema', document);
  const general = vscode.workspace.getConfiguration('rhema').get<boolean>('inlineCompletion', true);
  return {
    enabled: rhema.get<boolean>('inlineCompletion', true) !== false,
    general: general !== false,
    editor: vscode.workspace.getConfiguration('editor.inlineSuggest', document).get<boolean>('enabled', true),
    language: document.languageId,
  };
}

function served(editor: vscode.TextEditor | undefined): editor is vscode.TextEditor {
  return editor !== undefined && ['file', 'untitled'].includes(editor.document.uri.scheme);
}

export class InlineToggle implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('rhema.inline', vscode.StatusBarAlignment.Right, 100);
  private readonly disposables: vscode.Disposable[] = [];

  constructor() {
    this.item.name = 'Rhema Inline Suggestions';
    this.item.command = TOGGLE_INLINE_COMMAND;
    this.disposables.push(
      vscode.commands.registerCommand(TOGGLE_INLINE_COMMAND, () => this.toggle()),
      vscode.window.onDidChangeActiveTextEditor(() => this.refresh()),
      vscode.workspace.onDidChangeConfiguration((change) => {
        if (change.affectsConfiguration('rhema.inlineCompletion') || change.affectsConfiguration('editor.inlineSuggest')) {
          this.refresh();
        }
      }),
    );
    this.refresh();
  }

  refresh(): void {
    const editor = vscode.window.activeTextEditor;
    if (!served(editor)) {
      this.item.hide();
      return;
    }
    const view = inlineView(stateOf(editor.document));
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.show();
  }

  async toggle(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const document = served(editor) ? editor.document : undefined;
    const before: InlineState =
      document === undefined
        ? { enabled: vscode.workspace.getConfiguration('rhema').get<boolean>('inlineCompletion', true), general: true, editor: true, language: '' }
        : stateOf(document);
    const wanted = toggledValue(before);
    await vscode.workspace
      .getConfiguration('rhema')
      .update('inlineCompletion', wanted, vscode.ConfigurationTarget.Global);
    this.refresh();
    if (document !== undefined && stateOf(document).enabled !== wanted) {
      void vscode.window.showInformationMessage(
        `Rhema inline suggestions: a workspace or language setting of rhema.inlineCompletion still keeps them ${wanted ? 'off' : 'on'} here.`,
      );
    }
  }

  dispose(): void {
    for (const disposable of this.disposables) disposable.dispose();
    this.item.dispose();
  }
}
