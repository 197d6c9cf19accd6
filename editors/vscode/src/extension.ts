/**
 * The Rhema extension: palette and context-menu commands over the editor
 * contract, the chat view, the "Rhema" output channel (a plain-text
 * transcript of every run), one status bar item (it opens the chat) and, for
 * the commands that edit in place, cancellable progress notifications.
 *
 * Every run (turn, step, selection edit) is sent with its own cancellation
 * token and work-done token: Stop, the notification's Cancel button and
 * "Rhema: Cancel" cancel that token, which the client turns into
 * `$/cancelRequest`. `rhema/event` notifications are rendered into the
 * channel by `RunRenderer`, and the current session's into the chat view
 * (`chat/`): "Rhema: Ask" and the chat's own prompts run there. A prompt
 * that cannot be sent (the server does not start) goes back into the chat's
 * input with the error; a run that fails can be retried (its prompt again,
 * or, when the prompt is already in the session, the turn continued step by
 * step). Edits arrive as `workspace/applyEdit` and are applied by VS Code
 * itself; while a question (`window/showMessageRequest`) or a review (an
 * edit needing confirmation) waits, the chat says so.
 */
import * as vscode from 'vscode';
import {
  type MessageActionItem,
  ShowMessageRequest,
  type ShowMessageRequestParams,
  State,
  type LanguageClient,
} from 'vscode-languageclient/node';
import { registerInlineCompletion } from './inline';
import { InlineToggle } from './inlineToggle';
import { NextEdits } from './nextEdit';
import { CHECKPOINT_SCHEME, CheckpointContent } from './checkpoints';
import { createClient, execute, notifySettingsChanged, onReview } from './client';
import {
  EVENT_METHOD,
  ServerCommand,
  type ContextItem,
  type ImageArg,
  type OpenSessionResult,
  type RhemaEventParams,
  type TurnResult,
} from './protocol';
import { ask, editSelection, step, turnFromCodeAction } from './commands';
import { dropUndefined, editorContext, errorMessage } from './editorContext';
import { transcriptLines } from './render';
import {
  compactSession,
  pickSession,
  rewindTo,
  showSessionChanges,
  showStatus,
  undoLastTurn,
} from './sessions';
import { answerAskText, pickMcpServer } from './mcp';
import { Runs } from './runs';
import { statusText, type StatusState } from './status';
import { ChatSide } from './chat/host';
import { Keys } from './keys';
import { STATUS_SCHEME, StatusDocument } from './statusDocument';
import { statusReport } from './statusReport';
import { registerWorktrees } from './worktrees';
import type { Mode } from './chat/messages';

const PROVIDER_SETTINGS = ['rhema.provider', 'rhema.model', 'rhema.baseUrl', 'rhema.protocol'];

