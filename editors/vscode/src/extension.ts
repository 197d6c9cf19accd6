/**
 * The Rhema extension: palette and context-menu commands over the editor
 * contract, the "Rhema" output channel, a status bar item and cancellable
 * progress notifications.
 *
 * Every run (turn, step, selection edit) is sent with its own cancellation
 * token and work-done token: the notification's Cancel button and "Rhema:
 * Cancel" cancel that token, which the client turns into `$/cancelRequest`.
 * `rhema/event` notifications are rendered into the channel by `RunRenderer`,
 * and the current session's also into the chat view (`chat/`), which sends
 * its own prompts through the same runs.
 * Edits arrive as `workspace/applyEdit` and are applied by VS Code itself.
 */
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { State, WorkDoneProgress, type LanguageClient } from 'vscode-languageclient/node';
import { CHECKPOINT_SCHEME, CheckpointContent, rewind, saveDocuments, showChanges } from './checkpoints';
import { createClient, execute, notifySettingsChanged } from './client';
import {
  asEditTarget,
  asTurnArgs,
  type CompactResult,
  EVENT_METHOD,
  ServerCommand,
  statusSummary,
  type ContextItem,
  type EditArgs,
  type EditResult,
  type OpenSessionResult,
  type Range,
  type RhemaEventParams,
  type SessionSummary,
  type StatusResult,
  type StepResult,
  type TurnResult,
  type UndoResult,
  type UndoTurnArgs,
  type Usage,
} from './protocol';
import { ERROR_GLYPH, RunRenderer, transcriptLines } from './render';
import { statusText, type StatusState } from './status';
import { ChatSide } from './chat/host';

interface ActiveRun {
  renderer: RunRenderer;
  cancel: vscode.CancellationTokenSource;
  session?: string;
}

/** How a run shows: started from the chat view (no channel focus, progress in the status bar). */
interface RunOptions {
  fromChat?: boolean;
  mentions?: string[];
}

