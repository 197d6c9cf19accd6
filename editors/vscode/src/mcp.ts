/**
 * The MCP servers in VS Code.
 *
 * - "Rhema: MCP Servers…" lists every configured server with its state (a
 *   failed one with its reason, one waiting for a sign-in with its page);
 *   picking one restarts it (`rhema.mcpRestart {name}`: a failed server
 *   tried again, a sign-in asked again) and says how it came back. "Rhema:
 *   Restart MCP Server…" is the same picker.
 * - The servers' prompts are the chat's slash commands (`chat/slash.ts`):
 *   `prompts()` lists them (`rhema.mcpPrompts`, which starts the servers),
 *   `expand()` turns a `/command words…` prompt into the prompt's text
 *   (`rhema.mcpPrompt`), asking for a required argument the words did not
 *   give; dismissing that question sends nothing.
 * - Their resources are the chat's `@mcp:<server>:<uri>` mentions
 *   (`chat/mentions.ts`): `resources()` lists them (`rhema.mcpResources`).
 * - `rhema/askText` (an MCP form's free-text field) is an input box; Escape
 *   dismisses it (the server cancels the form).
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { execute } from './client';
import {
  ServerCommand,
  type McpPromptInfo,
  type McpPromptResult,
  type McpResourcesResult,
  type McpServerStatus,
  type StatusResult,
} from './contract';
import { isSlash, parseSlash } from './chat/slash';
import { mcpNeedsYou, mcpServerLine, mcpServerState } from './mcpText';

/** What the MCP commands need of the extension. */
export interface McpHost {
  start(): Promise<LanguageClient>;
  readonly output: vscode.OutputChannel;
}

/** The server's request for a line of text (docs/protocol.md, "Declared by our clients"). */
export const ASK_TEXT = 'rhema/askText';

interface AskTextParams {
  message: string;
  value?: string;
}

/** Answer `rhema/askText` with an input box; `null` when dismissed. */
export function answerAskText(client: LanguageClient): vscode.Disposable {
  return client.onRequest(ASK_TEXT, async (params: AskTextParams) => {
    const value = await vscode.window.showInputBox({
      title: `Rhema: ${params.message}`,
      prompt: 'An MCP server asks this (Escape cancels its form)',
      value: params.value ?? '',
      ignoreFocusOut: true,
    });
    return { value: value ?? null };
  });
}

/** The configured MCP servers, as `rhema.status` lists them. */
async function servers(host: McpHost): Promise<McpServerStatus[]> {
  return (await execute<StatusResult>(await host.start(), ServerCommand.status, {})).mcpServers;
}

/** "Rhema: MCP Servers…" / "Restart MCP Server…": pick a server, restart it, say how it is. */
export async function pickMcpServer(host: McpHost): Promise<void> {
  const listed = await servers(host);
  if (listed.length === 0) {
    void vscode.window.showInformationMessage(
      'Rhema: no MCP server is configured (mcpServers in ~/.config/rhema-lsp/config.json; see the README, "MCP servers").',
    );
    return;
  }
  const items = listed.map((server) => ({
    label: `${mcpNeedsYou(server) ? '$(warning)' : '$(server-process)'} ${server.name}`,
    description: mcpServerState(server, false),
    detail: server.error && server.state !== 'ready' ? server.error : undefined,
    name: server.name,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Rhema: MCP servers',
    placeHolder: 'Pick a server to restart it (a failed one is tried again, a sign-in asked again)',
    matchOnDescription: true,
  });
  if (picked === undefined) return;
  await restartMcpServer(host, picked.name);
}

/** Restart the MCP server `name` and say how it came back. */
export async function restartMcpServer(host: McpHost, name: string): Promise<McpServerStatus[]> {
  const reports = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Rhema: restarting the MCP server ${name}…` },
    async () => execute<McpServerStatus[]>(await host.start(), ServerCommand.mcpRestart, { name }),
  );
  for (const report of reports) {
    const line = `MCP server ${mcpServerLine(report)}`;
    host.output.appendLine(`ℹ ${line}`);
    if (mcpNeedsYou(report)) void vscode.window.showWarningMessage(`Rhema: ${line}`);
    else void vscode.window.showInformationMessage(`Rhema: ${line}`);
  }
  return reports;
}

/** The MCP servers' lines for the status in the channel. */
export function mcpStatusLines(status: StatusResult): string[] {
  return status.mcpServers.map((server) => `  MCP ${mcpServerLine(server)}`);
}

/** The servers' prompts as slash commands, remembered until `forget()`. */
export class SlashPrompts {
  private listed: McpPromptInfo[] | undefined;

  constructor(private readonly host: Pick<McpHost, 'start'>) {}

  /** The prompts (listed once; `fresh`: again). */
  async prompts(fresh = false): Promise<McpPromptInfo[]> {
    if (this.listed === undefined || fresh) {
      this.listed = await execute<McpPromptInfo[]>(await this.host.start(), ServerCommand.mcpPrompts, {});
    }
    return this.listed;
  }

  forget(): void {
    this.listed = undefined;
  }

  /** The servers' resources, the chat's `@mcp:` mentions (listed afresh each time). */
  async resources(): Promise<McpResourcesResult> {
    return execute<McpResourcesResult>(await this.host.start(), ServerCommand.mcpResources, {});
  }

  /**
   * The text to send for `text`: itself unless it is a slash command of a
   * prompt; the prompt's text when it is; `undefined` when the user dismissed
   * a question. An unknown `/mcp__…` command is an error naming it.
   */
  async expand(text: string): Promise<string | undefined> {
    if (!isSlash(text)) return text;
    let command = parseSlash(text, await this.prompts());
    if (command === undefined) command = parseSlash(text, await this.prompts(true));
    if (command === undefined) {
      if (text.trim().startsWith('/mcp__')) {
        throw new Error(`no MCP prompt ${text.trim().split(/\s/, 1)[0]}: type / to see the servers' prompts`);
      }
      return text;
    }
    const values = { ...command.values };
    for (const argument of command.missing) {
      const value = await vscode.window.showInputBox({
        title: `Rhema: /${command.prompt.command}`,
        prompt: `${argument.name}${argument.description ? `: ${argument.description}` : ''} (required)`,
        ignoreFocusOut: true,
        validateInput: (typed) => (typed.trim() ? undefined : `${argument.name} is required`),
      });
      if (value === undefined) return undefined;
      values[argument.name] = value;
    }
    const filled = await execute<McpPromptResult>(await this.host.start(), ServerCommand.mcpPrompt, {
      server: command.prompt.server,
      name: command.prompt.name,
      arguments: values,
    });
    return filled.text;
  }
}