export class Rhema implements vscode.Disposable {
  private client: LanguageClient | undefined;
  readonly output = vscode.window.createOutputChannel('Rhema');
  private readonly statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  private readonly disposables: vscode.Disposable[] = [];
  /** What the status bar shows (the runs keep its run-time part). */
  readonly status: StatusState = { running: false, usage: { input: 0, output: 0 }, serverState: 'stopped' };
  readonly chat: ChatSide;
  private readonly keys: Keys;
  private readonly statusDocument = new StatusDocument();
  /** The runs in flight (the palette's commands in `commands.ts` start theirs here). */
  readonly runs: Runs;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.keys = new Keys(context.secrets, context.globalState);
    this.chat = new ChatSide(this, context);
    this.runs = new Runs(this);
    this.statusItem.command = 'rhema.openChat';
    this.statusItem.name = 'Rhema';
    this.refreshStatus();
    this.statusItem.show();
  }

  dispose(): void {
    this.runs.cancelAll();
    for (const disposable of this.disposables) disposable.dispose();
    this.chat.dispose();
    this.statusItem.dispose();
    this.output.dispose();
  }

  register(): void {
    const commands: [string, (arg?: unknown) => Promise<void>][] = [
      ['rhema.ask', () => ask(this)],
      // Also the server's code action "Rhema: edit selection", with one `{uri, range}` argument.
      ['rhema.editSelection', (arg) => editSelection(this, arg)],
      // The server's code action "Rhema: explain selection" names `rhema.turn` with a turn's
      // arguments; served here so it streams into the panel like "Rhema: Ask" (the client's own
      // ExecuteCommand feature, which would register it, is dropped: see client.ts).
      ['rhema.turn', (arg) => turnFromCodeAction(this, arg)],
      ['rhema.runStep', () => step(this)],
      ['rhema.cancelRun', () => this.cancel()],
      ['rhema.openSession', () => this.openSession()],
      ['rhema.newSession', () => this.newSession()],
      ['rhema.undoLastTurn', () => undoLastTurn(this)],
      ['rhema.rewindTo', () => rewindTo(this)],
      ['rhema.showChanges', () => showSessionChanges(this)],
      ['rhema.compactSession', () => compactSession(this)],
      ['rhema.showStatus', () => this.showStatus()],
      ['rhema.restartServer', () => this.restart()],
      ['rhema.mcpServers', () => pickMcpServer(this)],
      ['rhema.restartMcpServer', () => pickMcpServer(this)],
      ['rhema.openChat', () => this.chat.view.focus()],
    ];
    for (const [id, handler] of commands) {
      this.disposables.push(
        vscode.commands.registerCommand(id, (arg?: unknown) => this.guard(() => handler(arg))),
      );
    }
    this.disposables.push(this.chat.register());
    this.disposables.push(...registerWorktrees(this, (work) => this.guard(work)));
    this.disposables.push(registerInlineCompletion(() => this.client));
    this.disposables.push(new NextEdits(() => this.client), new InlineToggle());
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(CHECKPOINT_SCHEME, new CheckpointContent(() => this.start())),
      vscode.workspace.registerTextDocumentContentProvider(STATUS_SCHEME, this.statusDocument),
      this.statusDocument,
    );
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((change) => {
        if (change.affectsConfiguration('rhema.server')) {
          void this.guard(() => this.restart());
        } else if (change.affectsConfiguration('rhema') && this.client?.isRunning()) {
          if (change.affectsConfiguration('rhema.mode')) this.chat.followModeSetting();
          void notifySettingsChanged(this.client, (problem) => this.problem(problem));
          if (PROVIDER_SETTINGS.some((key) => change.affectsConfiguration(key))) {
            setTimeout(() => void this.chat.refreshSetup(), 300);
          }
        }
      }),
    );
  }

  // ----- server lifecycle -----

  async start(): Promise<LanguageClient> {
    if (this.client !== undefined) {
      if (this.client.state === State.Starting) {
        await new Promise<void>((resolve) => {
          const listener = this.client?.onDidChangeState((change) => {
            if (change.newState !== State.Starting) {
              listener?.dispose();
              resolve();
            }
          });
        });
      }
      if (this.client.isRunning()) return this.client;
    }
    const client = createClient((problem) => this.problem(problem), await this.keys.env());
    this.client = client;
    this.disposables.push(
      client.onDidChangeState((change) => {
        this.status.serverState =
          change.newState === State.Running ? 'running' : change.newState === State.Starting ? 'starting' : 'stopped';
        this.refreshStatus();
        if (change.newState === State.Running) void this.chat.refreshSetup();
      }),
      client.onNotification(EVENT_METHOD, (params: RhemaEventParams) => this.runs.onEvent(params)),
      onReview(client, (waiting) =>
        this.chat.view.apply({ kind: 'approval', waiting, detail: 'review the changes in the Refactor Preview' }),
      ),
    );
    await client.start();
    // The client's own handler, plus: the chat says what waits for the user.
    client.onRequest(ShowMessageRequest.type, (params) => this.question(params));
    this.disposables.push(answerAskText(client));
    return client;
  }

  /** A question from the server (a command to run, a protected write): asked, and shown as waiting in the chat. */
  private async question(params: ShowMessageRequestParams): Promise<MessageActionItem | undefined> {
    const text = params.message.replace(/\s*\n\s*/g, ' ');
    const detail = `${text.length > 200 ? `${text.slice(0, 199)}…` : text} (answer in the notification)`;
    this.chat.view.apply({ kind: 'approval', waiting: true, detail });
    try {
      const ask =
        params.type === 1
          ? vscode.window.showErrorMessage
          : params.type === 2
            ? vscode.window.showWarningMessage
            : vscode.window.showInformationMessage;
      return await ask(params.message, ...(params.actions ?? []));
    } finally {
      this.chat.view.apply({ kind: 'approval', waiting: false });
    }
  }

  askKey(variable: string, label: string): Promise<boolean> {
    return this.keys.ask(variable, label);
  }

  async restart(): Promise<void> {
    const old = this.client;
    this.client = undefined;
    if (old !== undefined) {
      // A client whose server never started refuses to stop: it is let go all the same.
      await old.dispose().catch(() => undefined);
    }
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.dispose();
  }

  // ----- commands -----

  async cancel(): Promise<void> {
    if (this.runs.busy) {
      this.runs.cancelAll();
      return;
    }
    const client = await this.start();
    const result = await execute<{ cancelled: string[] }>(
      client,
      ServerCommand.cancel,
      dropUndefined({ session: this.status.session }),
    );
    void vscode.window.showInformationMessage(
      result.cancelled.length > 0 ? `Rhema: cancelled ${result.cancelled.length} run(s).` : 'Rhema: nothing is running.',
    );
  }

  private async openSession(): Promise<void> {
    const picked = await pickSession(this, editorContext().folder);
    if (picked !== undefined) await this.openSessionById(picked, true);
  }

  /** "Rhema: Show Status": the status in its own tab and the channel; with no provider working, the chat's setup card. */
  private async showStatus(): Promise<void> {
    const status = await showStatus(this);
    await this.statusDocument.show(statusReport(status, this.session));
    if (status.provider.error) {
      await this.chat.view.focus();
      await this.chat.refreshSetup();
    }
  }

  /**
   * Make `session` the current one: its history into the channel and the chat view;
   * `reveal` (the palette's picker) shows the chat.
   */
  async openSessionById(session: string, reveal = false): Promise<void> {
    const client = await this.start();
    const opened = await execute<OpenSessionResult>(client, ServerCommand.openSession, { session });
    this.setSession(opened.session);
    this.runs.forget();
    const shown = this.chat.showSession(opened);
    this.output.appendLine(`▶ Session: ${opened.title || opened.session}`);
    for (const line of transcriptLines(opened.messages)) this.output.appendLine(line);
    if (opened.resumed.rerun.length > 0 || opened.resumed.interrupted.length > 0) {
      this.output.appendLine(
        `(resumed: ${opened.resumed.rerun.length} call(s) re-run, ${opened.resumed.interrupted.length} interrupted)`,
      );
    }
    this.refreshStatus();
    if (reveal) await this.chat.view.focus();
    await shown;
  }

  /** The current session in the chat again, as the store has it now (after a rewind), and `notice`. */
  async redrawChat(notice: string): Promise<void> {
    const session = this.status.session;
    if (session === undefined) return;
    const opened = await execute<OpenSessionResult>(await this.start(), ServerCommand.openSession, { session });
    await this.chat.showSession(opened);
    this.chat.view.apply({ kind: 'notice', text: notice });
  }

  newSession(): Promise<void> {
    this.setSession(undefined);
    this.runs.forget();
    void this.chat.showSession(undefined);
    this.output.appendLine('▶ New session');
    this.refreshStatus();
    return Promise.resolve();
  }

  /** The current session (none: the next run starts one); remembered for the next window. */
  get session(): string | undefined {
    return this.status.session;
  }

  /** Make `session` the current one, remembered for the next window. */
  setSession(session: string | undefined): void {
    this.status.session = session;
    void this.context.workspaceState.update('rhema.chat.session', session);
  }

  /** Run the last failed chat run again (see `Runs.retry`). */
  retry(): Promise<void> {
    return this.runs.retry();
  }

  /**
   * Send a prompt typed in the chat view as a turn of the current session.
   * Throws `NotSent` when it could not be sent (the view puts it back into the input).
   */
  /** A chat prompt on the current session; `mode`: this turn's mode instead of `rhema.mode` ("Run this plan"). */
  async chatTurn(
    prompt: string,
    context: ContextItem[],
    mentions: string[],
    mode?: Mode,
    images: ImageArg[] = [],
  ): Promise<void> {
    const folder =
      (context[0] ? vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(context[0].uri)) : undefined) ??
      vscode.workspace.workspaceFolders?.[0];
    await this.runs.run(
      'Chat',
      prompt,
      (client, token, workDone) =>
        execute<TurnResult>(
          client,
          ServerCommand.turn,
          dropUndefined({
            prompt,
            folder: folder?.uri.toString(),
            session: this.status.session,
            context: context.length > 0 ? context : undefined,
            mode,
            images: images.length > 0 ? images : undefined,
          }),
          token,
          workDone,
        ),
      { fromChat: true, mentions },
    );
  }

  refreshStatus(): void {
    const { text, tooltip } = statusText(this.status);
    this.statusItem.text = text;
    this.statusItem.tooltip = tooltip;
  }

  private problem(message: string): void {
    this.output.appendLine(`⚠ ${message}`);
    void vscode.window.showWarningMessage(`Rhema: ${message}`);
  }

  private async guard(handler: () => Promise<void>): Promise<void> {
    try {
      await handler();
    } catch (error) {
      const message = errorMessage(error);
      this.output.appendLine(`✖ ${message}`);
      void vscode.window.showErrorMessage(`Rhema: ${message}`);
    }
  }
}

let rhema: Rhema | undefined;

export function activate(context: vscode.ExtensionContext): void {
  rhema = new Rhema(context);
  rhema.register();
  context.subscriptions.push(rhema);
  void rhema.start().catch((error: unknown) => {
    const message = errorMessage(error);
    void vscode.window.showErrorMessage(
      `Rhema: the server did not start (${message}). Set "rhema.server.command" or install rhema-lsp.`,
    );
  });
}

export async function deactivate(): Promise<void> {
  await rhema?.stop();
  rhema = undefined;
}
