/**
 * The runs of this window: each turn, step or selection edit sent with its
 * own cancellation and work-done tokens, its events rendered into the
 * "Rhema" channel (`RunRenderer`) and, for the current session, the chat.
 *
 * Rules: a run that cannot start (the server did not start) throws
 * `NotSent`, so the chat puts the prompt back into its input; a chat run's
 * failure shows in the chat, is remembered for Retry (the prompt again when
 * the server never took it, else the same turn continued with `rhema.step`
 * until it stops for something other than its tools), and asks whether a
 * provider works now (the setup card). Runs from the chat report progress
 * through the one status bar item; the others also show a cancellable
 * notification. While a turn runs, each file tool's result lists the turn's
 * changed files again, so the chat's card grows live.
 */
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { WorkDoneProgress, type LanguageClient } from 'vscode-languageclient/node';
import { changedFiles } from './calls';
import type { ChatSide } from './chat/host';
import { execute } from './client';
import { ServerCommand, type RhemaEventParams, type StepResult, type Usage } from './protocol';
import { RunRenderer } from './render';
import type { StatusState } from './status';

interface ActiveRun {
  renderer: RunRenderer;
  cancel: vscode.CancellationTokenSource;
  session?: string;
  /** The server started a step: the prompt is in the session (a retry continues it). */
  promptStored: boolean;
}

export type Send = (
  client: LanguageClient,
  token: vscode.CancellationToken,
  workDoneToken: string,
) => Promise<{ session: string; turn?: number; stopReason?: string; usage?: Usage; steps?: number }>;

/** How a run shows: in the chat (progress in the status bar, errors in the chat), or in place (a notification). */
export interface RunOptions {
  fromChat?: boolean;
  mentions?: string[];
  /** A retry that continues the session's turn: no new prompt. */
  resume?: boolean;
}

/** A failed chat run, for Retry. */
interface Failed {
  title: string;
  prompt: string;
  send: Send;
  options: RunOptions;
  session?: string;
  promptStored: boolean;
}

/** The server did not start: nothing was sent. */
export class NotSent extends Error {}

/** Steps a retried turn may take (the server's default turn limit). */
const RETRY_STEPS = 25;

/** What the runs need of the extension. */
export interface RunHost {
  readonly output: vscode.OutputChannel;
  readonly chat: ChatSide;
  /** What the status bar shows; the runs keep `running`, `activity`, `usage` and `context`. */
  readonly status: StatusState;
  start(): Promise<LanguageClient>;
  setSession(session: string | undefined): void;
  refreshStatus(): void;
}

export class Runs {
  private readonly runs = new Set<ActiveRun>();
  /** Renderers by session, for events of runs this window did not start. */
  private readonly foreign = new Map<string, RunRenderer>();
  private sessionUsage: Usage = { input: 0, output: 0 };
  private failed: Failed | undefined;

  constructor(private readonly host: RunHost) {}

  /** Whether a run is under way. */
  get busy(): boolean {
    return this.runs.size > 0;
  }

  /** Cancel every run of this window. */
  cancelAll(): void {
    for (const run of this.runs) run.cancel.cancel();
  }

  /** Another session is shown: its usage starts at nothing, and nothing of the last is retried. */
  forget(): void {
    this.failed = undefined;
    this.sessionUsage = { input: 0, output: 0 };
    this.host.status.usage = this.sessionUsage;
    this.host.status.context = undefined;
  }

  /** Run in the chat; a prompt that could not be sent goes back into the chat's input. */
  async inChat(title: string, prompt: string, mentions: string[], send: Send): Promise<void> {
    try {
      await this.run(title, prompt, send, { fromChat: true, mentions });
    } catch (error) {
      if (!(error instanceof NotSent)) throw error;
      this.host.chat.view.sendFailed(prompt, error.message);
    }
  }

  /**
   * Run the last failed chat run again: its prompt again when the server never took it, else its
   * turn continued (`rhema.step` until it stops for something other than its tools).
   */
  async retry(): Promise<void> {
    const failed = this.failed;
    if (failed === undefined || this.runs.size > 0) return;
    if (!failed.promptStored || failed.session === undefined) {
      // Sent again: the failed attempt's prompt and error go, the new attempt shows in their place.
      this.host.chat.view.retractLastPrompt();
      await this.inChat(failed.title, failed.prompt, failed.options.mentions ?? [], failed.send);
      return;
    }
    const session = failed.session;
    const send: Send = async (client, token, workDone) => {
      let result: StepResult;
      let steps = 0;
      do {
        result = await execute<StepResult>(client, ServerCommand.step, { session }, token, workDone);
        steps += 1;
      } while (result.stopReason === 'tool_use' && steps < RETRY_STEPS && !token.isCancellationRequested);
      return { ...result, steps };
    };
    try {
      await this.run('Retry', failed.prompt, send, { fromChat: true, resume: true });
    } catch (error) {
      if (!(error instanceof NotSent)) throw error;
      void vscode.window.showErrorMessage(`Rhema: ${error.message}`);
    }
  }

  // ----- runs and events -----

