/**
 * The provider side of the chat: whether the setup card shows (a provider
 * error, with `rhema.status`'s `setup`), and writing the user's choice.
 *
 * A choice is written to the user settings (the card says so), the whole
 * provider group at once: `rhema.provider`, and `rhema.model`,
 * `rhema.baseUrl`, `rhema.protocol` cleared unless the choice names them,
 * so nothing of an earlier setting mixes in. The configuration change
 * reaches the server as `workspace/didChangeConfiguration` (the extension's
 * listener); the next status tells whether it works.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { execute } from '../client';
import { ServerCommand, type StatusResult } from '../contract';
import type { SetupState } from './messages';
import type { ProviderChoice } from './setup';

/** The provider settings a choice rewrites, `provider` last (the others are cleared first). */
export const PROVIDER_KEYS = ['model', 'baseUrl', 'protocol', 'provider'] as const;

/** The status, and the setup card's data when no provider works. */
export async function providerStatus(client: LanguageClient): Promise<{ status: StatusResult; setup?: SetupState }> {
  const status = await execute<StatusResult>(client, ServerCommand.status, {});
  if (status.provider.error === null) return { status };
  return { status, setup: { setup: status.setup, error: status.provider.error } };
}

/** Write `choice` as the user's provider settings. */
export async function writeChoice(choice: ProviderChoice): Promise<void> {
  const config = vscode.workspace.getConfiguration('rhema');
  const values: Record<(typeof PROVIDER_KEYS)[number], string | undefined> = {
    provider: choice.provider,
    model: choice.model,
    baseUrl: undefined,
    protocol: undefined,
  };
  for (const key of PROVIDER_KEYS) {
    await config.update(key, values[key], vscode.ConfigurationTarget.Global);
  }
}

/** The settings editor, at the endpoint settings (the "Another endpoint" row). */
export async function openEndpointSettings(): Promise<void> {
  await vscode.commands.executeCommand('workbench.action.openSettings', 'rhema.baseUrl rhema.protocol');
}

/** One line for the chat's bar: the provider and model (the mode has its own picker). */
export function providerLabel(status: StatusResult): string {
  const { provider } = status;
  return provider.name === null ? 'no provider' : [provider.name, provider.model].filter(Boolean).join(' · ');
}
