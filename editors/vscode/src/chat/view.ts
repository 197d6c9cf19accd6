/**
 * The Rhema chat view: a webview view (one per window, in its own activity
 * bar container; the user can move it like any view) showing the current
 * session's transcript, with the input, the session picker, the mode
 * picker, the provider and the meter, and the setup card while no provider works.
 *
 * The view owns no state of its own: the extension keeps the transcript
 * (`transcript.ts`) and posts each action to the webview, or the whole state
 * when the webview is (re)created. The webview's HTML loads only the bundled
 * `dist/webview.js` and `dist/webview.css` under a strict Content-Security-
 * Policy (no inline script or style but the nonce'd script, no remote
 * resources); Markdown is rendered there without raw HTML.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { ImageArg, McpPromptInfo, McpResourceInfo, SessionSummary } from '../contract';
import type { Action, FromView, Mode, SetupState, ToView, TranscriptState } from './messages';
import { apply, emptyState, withoutLastPrompt } from './transcript';

export const CHAT_VIEW_ID = 'rhema.chat';

/** What the view asks of the extension. */
export interface ChatHost {
  send(text: string, images?: ImageArg[]): Promise<void>;
  stop(): Promise<void>;
  sessions(): Promise<SessionSummary[]>;
  newSession(): Promise<void>;
  openSession(session: string): Promise<void>;
  deleteSession(session: string): Promise<void>;
  /** Restore the session shown before the window reloaded. */
  restore(): Promise<void>;
  /** The other buttons (files, diffs, decisions, clipboard). */
  handle(message: FromView): Promise<void>;
}

export class ChatView implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private state: TranscriptState = emptyState();
  private setupState: SetupState | undefined;
  private provider = '';
  private modeShown: { mode: Mode; modes: readonly Mode[] } | undefined;
  private focusWanted = false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly host: ChatHost,
    private readonly onError: (error: unknown) => void,
  ) {}

  get transcript(): TranscriptState {
    return this.state;
  }

  dispose(): void {
    for (const disposable of this.disposables) disposable.dispose();
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.html = this.html(view.webview, dist);
    this.disposables.push(
      view.webview.onDidReceiveMessage((message: FromView) => void this.receive(message)),
      view.onDidDispose(() => {
        if (this.view === view) this.view = undefined;
      }),
    );
  }

  /** Apply an action to the transcript and show it. */
  apply(action: Action): void {
    apply(this.state, action);
    this.post({ type: 'action', action, at: Date.now() });
  }

  /** Replace the transcript (another session). */
  reset(state: TranscriptState): void {
    this.state = state;
    this.post({ type: 'reset', state });
  }

  /** Take the last prompt and what followed it out (its retry sends it again), and show the rest. */
  retractLastPrompt(): void {
    withoutLastPrompt(this.state);
    this.post({ type: 'reset', state: this.state });
  }

  /** Show `mode` in the bar's mode picker, with its choices. */
  mode(mode: Mode, modes: readonly Mode[]): void {
    this.modeShown = { mode, modes };
    this.post({ type: 'mode', mode, modes });
  }

  /** Show the setup card (none: hide it), and the provider line of the bar. */
  setup(state: SetupState | undefined, provider: string): void {
    this.setupState = state;
    this.provider = provider;
    this.post({ type: 'setup', state, provider });
  }

  /** A prompt that could not be sent: back into the input, with the error. */
  sendFailed(text: string, message: string): void {
    this.post({ type: 'sendFailed', text, message });
  }

  /** The slash commands (the MCP servers' prompts) for the input's completion. */
  prompts(prompts: McpPromptInfo[], error?: string): void {
    this.post({ type: 'prompts', prompts, ...(error === undefined ? {} : { error }) });
  }

  /** The MCP servers' resources for the input's `@` completion (`error`: servers that failed). */
  resources(resources: McpResourceInfo[], error?: string): void {
    this.post({ type: 'resources', resources, ...(error === undefined ? {} : { error }) });
  }

  /** Whether the view is on screen. */
  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /** Reveal the view and put the caret in its input (once its script is ready, if it is new). */
  async focus(): Promise<void> {
    this.focusWanted = true;
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
    if (this.view !== undefined) this.post({ type: 'focusInput' });
  }

  private post(message: ToView): void {
    void this.view?.webview.postMessage(message);
  }

  private async receive(message: FromView): Promise<void> {
    try {
      switch (message.type) {
        case 'ready':
          this.post({ type: 'reset', state: this.state });
          this.post({ type: 'setup', state: this.setupState, provider: this.provider });
          if (this.modeShown !== undefined) this.post({ type: 'mode', ...this.modeShown });
          if (this.focusWanted) this.post({ type: 'focusInput' });
          if (this.state.items.length === 0) await this.host.restore();
          return;
        case 'send':
          try {
            await this.host.send(message.text, message.images);
          } catch (error) {
            this.sendFailed(message.text, error instanceof Error ? error.message : String(error));
          }
          return;
        case 'stop':
          await this.host.stop();
          return;
        case 'listSessions':
          this.post({ type: 'sessions', sessions: await this.host.sessions(), current: this.state.session });
          return;
        case 'newSession':
          await this.host.newSession();
          return;
        case 'openSession':
          await this.host.openSession(message.session);
          return;
        case 'deleteSession':
          await this.host.deleteSession(message.session);
          this.post({ type: 'sessions', sessions: await this.host.sessions(), current: this.state.session });
          return;
        default:
          await this.host.handle(message);
      }
    } catch (error) {
      this.onError(error);
    }
  }

  private html(webview: vscode.Webview, dist: vscode.Uri): string {
    const nonce = randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css'));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} data:`,
      `script-src 'nonce-${nonce}'`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style.toString()}">
<title>Rhema</title>
</head>
<body>
<header id="bar">
  <div class="row">
    <select id="sessions" title="Sessions" aria-label="Session"></select>
    <button id="new" title="New session" aria-label="New session">New</button>
    <button id="delete" title="Delete this session" aria-label="Delete session">Delete</button>
  </div>
  <div class="row">
    <select id="mode" title="The mode of the next prompts (rhema.mode until you pick one here)" aria-label="Mode"></select>
    <span id="provider" title="The model provider (rhema.provider, rhema.model)"></span>
    <span id="meter" title="Tokens of this run, and the context window's fill"></span>
  </div>
</header>
<section id="setup" aria-label="Set up a model provider" hidden></section>
<main id="transcript" aria-live="polite"></main>
<div id="working" role="status" hidden></div>
<footer id="composer">
  <div id="completions" role="listbox" hidden></div>
  <div id="send-error" role="alert" hidden></div>
  <div id="attachments" aria-label="Images attached to the prompt" hidden></div>
  <textarea id="input" rows="3" placeholder="Ask Rhema… (@file, @selection, @problems; paste or drop an image, / for the MCP servers' prompts; Enter to send, Shift+Enter for a new line, ↑/↓ history)" aria-label="Prompt"></textarea>
  <div id="actions"><button id="send">Send</button><button id="stop" hidden>Stop</button></div>
</footer>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
  }
}