export class Rhema implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly output = vscode.window.createOutputChannel('Rhema');
  private readonly statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  private readonly runs = new Set<ActiveRun>();
  /** Renderers by session, for events of runs this window did not start. */
  private readonly foreign = new Map<string, RunRenderer>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly state: StatusState = { running: false, usage: { input: 0, output: 0 }, serverState: 'stopped' };
  private sessionUsage: Usage = { input: 0, output: 0 };
  readonly chat: ChatSide;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.chat = new ChatSide(this, context);
    this.statusItem.command = 'rhema.showStatus';
    this.statusItem.name = 'Rhema';
    this.refreshStatus();
    this.statusItem.show();
  }

  dispose(): void {
    for (const run of this.runs) run.cancel.cancel();
    for (const disposable of this.disposables) disposable.dispose();
    this.chat.dispose();
    this.statusItem.dispose();
    this.output.dispose();
  }

  register(): void {
    const commands: [string, (arg?: unknown) => Promise<void>][] = [
      ['rhema.ask', () => this.ask()],
      // Also the server's code action "Rhema: edit selection", with one `{uri, range}` argument.
      ['rhema.editSelection', (arg) => this.editSelection(arg)],
      // The server's code action "Rhema: explain selection" names `rhema.turn` with a turn's
      // arguments; served here so it streams into the panel like "Rhema: Ask" (the client's own
      // ExecuteCommand feature, which would register it, is dropped: see client.ts).
      ['rhema.turn', (arg) => this.turnFromCodeAction(arg)],
      ['rhema.runStep', () => this.step()],
      ['rhema.cancelRun', () => this.cancel()],
      ['rhema.openSession', () => this.openSession()],
      ['rhema.newSession', () => this.newSession()],
      ['rhema.undoLastTurn', () => this.undoLastTurn()],
      ['rhema.rewindTo', () => this.rewindTo()],
      ['rhema.showChanges', () => this.showChanges()],
      ['rhema.compactSession', () => this.compactSession()],
      ['rhema.showStatus', () => this.showStatus()],
      ['rhema.restartServer', () => this.restart()],
      ['rhema.openChat', () => this.chat.view.focus()],
    ];
    for (const [id, handler] of commands) {
      this.disposables.push(
        vscode.commands.registerCommand(id, (arg?: unknown) => this.guard(() => handler(arg))),
      );
    }
    this.disposables.push(this.chat.register());
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(CHECKPOINT_SCHEME, new CheckpointContent(() => this.start())),
    );
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((change) => {
        if (change.affectsConfiguration('rhema.server')) {
          void this.guard(() => this.restart());
        } else if (change.affectsConfiguration('rhema') && this.client?.isRunning()) {
          void notifySettingsChanged(this.client, (problem) => this.problem(problem));
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
    const client = createClient((problem) => this.problem(problem));
    this.client = client;
    this.disposables.push(
      client.onDidChangeState((change) => {
        this.state.serverState =
          change.newState === State.Running ? 'running' : change.newState === State.Starting ? 'starting' : 'stopped';
        this.refreshStatus();
      }),
      client.onNotification(EVENT_METHOD, (params: RhemaEventParams) => this.onEvent(params)),
    );
    await client.start();
    return client;
  }

  async restart(): Promise<void> {
    const old = this.client;
    this.client = undefined;
    if (old !== undefined) {
      await old.dispose();
    }
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.dispose();
  }

  // ----- commands -----

  private async ask(): Promise<void> {
    const prompt = await vscode.window.showInputBox({
      title: 'Rhema: Ask',
      prompt: 'What should Rhema do? The active editor and selection go along as context.',
      ignoreFocusOut: true,
    });
    if (!prompt) return;
    const { context, folder } = editorContext();
    await this.run('Ask', prompt, (client, token, workDone) =>
      execute<TurnResult>(
        client,
        ServerCommand.turn,
        dropUndefined({ prompt, folder, session: this.state.session, context }),
        token,
        workDone,
      ),
    );
  }

  private async step(): Promise<void> {
    const prompt = await vscode.window.showInputBox({
      title: 'Rhema: Step',
      prompt: 'Optional message for one exchange (empty: continue the session).',
      ignoreFocusOut: true,
    });
    if (prompt === undefined) return;
    const { context, folder } = editorContext();
    await this.run('Step', prompt || '(continue)', (client, token, workDone) =>
      execute<StepResult>(
        client,
        ServerCommand.step,
        dropUndefined({ prompt: prompt || undefined, folder, session: this.state.session, context }),
        token,
        workDone,
      ),
    );
  }

  private async turnFromCodeAction(arg: unknown): Promise<void> {
    const args = asTurnArgs(arg);
    if (args === undefined) {
      throw new Error('rhema.turn needs one argument object with a `prompt`.');
    }
    const folder = args.folder ?? editorContext().folder;
    await this.run('Ask', args.prompt, (client, token, workDone) =>
      execute<TurnResult>(
        client,
        ServerCommand.turn,
        dropUndefined({ ...args, folder, session: args.session ?? this.state.session }),
        token,
        workDone,
      ),
    );
  }

  /**
   * Rewrite a selection: `target` is the code action's `{uri, range}`; without
   * it (palette, context menu) the active editor's selection.
   */
  private async editSelection(target?: unknown): Promise<void> {
    let where = asEditTarget(target);
    if (where === undefined) {
      const editor = vscode.window.activeTextEditor;
      if (editor === undefined || editor.selection.isEmpty) {
        void vscode.window.showInformationMessage('Rhema: select the text to rewrite first.');
        return;
      }
      where = { uri: editor.document.uri.toString(), range: toRange(editor.selection) };
    }
    const instruction = await vscode.window.showInputBox({
      title: 'Rhema: Edit Selection',
      prompt: 'How should the selection change?',
      ignoreFocusOut: true,
    });
    if (!instruction) return;
    const args: EditArgs = dropUndefined({ ...where, instruction, session: this.state.session });
    await this.run('Edit selection', instruction, async (client, token, workDone) => {
      const result = await execute<EditResult>(client, ServerCommand.edit, args, token, workDone);
      if (!result.applied && result.stopReason !== 'cancelled') {
        void vscode.window.showWarningMessage(
          result.stopReason === 'end_turn'
            ? 'Rhema: the edit was not applied (the document changed meanwhile).'
            : `Rhema: the edit was not applied (${result.stopReason}).`,
        );
      }
      return result;
    });
  }

  async cancel(): Promise<void> {
    if (this.runs.size > 0) {
      for (const run of this.runs) run.cancel.cancel();
      return;
    }
    const client = await this.start();
    const result = await execute<{ cancelled: string[] }>(
      client,
      ServerCommand.cancel,
      dropUndefined({ session: this.state.session }),
    );
    void vscode.window.showInformationMessage(
      result.cancelled.length > 0 ? `Rhema: cancelled ${result.cancelled.length} run(s).` : 'Rhema: nothing is running.',
    );
  }

  private async openSession(): Promise<void> {
    const client = await this.start();
    const { folder } = editorContext();
    const sessions = await execute<SessionSummary[]>(client, ServerCommand.sessions, dropUndefined({ folder }));
    if (sessions.length === 0) {
      void vscode.window.showInformationMessage('Rhema: no sessions yet. Run "Rhema: Ask" to start one.');
      return;
    }
    const picked = await vscode.window.showQuickPick(
      sessions.map((session) => ({
        label: session.title || session.session,
        description: `${session.turns} turn${session.turns === 1 ? '' : 's'}${session.running ? ' · running' : ''}`,
        detail: `${session.updatedAt} · ${session.folder}`,
        session,
      })),
      { title: 'Rhema: Open Session', placeHolder: 'Pick a session to continue', matchOnDetail: true },
    );
    if (picked === undefined) return;
    await this.openSessionById(picked.session.session, true);
  }

  /**
   * Make `session` the current one: its history into the channel and the chat view;
   * `showChannel` (the palette's picker) brings the channel forward.
   */
  async openSessionById(session: string, showChannel = false): Promise<void> {
    const client = await this.start();
    const opened = await execute<OpenSessionResult>(client, ServerCommand.openSession, { session });
    this.setSession(opened.session);
    this.chat.showSession(opened);
    this.state.context = undefined;
    this.sessionUsage = { input: 0, output: 0 };
    this.state.usage = this.sessionUsage;
    this.output.appendLine(`▶ Session: ${opened.title || opened.session}`);
    for (const line of transcriptLines(opened.messages)) this.output.appendLine(line);
    if (opened.resumed.rerun.length > 0 || opened.resumed.interrupted.length > 0) {
      this.output.appendLine(
        `(resumed: ${opened.resumed.rerun.length} call(s) re-run, ${opened.resumed.interrupted.length} interrupted)`,
      );
    }
    if (showChannel) this.output.show(true);
    this.refreshStatus();
  }

  newSession(): Promise<void> {
    this.setSession(undefined);
    this.chat.showSession(undefined);
    this.state.context = undefined;
    this.sessionUsage = { input: 0, output: 0 };
    this.state.usage = this.sessionUsage;
    this.output.appendLine('▶ New session');
    this.refreshStatus();
    return Promise.resolve();
  }

  /** The current session (none: the next run starts one); remembered for the next window. */
  get session(): string | undefined {
    return this.state.session;
  }

  private setSession(session: string | undefined): void {
    this.state.session = session;
    void this.context.workspaceState.update('rhema.chat.session', session);
  }

  /** Send a prompt typed in the chat view as a turn of the current session. */
  async chatTurn(prompt: string, context: ContextItem[], mentions: string[]): Promise<void> {
    const folder =
      (context[0] ? vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(context[0].uri)) : undefined) ??
      vscode.workspace.workspaceFolders?.[0];
    await this.run(
      'Chat',
      prompt,
      (client, token, workDone) =>
        execute<TurnResult>(
          client,
          ServerCommand.turn,
          dropUndefined({
            prompt,
            folder: folder?.uri.toString(),
            session: this.state.session,
            context: context.length > 0 ? context : undefined,
          }),
          token,
          workDone,
        ),
      { fromChat: true, mentions },
    );
  }

  private async undoLastTurn(): Promise<void> {
    if (this.state.session === undefined) {
      void vscode.window.showInformationMessage('Rhema: no session to undo in. Open one first.');
      return;
    }
    const client = await this.start();
    const args: UndoTurnArgs = { session: this.state.session };
    const result = await execute<UndoResult>(client, ServerCommand.undoTurn, args);
    // Documents that were clean before the turn are saved, so undoing leaves them clean.
    await saveDocuments(result.save ?? []);
    this.output.appendLine(
      `↶ Undo: reverted ${result.reverted.length} file(s)${result.conflicts.length ? `, ${result.conflicts.length} conflict(s)` : ''}`,
    );
    if (result.conflicts.length > 0) {
      void vscode.window.showWarningMessage(
        `Rhema: ${result.conflicts.length} file(s) changed since the turn and were left as they are: ${result.conflicts.join(', ')}`,
      );
    } else {
      void vscode.window.showInformationMessage(`Rhema: reverted ${result.reverted.length} file(s).`);
    }
  }

  private async rewindTo(): Promise<void> {
    if (this.state.session === undefined) {
      void vscode.window.showInformationMessage('Rhema: no session to rewind. Open one first.');
      return;
    }
    await rewind(await this.start(), this.state.session, this.output);
  }

  private async showChanges(): Promise<void> {
    if (this.state.session === undefined) {
      void vscode.window.showInformationMessage('Rhema: no session. Open one first.');
      return;
    }
    await showChanges(await this.start(), this.state.session);
  }

  private async compactSession(): Promise<void> {
    if (this.state.session === undefined) {
      void vscode.window.showInformationMessage('Rhema: no session to compact. Open one first.');
      return;
    }
    const client = await this.start();
    const result = await execute<CompactResult>(client, ServerCommand.compact, { session: this.state.session });
    if (!result.compacted) {
      void vscode.window.showInformationMessage('Rhema: nothing to compact yet: only the latest round is there.');
    }
  }

  private async showStatus(): Promise<void> {
    const client = await this.start();
    const status = await execute<StatusResult>(client, ServerCommand.status, {});
    const summary = statusSummary(status);
    this.output.appendLine(`ℹ ${summary}`);
    if (status.provider.error) this.output.appendLine(`  ${ERROR_GLYPH} ${status.provider.error}`);
    if (status.provider.baseUrl) this.output.appendLine(`  base URL: ${status.provider.baseUrl}`);
    this.output.appendLine(`  folders: ${status.folders.join(', ') || '(none)'}`);
    this.output.appendLine(`  session: ${this.state.session ?? '(new)'}`);
    if (status.running.length > 0) this.output.appendLine(`  running: ${status.running.join(', ')}`);
    if (status.provider.error) {
      void vscode.window.showWarningMessage(`Rhema: no model provider: ${status.provider.error}`);
    } else {
      void vscode.window.showInformationMessage(summary);
    }
  }

  // ----- runs and events -----

  private async run(
    title: string,
    prompt: string,
    send: (
      client: LanguageClient,
      token: vscode.CancellationToken,
      workDoneToken: string,
    ) => Promise<{ session: string; turn?: number; stopReason?: string; usage?: Usage; steps?: number }>,
    options: RunOptions = {},
  ): Promise<void> {
    const client = await this.start();
    const run: ActiveRun = {
      renderer: new RunRenderer(this.output),
      cancel: new vscode.CancellationTokenSource(),
      session: this.state.session,
    };
    this.runs.add(run);
    if (!options.fromChat) this.output.show(true);
    run.renderer.begin(`${title}: ${prompt}`);
    this.chat.view.apply({ kind: 'prompt', text: prompt, mentions: options.mentions ?? [] });
    this.setRunning();
    const workDoneToken = randomUUID();
    let finished: { session: string; turn?: number } | undefined;
    try {
      await vscode.window.withProgress(
        {
          location: options.fromChat ? vscode.ProgressLocation.Window : vscode.ProgressLocation.Notification,
          title: 'Rhema',
          cancellable: !options.fromChat,
        },
        async (progress, progressToken) => {
          const link = progressToken.onCancellationRequested(() => run.cancel.cancel());
          const reports = client.onProgress(WorkDoneProgress.type, workDoneToken, (value) => {
            if (value.message) {
              progress.report({ message: value.message });
              this.state.activity = value.message;
              this.refreshStatus();
            }
          });
          try {
            const result = await send(client, run.cancel.token, workDoneToken);
            run.session = result.session;
            this.setSession(result.session);
            finished = result;
            if (result.stopReason !== undefined && result.usage !== undefined) {
              run.renderer.finish({ stopReason: result.stopReason, usage: result.usage, steps: result.steps });
              this.chat.view.apply({ kind: 'end', stopReason: result.stopReason, usage: result.usage, steps: result.steps });
            } else if (!run.renderer.isClosed) {
              run.renderer.finish({ stopReason: 'done', usage: run.renderer.usage });
              this.chat.view.apply({ kind: 'end', stopReason: 'done', usage: run.renderer.usage });
            }
          } finally {
            reports.dispose();
            link.dispose();
          }
        },
      );
    } catch (error) {
      const message = run.cancel.token.isCancellationRequested ? 'cancelled' : errorMessage(error);
      run.renderer.fail(message);
      this.chat.view.apply({ kind: 'failed', message });
      if (!run.cancel.token.isCancellationRequested) throw error;
    } finally {
      this.sessionUsage = addUsage(this.sessionUsage, run.renderer.usage);
      this.runs.delete(run);
      run.cancel.dispose();
      this.setRunning();
    }
    if (finished?.turn !== undefined) await this.chat.listChanges(finished.session, finished.turn);
  }

  private onEvent(params: RhemaEventParams): void {
    let renderer: RunRenderer | undefined;
    for (const run of this.runs) {
      if (run.session === params.session) renderer = run.renderer;
    }
    if (renderer === undefined) {
      // A new session's first event: it belongs to the run still waiting for its id.
      for (const run of this.runs) {
        if (run.session === undefined) {
          run.session = params.session;
          renderer = run.renderer;
          break;
        }
      }
    }
    if (renderer === undefined) {
      renderer = this.foreign.get(params.session);
      if (renderer === undefined || renderer.isClosed) {
        renderer = new RunRenderer(this.output);
        renderer.begin(`Session ${params.session}, turn ${params.turn}`);
        this.foreign.set(params.session, renderer);
      }
    }
    // The chat view first: its text is what the user watches.
    if (params.session === this.state.session || [...this.runs].some((run) => run.session === params.session)) {
      this.chat.view.apply({ kind: 'event', event: params.event });
    }
    renderer.event(params.event);
    if (params.event.type === 'context' && (params.session === this.state.session || this.state.session === undefined)) {
      this.state.context = renderer.contextFill;
      this.refreshStatus();
    }
    if (params.session === this.state.session || this.runs.size > 0) {
      const running = [...this.runs].reduce<Usage>((sum, run) => addUsage(sum, run.renderer.usage), {
        input: 0,
        output: 0,
      });
      this.state.usage = addUsage(this.sessionUsage, running);
      this.refreshStatus();
    }
  }

  private setRunning(): void {
    this.state.running = this.runs.size > 0;
    if (!this.state.running) {
      this.state.activity = undefined;
      this.state.usage = this.sessionUsage;
    }
    void vscode.commands.executeCommand('setContext', 'rhema.running', this.state.running);
    this.refreshStatus();
  }

  private refreshStatus(): void {
    const { text, tooltip } = statusText(this.state);
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

function addUsage(a: Usage, b: Usage): Usage {
  return { input: a.input + b.input, output: a.output + b.output };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function toRange(selection: vscode.Range): Range {
  return {
    start: { line: selection.start.line, character: selection.start.character },
    end: { line: selection.end.line, character: selection.end.character },
  };
}

/** The active editor (and its non-empty selection) as `context`, and its workspace folder. */
function editorContext(): { context?: ContextItem[]; folder?: string } {
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
function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
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
