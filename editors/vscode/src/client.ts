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
import type { ServerCommandId } from './protocol';
import { readServerSettings, serverLaunch, type ServerSettings } from './settings';

/** A LanguageClient without the built-in ExecuteCommand feature. */
class RhemaLanguageClient extends LanguageClient {
  override registerFeature(feature: StaticFeature | DynamicFeature<unknown>): void {
    const method = (feature as Partial<DynamicFeature<unknown>>).registrationType?.method;
    if (method === ExecuteCommandRequest.method) {
      return;
    }
    super.registerFeature(feature);
  }
}

/** The `rhema.*` server settings now, reporting invalid ones once per change. */
export function currentServerSettings(report?: (problem: string) => void): ServerSettings {
  const config = vscode.workspace.getConfiguration('rhema');
  const { settings, problems } = readServerSettings((key) => config.get(key));
  for (const problem of problems) {
    report?.(problem);
  }
  return settings;
}

function pythonFromPythonExtension(): string | undefined {
  const value = vscode.workspace.getConfiguration('python').get<unknown>('defaultInterpreterPath');
  // The Python extension's default is the bare word "python": only a real path is a choice.
  return typeof value === 'string' && value.includes('/') ? value : undefined;
}

/** Create (not start) the client for the current settings. */
/** What this client implements: it renders `rhema/event` and `rhema.editSelection`. */
const DECLARED: DeclaredCapabilities = { events: true, editSelection: true };

export function createClient(onProblem: (problem: string) => void): LanguageClient {
  const config = vscode.workspace.getConfiguration('rhema');
  const launch = serverLaunch((key) => config.get(key), pythonFromPythonExtension());
  const serverOptions: ServerOptions = {
    command: launch.command,
    args: launch.args,
    transport: TransportKind.stdio,
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    // clientCapabilities: this client renders `rhema/event` and implements
    // `rhema.editSelection` (docs/protocol.md, "Clients without a rhema plugin").
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
  return new RhemaLanguageClient('rhema', 'Rhema Server', serverOptions, clientOptions);
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
