/**
 * Settings mapping: the `rhema.*` VS Code settings to the server's settings
 * object (sent as `initializationOptions` and as the `rhema` section of
 * `workspace/configuration`), and to the command line that starts the server.
 *
 * Contract: the server object has exactly the contract's keys (provider,
 * model, baseUrl, thinking, maxTokens, maxSteps, mode, review, sessionStore,
 * commandAllowlist); unset optional values are left out so the server's own
 * defaults apply. An invalid value never stops the extension: it is replaced
 * by its default and reported as a problem naming the setting. Pure: values
 * are read through a getter, so unit tests need no `vscode`.
 */
import type { Mode } from './protocol';

/** Reads one setting below `rhema.`, e.g. `get('maxSteps')`. */
export type SettingGetter = (key: string) => unknown;

export type Thinking = 'default' | 'low' | 'medium' | 'high';
export type SessionStore = 'workspace' | 'user';

export const THINKING: readonly Thinking[] = ['default', 'low', 'medium', 'high'];
export const MODES: readonly Mode[] = ['ask', 'edit', 'agent'];
export const SESSION_STORES: readonly SessionStore[] = ['workspace', 'user'];

/** The server's settings object, keys as in the editor contract. */
export interface ServerSettings {
  provider?: string;
  model?: string;
  baseUrl?: string;
  thinking: Thinking;
  maxTokens?: number;
  maxSteps?: number;
  mode: Mode;
  review: boolean;
  sessionStore: SessionStore;
  commandAllowlist: string[];
}

export interface SettingsReading {
  settings: ServerSettings;
  /** One message per invalid setting, naming it; empty when all are valid. */
  problems: string[];
}

function optionalString(get: SettingGetter, key: string, problems: string[]): string | undefined {
  const value = get(key);
  if (value === undefined || value === null) {
    return undefined;
  }
  if (typeof value !== 'string') {
    problems.push(`rhema.${key} must be a string; using the server's default.`);
    return undefined;
  }
  const trimmed = value.trim();
  return trimmed.length > 0 ? trimmed : undefined;
}

function optionalPositiveInt(get: SettingGetter, key: string, problems: string[]): number | undefined {
  const value = get(key);
  if (value === undefined || value === null) {
    return undefined;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    problems.push(`rhema.${key} must be a positive integer or null; using the server's default.`);
    return undefined;
  }
  return value;
}

function choice<T extends string>(
  get: SettingGetter,
  key: string,
  allowed: readonly T[],
  fallback: T,
  problems: string[],
): T {
  const value = get(key);
  if (value === undefined || value === null) {
    return fallback;
  }
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) {
    return value as T;
  }
  problems.push(`rhema.${key} must be one of ${allowed.join(', ')}; using ${fallback}.`);
  return fallback;
}

function flag(get: SettingGetter, key: string, fallback: boolean, problems: string[]): boolean {
  const value = get(key);
  if (value === undefined || value === null) {
    return fallback;
  }
  if (typeof value !== 'boolean') {
    problems.push(`rhema.${key} must be true or false; using ${fallback}.`);
    return fallback;
  }
  return value;
}

function stringList(get: SettingGetter, key: string, problems: string[]): string[] {
  const value = get(key);
  if (value === undefined || value === null) {
    return [];
  }
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    problems.push(`rhema.${key} must be a list of strings; using an empty list.`);
    return [];
  }
  return value.filter((item) => item.length > 0);
}

/** Read and validate the server settings from the `rhema.*` settings. */
export function readServerSettings(get: SettingGetter): SettingsReading {
  const problems: string[] = [];
  const settings: ServerSettings = {
    thinking: choice(get, 'thinking', THINKING, 'default', problems),
    mode: choice(get, 'mode', MODES, 'edit', problems),
    review: flag(get, 'review', false, problems),
    sessionStore: choice(get, 'sessionStore', SESSION_STORES, 'workspace', problems),
    commandAllowlist: stringList(get, 'commandAllowlist', problems),
  };
  const provider = optionalString(get, 'provider', problems);
  const model = optionalString(get, 'model', problems);
  const baseUrl = optionalString(get, 'baseUrl', problems);
  const maxTokens = optionalPositiveInt(get, 'maxTokens', problems);
  const maxSteps = optionalPositiveInt(get, 'maxSteps', problems);
  if (provider !== undefined) settings.provider = provider;
  if (model !== undefined) settings.model = model;
  if (baseUrl !== undefined) settings.baseUrl = baseUrl;
  if (maxTokens !== undefined) settings.maxTokens = maxTokens;
  if (maxSteps !== undefined) settings.maxSteps = maxSteps;
  return { settings, problems };
}

/** How to start the server process. */
export interface ServerLaunch {
  command: string;
  args: string[];
}

/**
 * The server command line: `rhema.server.command` when set, else
 * `<python> -m rhema_lsp serve` for a configured interpreter, else
 * `rhema-lsp serve` from PATH.
 *
 * @param get reads `rhema.*` settings (`server.command`, `server.python`)
 * @param fallbackPython an interpreter configured elsewhere (the Python extension's)
 */
export function serverLaunch(get: SettingGetter, fallbackPython?: string): ServerLaunch {
  const command = get('server.command');
  if (Array.isArray(command) && command.length > 0 && command.every((part) => typeof part === 'string')) {
    const [program, ...args] = command;
    if (program !== undefined && program.trim().length > 0) {
      return { command: program, args };
    }
  }
  const python = get('server.python');
  const interpreter =
    typeof python === 'string' && python.trim().length > 0 ? python.trim() : fallbackPython?.trim();
  if (interpreter) {
    return { command: interpreter, args: ['-m', 'rhema_lsp', 'serve'] };
  }
  return { command: 'rhema-lsp', args: ['serve'] };
}
