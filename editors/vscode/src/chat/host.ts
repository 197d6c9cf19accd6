/**
 * The extension's side of the chat view: what its buttons do. Prompts go
 * through the extension's runs (so the channel and the status bar see them
 * too), with the prompt's mentions as `context`; the turn's changed files
 * are listed as it changes them and after it; the session picker lists,
 * opens and deletes sessions (after a confirmation); the session shown is
 * remembered per workspace and reopened, with its changed-files cards, when
 * the window reloads. While no provider works the view shows the setup card,
 * and a choice there is written to the user settings. The bar's mode picker
 * sets the mode of the chat's next prompts (starting at `rhema.mode`, and
 * following it when that setting changes). A prompt that is a
 * slash command (an MCP server's prompt, `mcp.ts`) is sent as the prompt's
 * text; the view lists the commands when `/` starts the input.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { currentServerSettings, execute } from '../client';
import { ServerCommand, type ChangedFile, type ImageArg, type OpenSessionResult, type SessionSummary } from '../contract';
import { SlashPrompts } from '../mcp';
import { ChangesCard, openDiff } from './changes';
import { mentionContext, resolvePath } from './context';
import { mentionLabel, parseMentions, type Mention } from './mentions';
import type { FromView, Mode } from './messages';
import { openEndpointSettings, providerLabel, providerStatus, writeChoice } from './provider';
import { emptyState, fromMessages, placeChanges } from './transcript';
import { CHAT_VIEW_ID, ChatView, type ChatHost } from './view';
import type { ContextItem } from '../protocol';
import { SERVER_SETTINGS } from '../serverSettings';

/** What the chat needs of the extension. */
export interface Extension {
  readonly session: string | undefined;
  start(): Promise<LanguageClient>;
  chatTurn(prompt: string, context: ContextItem[], mentions: string[], mode?: Mode, images?: ImageArg[]): Promise<void>;
  /** Run the last failed turn again. */
  retry(): Promise<void>;
  cancel(): Promise<void>;
  newSession(): Promise<void>;
  openSessionById(session: string): Promise<void>;
  /** Ask for an API key and keep it (`keys.ts`); whether one was stored. */
  askKey(variable: string, label: string): Promise<boolean>;
  /** Start the server again (a key stored goes into its environment). */
  restart(): Promise<void>;
}

const SESSION_KEY = 'rhema.chat.session';
const SETTLE_MS = 300;
/** What "Run this plan" sends: the plan itself is in the session's history. */
const RUN_PLAN = 'Carry out the plan.';

export class ChatSide implements ChatHost, vscode.Disposable {
  readonly view: ChatView;
  private readonly changes: ChangesCard;
  /** The MCP servers' prompts, the input's slash commands. */
  private readonly slash: SlashPrompts;
  /** The turn whose files are being listed, and whether it must be listed again after. */
  private listing: Promise<void> | undefined;
  private relist: { session: string; turn: number; live: boolean } | undefined;
  /**
   * The mode picker: `setting` is `rhema.mode` as the server last reported it, `chosen` the
   * mode picked in the chat since (the chat's prompts run in it); a change of the setting
   * replaces the pick, the latest change wins.
   */
  private modes: { setting?: Mode; chosen?: Mode } = {};

  constructor(
    private readonly extension: Extension,
    private readonly context: vscode.ExtensionContext,
  ) {
    this.view = new ChatView(context.extensionUri, this, (error) => {
      void vscode.window.showErrorMessage(`Rhema: ${error instanceof Error ? error.message : String(error)}`);
    });
    this.changes = new ChangesCard(() => this.extension.start(), context.workspaceState);
    this.slash = new SlashPrompts(extension);
  }

