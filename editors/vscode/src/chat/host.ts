/**
 * The extension's side of the chat view: what its buttons do. Prompts go
 * through the extension's runs (so the channel, the status bar and the
 * progress see them too), with the prompt's mentions as `context`; after a
 * turn the files it changed are listed; the session picker lists, opens and
 * deletes sessions; the session shown is remembered per workspace and
 * reopened when the window reloads.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { execute } from '../client';
import { ServerCommand, type ChangedFile, type OpenSessionResult, type SessionSummary } from '../contract';
import { openDiff, rejectFile, turnChanges } from './changes';
import { mentionContext, resolvePath } from './context';
import { mentionLabel, parseMentions } from './mentions';
import type { FromView } from './messages';
import { emptyState, fromMessages } from './transcript';
import { CHAT_VIEW_ID, ChatView, type ChatHost } from './view';
import type { ContextItem } from '../protocol';

/** What the chat needs of the extension. */
export interface Extension {
  readonly session: string | undefined;
  start(): Promise<LanguageClient>;
  chatTurn(prompt: string, context: ContextItem[], mentions: string[]): Promise<void>;
  cancel(): Promise<void>;
  newSession(): Promise<void>;
  openSessionById(session: string): Promise<void>;
}

const SESSION_KEY = 'rhema.chat.session';

export class ChatSide implements ChatHost, vscode.Disposable {
  readonly view: ChatView;

  constructor(
    private readonly extension: Extension,
    private readonly context: vscode.ExtensionContext,
  ) {
    this.view = new ChatView(context.extensionUri, this, (error) => {
      void vscode.window.showErrorMessage(`Rhema: ${error instanceof Error ? error.message : String(error)}`);
    });
  }

  register(): vscode.Disposable {
    return vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, this.view, {
      webviewOptions: { retainContextWhenHidden: true },
    });
  }

  dispose(): void {
    this.view.dispose();
  }

  /** Show a session (none: a new, empty one). */
  showSession(opened: OpenSessionResult | undefined): void {
    if (opened === undefined) {
      this.view.reset(emptyState());
      return;
    }
    const state = emptyState(opened.session, opened.title);
    state.items = fromMessages(opened.messages);
    this.view.reset(state);
  }

  /** After a turn: its session, and the files it changed with their diffs and decisions. */
  async listChanges(session: string, turn: number): Promise<void> {
    this.view.apply({ kind: 'session', session });
    try {
      this.view.apply(await turnChanges(await this.extension.start(), session, turn));
    } catch (error) {
      this.view.apply({ kind: 'notice', text: `Could not list the changed files: ${String(error)}` });
    }
  }

  // ----- ChatHost -----

  async send(text: string): Promise<void> {
    const mentions = parseMentions(text);
    const context = await mentionContext(mentions);
    await this.extension.chatTurn(text, context, mentions.map(mentionLabel));
  }

  stop(): Promise<void> {
    return this.extension.cancel();
  }

  async sessions(): Promise<SessionSummary[]> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.toString();
    return execute<SessionSummary[]>(await this.extension.start(), ServerCommand.sessions, folder ? { folder } : {});
  }

  newSession(): Promise<void> {
    return this.extension.newSession();
  }

  openSession(session: string): Promise<void> {
    return this.extension.openSessionById(session);
  }

  async deleteSession(session: string): Promise<void> {
    await execute(await this.extension.start(), ServerCommand.deleteSession, { session });
    if (this.extension.session === session) await this.extension.newSession();
  }

  async restore(): Promise<void> {
    const stored = this.context.workspaceState.get<string>(SESSION_KEY);
    if (stored === undefined || this.extension.session !== undefined) return;
    try {
      await this.extension.openSessionById(stored);
    } catch {
      // Deleted meanwhile (or from another store): start afresh.
      await this.context.workspaceState.update(SESSION_KEY, undefined);
    }
  }

  async handle(message: FromView): Promise<void> {
    switch (message.type) {
      case 'openFile':
        await this.openFile(message.path, message.line, message.find);
        return;
      case 'openDiff': {
        const found = this.changedFile(message.turn, message.uri);
        if (found !== undefined) await openDiff(found, message.turn);
        return;
      }
      case 'accept':
        this.view.apply({ kind: 'decision', turn: message.turn, uri: message.uri, decision: 'accepted' });
        return;
      case 'reject': {
        const session = this.changesSession(message.turn);
        if (session === undefined) return;
        this.view.apply(await rejectFile(await this.extension.start(), session, message.turn, message.uri));
        return;
      }
      case 'copy':
        await vscode.env.clipboard.writeText(message.text);
        return;
      case 'insert':
        await this.insert(message.text);
        return;
      default:
        return;
    }
  }

  private changedFile(turn: number, uri: string): ChangedFile | undefined {
    for (const item of this.view.transcript.items) {
      if (item.kind === 'changes' && item.turn === turn) return item.files.find((file) => file.uri === uri);
    }
    return undefined;
  }

  private changesSession(turn: number): string | undefined {
    for (const item of this.view.transcript.items) {
      if (item.kind === 'changes' && item.turn === turn) return item.session;
    }
    return undefined;
  }

  /** Open a file a tool card or the changes list names, at its line or at the text it wrote. */
  private async openFile(path: string, line?: number, find?: string): Promise<void> {
    const uri = await resolvePath(path);
    const document = await vscode.workspace.openTextDocument(uri);
    let range: vscode.Range | undefined;
    if (find !== undefined) {
      const at = document.getText().indexOf(find);
      if (at >= 0) range = new vscode.Range(document.positionAt(at), document.positionAt(at + find.length));
    }
    if (range === undefined && line !== undefined && line >= 1) {
      const start = new vscode.Position(Math.min(line - 1, document.lineCount - 1), 0);
      range = new vscode.Range(start, start);
    }
    await vscode.window.showTextDocument(document, { selection: range, preview: false });
  }

  /** Insert a code block at the cursor of the last active text editor. */
  private async insert(text: string): Promise<void> {
    const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
    if (editor === undefined) {
      void vscode.window.showInformationMessage('Rhema: open an editor to insert the code into.');
      return;
    }
    await editor.edit((edit) => {
      for (const selection of editor.selections) edit.replace(selection, text);
    });
  }
}