  async run(title: string, prompt: string, send: Send, options: RunOptions = {}): Promise<void> {
    let client: LanguageClient;
    try {
      client = await this.host.start();
    } catch (error) {
      throw new NotSent(`the Rhema server did not start (${errorMessage(error)}); check rhema.server.command or install rhema-lsp`);
    }
    const run: ActiveRun = {
      renderer: new RunRenderer(this.host.output),
      cancel: new vscode.CancellationTokenSource(),
      session: this.host.status.session,
      promptStored: false,
    };
    this.runs.add(run);
    this.failed = undefined;
    run.renderer.begin(`${title}: ${prompt}`);
    if (options.resume) this.host.chat.view.apply({ kind: 'resume' });
    else this.host.chat.view.apply({ kind: 'prompt', text: prompt, mentions: options.mentions ?? [] });
    this.setRunning();
    const workDoneToken = randomUUID();
    let finished: { session: string; turn?: number } | undefined;
    let stopReason: string | undefined;
    const attempt = async (report: (message: string) => void): Promise<void> => {
      const reports = client.onProgress(WorkDoneProgress.type, workDoneToken, (value) => {
        if (value.message) {
          report(value.message);
          this.host.status.activity = value.message;
          this.host.refreshStatus();
        }
      });
      try {
        const result = await send(client, run.cancel.token, workDoneToken);
        run.session = result.session;
        this.host.setSession(result.session);
        finished = result;
        stopReason = result.stopReason;
        if (result.stopReason !== undefined && result.usage !== undefined) {
          run.renderer.finish({ stopReason: result.stopReason, usage: result.usage, steps: result.steps });
          this.host.chat.view.apply({ kind: 'end', stopReason: result.stopReason, usage: result.usage, steps: result.steps });
        } else if (!run.renderer.isClosed) {
          run.renderer.finish({ stopReason: 'done', usage: run.renderer.usage });
          this.host.chat.view.apply({ kind: 'end', stopReason: 'done', usage: run.renderer.usage });
        }
      } finally {
        reports.dispose();
      }
    };
    try {
      if (options.fromChat) {
        await attempt(() => undefined);
      } else {
        await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: 'Rhema', cancellable: true },
          async (progress, progressToken) => {
            const link = progressToken.onCancellationRequested(() => run.cancel.cancel());
            try {
              await attempt((message) => progress.report({ message }));
            } finally {
              link.dispose();
            }
          },
        );
      }
    } catch (error) {
      const message = run.cancel.token.isCancellationRequested ? 'cancelled' : errorMessage(error);
      run.renderer.fail(message);
      this.host.chat.view.apply({ kind: 'failed', message });
      stopReason = run.cancel.token.isCancellationRequested ? 'cancelled' : 'error';
      if (!run.cancel.token.isCancellationRequested && !options.fromChat) throw error;
    } finally {
      this.sessionUsage = addUsage(this.sessionUsage, run.renderer.usage);
      this.runs.delete(run);
      run.cancel.dispose();
      this.setRunning();
      if (stopReason === 'error' && options.fromChat) {
        this.failed = { title, prompt, send, options, session: run.session, promptStored: run.promptStored };
        // No provider, or a broken one: the setup card says what to choose.
        void this.host.chat.refreshSetup();
      }
    }
    if (finished?.turn !== undefined) await this.host.chat.listChanges(finished.session, finished.turn);
  }

  onEvent(params: RhemaEventParams): void {
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
        renderer = new RunRenderer(this.host.output);
        renderer.begin(`Session ${params.session}, turn ${params.turn}`);
        this.foreign.set(params.session, renderer);
      }
    }
    const own = [...this.runs].find((run) => run.session === params.session);
    if (own !== undefined && params.event.type === 'step_start') own.promptStored = true;
    // The chat view first: its text is what the user watches.
    if (params.session === this.host.status.session || own !== undefined) {
      this.host.chat.view.apply({ kind: 'event', event: params.event });
      const event = params.event;
      if (changedFiles(event)) {
        // The changed-files card grows while the turn runs.
        void this.host.chat.listChanges(params.session, params.turn, true);
      }
    }
    renderer.event(params.event);
    if (params.event.type === 'context' && (params.session === this.host.status.session || this.host.status.session === undefined)) {
      this.host.status.context = renderer.contextFill;
      this.host.refreshStatus();
    }
    if (params.session === this.host.status.session || this.runs.size > 0) {
      const running = [...this.runs].reduce<Usage>((sum, run) => addUsage(sum, run.renderer.usage), {
        input: 0,
        output: 0,
      });
      this.host.status.usage = addUsage(this.sessionUsage, running);
      this.host.refreshStatus();
    }
  }

  private setRunning(): void {
    this.host.status.running = this.runs.size > 0;
    if (!this.host.status.running) {
      this.host.status.activity = undefined;
      this.host.status.usage = this.sessionUsage;
    }
    void vscode.commands.executeCommand('setContext', 'rhema.running', this.host.status.running);
    this.host.refreshStatus();
  }

}

function addUsage(a: Usage, b: Usage): Usage {
  return { input: a.input + b.input, output: a.output + b.output };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
