/**
 * The `rhema-status:` document "Rhema: Show Status" opens: read-only, in an
 * editor tab, as Markdown (`statusReport.ts` writes it), refreshed in place
 * each time the command runs.
 */
import * as vscode from 'vscode';

export const STATUS_SCHEME = 'rhema-status';
export const STATUS_URI = vscode.Uri.from({ scheme: STATUS_SCHEME, path: '/Rhema Status.md' });

/** The `rhema-status:` document: the latest report. */
export class StatusDocument implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private text = '';
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(): string {
    return this.text;
  }

  /** Show `report` in its tab (opened, or brought forward and refreshed). */
  async show(report: string): Promise<void> {
    this.text = report;
    this.changed.fire(STATUS_URI);
    const document = await vscode.workspace.openTextDocument(STATUS_URI);
    await vscode.languages.setTextDocumentLanguage(document, 'markdown');
    await vscode.window.showTextDocument(document, { preview: true });
  }

  dispose(): void {
    this.changed.dispose();
  }
}
