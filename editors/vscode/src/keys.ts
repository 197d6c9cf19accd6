/**
 * API keys given in the chat's setup card, kept in VS Code's SecretStorage.
 *
 * Rules: a key is stored under `rhema.key.<VARIABLE>` in the SecretStorage
 * (the operating system's keychain where VS Code has one), never in the
 * settings, the workspace or a log; the names of the variables stored are
 * kept in the global state (they are no secret) so the extension knows what
 * to read back. Only a provider's key variable (`*_API_KEY`, see
 * `setup.ts` `keyVariableProblem`) is accepted, so the webview cannot set
 * another variable of the server's environment. When the extension starts
 * the server, each stored key is in its environment under its variable (the
 * server reads keys from there and nowhere else, and keeps them from its
 * own children).
 */
import * as vscode from 'vscode';
import { keyValueProblem, keyVariableProblem } from './chat/setup';

const PREFIX = 'rhema.key.';
const NAMES = 'rhema.keyNames';

export class Keys {
  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly state: vscode.Memento,
  ) {}

  /** The variables stored, with their keys: the server's environment adds them. */
  async env(): Promise<Record<string, string>> {
    const env: Record<string, string> = {};
    for (const name of this.names()) {
      const key = await this.secrets.get(PREFIX + name);
      if (key !== undefined && keyVariableProblem(name) === undefined) env[name] = key;
    }
    return env;
  }

  /** Ask for the key of `variable` (for `label`) and store it; whether one was stored. */
  async ask(variable: string, label: string): Promise<boolean> {
    const problem = keyVariableProblem(variable);
    if (problem !== undefined) throw new Error(problem);
    const key = await vscode.window.showInputBox({
      title: `Rhema: ${label} API key`,
      prompt: `${variable}: kept in VS Code's secret storage (never in settings or the workspace) and given to the Rhema server when it starts`,
      password: true,
      ignoreFocusOut: true,
      validateInput: (value) => keyValueProblem(value),
    });
    if (key === undefined || keyValueProblem(key) !== undefined) return false;
    await this.secrets.store(PREFIX + variable, key.trim());
    const names = new Set(this.names());
    names.add(variable);
    await this.state.update(NAMES, [...names]);
    return true;
  }

  private names(): string[] {
    const names = this.state.get<unknown>(NAMES);
    return Array.isArray(names) ? names.filter((name): name is string => typeof name === 'string') : [];
  }
}
