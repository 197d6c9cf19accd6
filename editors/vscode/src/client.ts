/**
 * The language client: starts `rhema-lsp` over stdio and speaks the editor
 * contract.
 *
 * Contract: the client never registers the server's `workspace/executeCommand`
 * ids as VS Code commands (the built-in feature would, and its commands send
 * no cancellation token); the extension calls them through `execute`, which
 * sends `workspace/executeCommand` with the caller's token so a cancel reaches
 * the server as `$/cancelRequest`. Settings go out as `initializationOptions`,
 * as the `rhema` section of `workspace/configuration`, and in
 * `workspace/didChangeConfiguration` when they change.
 */
import * as vscode from 'vscode';
import {
  type ApplyWorkspaceEditParams,
  type ApplyWorkspaceEditResult,
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  type DynamicFeature,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
  TransportKind,
} from 'vscode-languageclient/node';
import type { DeclaredCapabilities } from './contract';
import { answerLanguage } from './language';
import type { ServerCommandId } from './protocol';
import {
  readServerSettings,
  serverLaunch,
  userInterpreter,
  userOnly,
  type ServerSettings,
  type SettingGetter,
} from './settings';

/** A LanguageClient without the built-in ExecuteCommand feature, that says when a review waits. */
class RhemaLanguageClient extends LanguageClient {
  /** Told `true` when an edit that needs the user's confirmation (review mode) is shown, `false` when it is done. */
  reviewListeners = new Set<(waiting: boolean) => void>();

  constructor(...args: ConstructorParameters<typeof LanguageClient>) {
    super(...args);
    // vscode-languageclient 9.0.1 (pinned) answers `workspace/applyEdit` with its
    // `handleApplyWorkspaceEdit`, called through the instance at each request and not
    // offered as middleware: wrapped here, the edit is still applied by VS Code itself.
    const self = this as unknown as { handleApplyWorkspaceEdit: Apply };
    const apply = self.handleApplyWorkspaceEdit.bind(this);
    self.handleApplyWorkspaceEdit = async (params) => {
      if (!needsConfirmation(params)) return apply(params);
      for (const listener of this.reviewListeners) listener(true);
      try {
        return await apply(params);
      } finally {
        for (const listener of this.reviewListeners) listener(false);
      }
    };
  }

  override registerFeature(feature: StaticFeature | DynamicFeature<unknown>): void {
    const method = (feature as Partial<DynamicFeature<unknown>>).registrationType?.method;
    if (method === ExecuteCommandRequest.method) {
      return;
    }
    super.registerFeature(feature);
  }
}

type Apply = (params: ApplyWorkspaceEditParams) => Promise<ApplyWorkspaceEditResult>;

function needsConfirmation(params: ApplyWorkspaceEditParams): boolean {
  return Object.values(params.edit.changeAnnotations ?? {}).some((annotation) => annotation.needsConfirmation === true);
}

/** Listen for reviews (edits shown for confirmation) on a client `createClient` made. */
export function onReview(client: LanguageClient, listener: (waiting: boolean) => void): vscode.Disposable {
  const listeners = (client as RhemaLanguageClient).reviewListeners;
  listeners.add(listener);
  return new vscode.Disposable(() => listeners.delete(listener));
}

/** The `rhema.*` server settings now, reporting invalid ones once per change. */
export function currentServerSettings(report?: (problem: string) => void): ServerSettings {
  const { settings, problems } = readServerSettings(rhemaSettings());
  for (const problem of problems) {
    report?.(problem);
  }
  return settings;
}

/** The `rhema.*` settings, the `USER_ONLY` ones from the user's settings only. */
function rhemaSettings(): SettingGetter {
  const config = vscode.workspace.getConfiguration('rhema');
  return userOnly(
    (key) => config.get(key),
    (key) => config.inspect(key),
  );
}

function pythonFromPythonExtension(): string | undefined {
  return userInterpreter(vscode.workspace.getConfiguration('python').inspect('defaultInterpreterPath'));
}

/**
 * What this client implements: it renders `rhema/event`, implements `rhema.editSelection`,
 * answers `rhema/language` from VS Code's language features (./language) and `rhema/askText` (mcp.ts).
 */
const DECLARED: DeclaredCapabilities = { events: true, editSelection: true, language: true, askText: true };

/** Create (not start) the client for the current settings; `keys`: API keys added to the server's environment. */
export function createClient(onProblem: (problem: string) => void, keys: Record<string, string> = {}): LanguageClient {
  const launch = serverLaunch(rhemaSettings(), pythonFromPythonExtension());
  const serverOptions: ServerOptions = {
    command: launch.command,
    args: launch.args,
    transport: TransportKind.stdio,
    ...(Object.keys(keys).length > 0 ? { options: { env: { ...process.env, ...keys } } } : {}),
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    // clientCapabilities: see DECLARED (docs/protocol.md, "Clients without a rhema plugin").
    initializationOptions: {
      ...currentServerSettings(onProblem),
      clientCapabilities: DECLARED,
    },
    middleware: {
      workspace: {
        configuration: async (params, token, next) => {
          const answer = await next(params, token);
          if (!Array.isArray(answer)) {
            return answer;
          }
          return params.items.map((item, index): unknown =>
            item.section === 'rhema' ? currentServerSettings() : answer[index],
          );
        },
      },
    },
  };
  const client = new RhemaLanguageClient('rhema', 'Rhema Server', serverOptions, clientOptions);
  answerLanguage(client);
  return client;
}

/** Tell a running server that the `rhema` settings changed. */
export async function notifySettingsChanged(client: LanguageClient, onProblem: (problem: string) => void): Promise<void> {
  await client.sendNotification(DidChangeConfigurationNotification.type, {
    settings: { rhema: currentServerSettings(onProblem) },
  });
}

/**
 * Run one server command with a cancellation token (cancel sends `$/cancelRequest`).
 *
 * @param workDoneToken a progress token the server reports `$/progress` on
 */
export async function execute<R>(
  client: LanguageClient,
  command: ServerCommandId,
  args: object,
  token?: vscode.CancellationToken,
  workDoneToken?: string,
): Promise<R> {
  const params = workDoneToken === undefined ? { command, arguments: [args] } : { command, arguments: [args], workDoneToken };
  return (await client.sendRequest(ExecuteCommandRequest.type, params, token)) as R;
}