  register(): vscode.Disposable {
    return vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, this.view, {
      webviewOptions: { retainContextWhenHidden: true },
    });
  }

  dispose(): void {
    this.view.dispose();
  }

  /** Show a session (none: a new, empty one), with its changed-files cards. */
  async showSession(opened: OpenSessionResult | undefined): Promise<void> {
    if (opened === undefined) {
      this.view.reset(emptyState());
      return;
    }
    const state = emptyState(opened.session, opened.title);
    state.items = fromMessages(opened.messages);
    this.view.reset(state);
    try {
      const { turns, views } = await this.changes.session(opened.session);
      if (this.view.transcript.session !== opened.session || this.view.transcript.running) return;
      state.items = placeChanges(state.items, opened.session, turns, views);
      this.view.reset(state);
    } catch (error) {
      this.view.apply({ kind: 'notice', text: `Could not list the changed files: ${String(error)}` });
    }
  }

  /**
   * List the files a turn changed: `live` while it runs (after each file tool), final after it.
   * Calls are serialised; one asked while another is under way runs once after it.
   */
  listChanges(session: string, turn: number, live = false): Promise<void> {
    if (!live) this.view.apply({ kind: 'session', session });
    if (this.listing !== undefined) {
      this.relist = { session, turn, live: live && (this.relist?.live ?? true) };
      return this.listing;
    }
    this.listing = (async () => {
      let next: { session: string; turn: number; live: boolean } | undefined = { session, turn, live };
      while (next !== undefined) {
        this.relist = undefined;
        try {
          this.view.apply(await this.changes.turn(next.session, next.turn, next.live));
        } catch (error) {
          if (!next.live) this.view.apply({ kind: 'notice', text: `Could not list the changed files: ${String(error)}` });
        }
        next = this.relist;
      }
    })().finally(() => {
      this.listing = undefined;
    });
    return this.listing;
  }

  /** Ask the server whether a provider works: the setup card when not, and the bar's provider label. */
  async refreshSetup(): Promise<boolean> {
    try {
      const { status, setup } = await providerStatus(await this.extension.start());
      this.view.setup(setup, providerLabel(status));
      this.followModeSetting();
      return setup === undefined;
    } catch {
      return false; // no server: the send path says so
    }
  }

  // ----- ChatHost -----

  async send(typed: string, images: ImageArg[] = []): Promise<void> {
    const text = await this.slash.expand(typed);
    if (text === undefined) {
      this.view.sendFailed(typed, 'a question about the prompt was dismissed');
      return;
    }
    const mentions = parseMentions(text);
    const context = await mentionContext(mentions);
    const labels = mentions.map((mention) => chipLabel(mention, context));
    // Without a mention the active editor goes along: its chip says so, like any context.
    if (mentions.length === 0) labels.push(...context.map(implicitLabel));
    labels.push(...images.map((image) => `image ${image.name ?? ''}`.trim()));
    await this.extension.chatTurn(text, context, labels, this.modes.chosen, images);
  }

  /** `rhema.mode` as the server is sent it: a change of it replaces the chat's pick. */
  followModeSetting(): void {
    const setting = currentServerSettings().mode;
    if (setting !== this.modes.setting) this.modes = { setting };
    this.showMode();
  }

  /** The mode the chat's next prompt runs in, in the bar's picker. */
  private showMode(): void {
    const mode = this.modes.chosen ?? this.modes.setting;
    if (mode !== undefined) this.view.mode(mode, SERVER_SETTINGS.mode.choices);
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
    const listed = (await this.sessions()).find((s) => s.session === session);
    const name = listed?.title || session;
    const answer = await vscode.window.showWarningMessage(
      `Delete the session "${name}"? Its conversation and checkpoints are removed for good; your files stay as they are.`,
      { modal: true },
      'Delete',
    );
    if (answer !== 'Delete') return;
    await execute(await this.extension.start(), ServerCommand.deleteSession, { session });
    if (this.extension.session === session) await this.extension.newSession();
  }

  async restore(): Promise<void> {
    void this.refreshSetup();
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
      case 'listPrompts':
        try {
          this.view.prompts(await this.slash.prompts(true));
        } catch (error) {
          this.view.prompts([], error instanceof Error ? error.message : String(error));
        }
        return;
      case 'listResources':
        try {
          const listed = await this.slash.resources();
          const failed = listed.failed.map((failure) => failure.error).join('; ');
          this.view.resources(listed.resources, failed || undefined);
        } catch (error) {
          this.view.resources([], error instanceof Error ? error.message : String(error));
        }
        return;
      case 'openFile':
        await this.openFile(message.path, message.line, message.find);
        return;
      case 'cancelSubagent':
        await execute(await this.extension.start(), ServerCommand.cancel, { session: message.session });
        return;
      case 'openDiff': {
        const found = this.changedFile(message.turn, message.uri);
        if (found !== undefined) await openDiff(found, message.turn);
        return;
      }
      case 'accept':
        this.view.apply({ kind: 'decision', turn: message.turn, uri: message.uri, decision: 'accepted' });
        return;
      case 'acceptAll':
        for (const uri of this.undecided(message.turn)) {
          this.view.apply({ kind: 'decision', turn: message.turn, uri, decision: 'accepted' });
        }
        return;
      case 'reject':
        await this.reject(message.turn, [message.uri]);
        return;
      case 'rejectAll':
        await this.reject(message.turn, this.undecided(message.turn));
        return;
      case 'undoReject': {
        const session = this.changesSession(message.turn);
        if (session !== undefined) this.view.apply(await this.changes.undoReject(session, message.turn, message.uri));
        return;
      }
      case 'retry':
        await this.extension.retry();
        return;
      case 'mode':
        if ((SERVER_SETTINGS.mode.choices as readonly string[]).includes(message.mode)) {
          this.modes.chosen = message.mode;
        }
        this.showMode();
        return;
      case 'runPlan':
        await this.extension.chatTurn(RUN_PLAN, [], [], message.mode);
        return;
      case 'choose':
        if (message.provider === undefined) {
          await openEndpointSettings();
          return;
        }
        if (message.keyVar !== undefined && (await this.extension.askKey(message.keyVar, message.provider))) {
          await writeChoice({ provider: message.provider });
          await this.extension.restart();
          await this.settle();
          return;
        }
        await writeChoice({ provider: message.provider, ...(message.model ? { model: message.model } : {}) });
        await this.settle();
        return;
      case 'checkSetup':
        await this.refreshSetup();
        return;
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

  /** After a choice: the server takes the new settings in its own time; ask until it has (a few tries). */
  private async settle(): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      if (await this.refreshSetup()) return;
    }
  }

  private async reject(turn: number, uris: string[]): Promise<void> {
    const session = this.changesSession(turn);
    if (session === undefined || uris.length === 0) return;
    for (const action of await this.changes.reject(session, turn, uris)) this.view.apply(action);
  }

  private changesItem(turn: number) {
    for (const item of this.view.transcript.items) {
      if (item.kind === 'changes' && item.turn === turn) return item;
    }
    return undefined;
  }

  private undecided(turn: number): string[] {
    const item = this.changesItem(turn);
    return item === undefined ? [] : item.files.filter((f) => item.decisions[f.uri] === undefined).map((f) => f.uri);
  }

  private changedFile(turn: number, uri: string): ChangedFile | undefined {
    return this.changesItem(turn)?.files.find((file) => file.uri === uri);
  }

  private changesSession(turn: number): string | undefined {
    return this.changesItem(turn)?.session;
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

/** The chip of the context that goes along without a mention: the active editor's file, and its selected lines. */
function implicitLabel(ref: ContextItem): string {
  const name = vscode.workspace.asRelativePath(vscode.Uri.parse(ref.uri));
  if (ref.range === undefined || ref.range === null) return `${name} (active editor)`;
  const { start, end } = ref.range;
  const lines = start.line === end.line ? `${start.line + 1}` : `${start.line + 1}-${end.line + 1}`;
  return `${name}:${lines} (selection)`;
}

/** A mention's chip on the prompt: what it attached (the file, the selected lines, how many files). */
function chipLabel(mention: Mention, context: ContextItem[]): string {
  const label = mentionLabel(mention);
  const editor = vscode.window.activeTextEditor;
  if (mention.kind === 'problems') {
    const files = context.filter((ref) => ref.diagnostics !== undefined && ref.diagnostics !== null).length;
    return `${label} (${files} file${files === 1 ? '' : 's'})`;
  }
  if (mention.kind === 'resource' || (mention.kind === 'file' && mention.path !== undefined)) return label;
  if (editor === undefined) return label;
  const name = vscode.workspace.asRelativePath(editor.document.uri);
  if (mention.kind === 'file') return `${label} (${name})`;
  const { start, end } = editor.selection;
  const lines = start.line === end.line ? `${start.line + 1}` : `${start.line + 1}-${end.line + 1}`;
  return `${label} (${name}:${lines})`;
}
