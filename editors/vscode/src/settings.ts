/**
 * Settings mapping: the `rhema.*` VS Code settings to the server's settings
 * object (sent as `initializationOptions` and as the `rhema` section of
 * `workspace/configuration`), and to the command line that starts the server.
 *
 * Contract: the server object has exactly the server's setting keys
 * (provider, model, baseUrl, protocol, thinking, maxTokens, maxSteps, mode,
 * review, sessionStore, commandAllowlist, logLevel, contextWindow,
 * compactThreshold, diagnosticsWait, vision); unset optional values are
 * left out so the server's own defaults apply, and the ranges and choices are
 * the server's own (rhema_lsp/server/settings.py, providers/presets.py). An invalid value never stops the extension: it is replaced
 * by its default and reported as a problem naming the setting. Pure: values
 * are read through a getter, so unit tests need no `vscode`.
 *
 * Trust: a setting that starts a program or widens what runs unasked
 * (`USER_ONLY`: the server's command line and interpreter, the command
 * allowlist) has `machine` scope in package.json, so a repository's
 * `.vscode/settings.json` cannot set it, and is read from the user's own
 * settings only (`userOnly`), in case a workspace value gets through anyway.
 * The Python extension's interpreter is taken from the user's settings only
 * too (`userInterpreter`), never from a workspace's.
 */
import type { Mode } from './protocol';

/** Reads one setting below `rhema.`, e.g. `get('maxSteps')`. */
export type SettingGetter = (key: string) => unknown;

/** Where a setting's value comes from (VS Code's `WorkspaceConfiguration.inspect`). */
export interface SettingInspection {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** Inspects one setting below `rhema.`. */
export type SettingInspector = (key: string) => SettingInspection | undefined;

/**
 * The settings below `rhema.` that start a program or widen what runs unasked:
 * a workspace may not set them (`machine` scope in package.json).
 */
export const USER_ONLY: readonly string[] = ['server.command', 'server.python', 'commandAllowlist'];

/**
 * `get`, but a `USER_ONLY` setting is read from the user's settings (else its
 * default) through `inspect`, whatever a workspace or folder says.
 */
export function userOnly(get: SettingGetter, inspect: SettingInspector): SettingGetter {
  return (key) => {
    if (!USER_ONLY.includes(key)) {
      return get(key);
    }
    const seen = inspect(key);
    return seen?.globalValue ?? seen?.defaultValue;
  };
}

/**
 * The Python extension's `python.defaultInterpreterPath`, from the user's
 * settings only (a repository's `.vscode/settings.json` would otherwise name
 * the program that starts the server); its default, the bare word "python",
 * is no choice.
 */
export function userInterpreter(inspection: SettingInspection | undefined): string | undefined {
  const value = inspection?.globalValue;
  return typeof value === 'string' && value.includes('/') ? value : undefined;
}

export type Thinking = 'default' | 'low' | 'medium' | 'high';
export type SessionStore = 'workspace' | 'user';
export type Provider =
  | 'openai'
  | 'anthropic'
  | 'gemini'
  | 'openrouter'
  | 'groq'
  | 'ollama'
  | 'lmstudio'
  | 'llamacpp'
  | 'vllm'
  | 'embedded'
  | 'custom';
export type WireProtocol = 'openai' | 'anthropic' | 'gemini';
export type LogLevel = 'error' | 'warning' | 'info' | 'debug';

export const THINKING: readonly Thinking[] = ['default', 'low', 'medium', 'high'];
export const MODES: readonly Mode[] = ['ask', 'plan', 'edit', 'agent'];
export const SESSION_STORES: readonly SessionStore[] = ['workspace', 'user'];
/** The server's provider presets; an empty `rhema.provider` lets the server choose. */
export const PROVIDERS: readonly Provider[] = [
  'openai',
  'anthropic',
  'gemini',
  'openrouter',
  'groq',
  'ollama',
  'lmstudio',
  'llamacpp',
  'vllm',
  'embedded',
  'custom',
];
export const PROTOCOLS: readonly WireProtocol[] = ['openai', 'anthropic', 'gemini'];
export const LOG_LEVELS: readonly LogLevel[] = ['error', 'warning', 'info', 'debug'];
/** The server's bounds for `maxTokens` and `maxSteps`. */
export const MAX_TOKENS_RANGE = { min: 16, max: 1_000_000 } as const;
export const MAX_STEPS_RANGE = { min: 1, max: 500 } as const;
/** The server's bounds for `contextWindow` and `compactThreshold`. */
export const CONTEXT_WINDOW_RANGE = { min: 512, max: 100_000_000 } as const;
export const COMPACT_THRESHOLD_RANGE = { min: 0.2, max: 0.95 } as const;
/** The server's bounds for `diagnosticsWait` (seconds). */
export const DIAGNOSTICS_WAIT_RANGE = { min: 0, max: 60 } as const;

/** The server's settings object, keys as in the editor contract. */
export interface ServerSettings {
  provider?: Provider;
  model?: string;
  baseUrl?: string;
  protocol?: WireProtocol;
  thinking: Thinking;
  maxTokens?: number;
  maxSteps?: number;
  contextWindow?: number;
  compactThreshold?: number;
  diagnosticsWait?: number;
  vision?: boolean;
  mode: Mode;
  review: boolean;
  sessionStore: SessionStore;
  commandAllowlist: string[];
  logLevel: LogLevel;
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

function optionalInt(
  get: SettingGetter,
  key: string,
  range: { min: number; max: number },
  problems: string[],
): number | undefined {
  return optionalInRange(get, key, range, problems, Number.isInteger, 'an integer');
}

function optionalNumber(
  get: SettingGetter,
  key: string,
  range: { min: number; max: number },
  problems: string[],
): number | undefined {
  return optionalInRange(get, key, range, problems, Number.isFinite, 'a number');
}

/** A number the setting may leave out (null: the server's default), checked against its range. */
function optionalInRange(
  get: SettingGetter,
  key: string,
  range: { min: number; max: number },
  problems: string[],
  accepts: (value: number) => boolean,
  what: string,
): number | undefined {
  const value = get(key);
  if (value === undefined || value === null) {
    return undefined;
  }
  if (typeof value !== 'number' || !accepts(value) || value < range.min || value > range.max) {
    problems.push(`rhema.${key} must be ${what} from ${range.min} to ${range.max}, or null; using the server's default.`);
    return undefined;
  }
  return value;
}

/** A choice where empty (or unset) means "let the server decide". */
function optionalChoice<T extends string>(
  get: SettingGetter,
  key: string,
  allowed: readonly T[],
  problems: string[],
): T | undefined {
  const value = get(key);
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    return undefined;
  }
  const trimmed = typeof value === 'string' ? value.trim() : value;
  if (typeof trimmed === 'string' && (allowed as readonly string[]).includes(trimmed)) {
    return trimmed as T;
  }
  problems.push(`rhema.${key} must be empty or one of ${allowed.join(', ')}; using the server's default.`);
  return undefined;
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
    logLevel: choice(get, 'logLevel', LOG_LEVELS, 'warning', problems),
  };
  const provider = optionalChoice(get, 'provider', PROVIDERS, problems);
  const model = optionalString(get, 'model', problems);
  const baseUrl = optionalString(get, 'baseUrl', problems);
  const protocol = optionalChoice(get, 'protocol', PROTOCOLS, problems);
  const maxTokens = optionalInt(get, 'maxTokens', MAX_TOKENS_RANGE, problems);
  const maxSteps = optionalInt(get, 'maxSteps', MAX_STEPS_RANGE, problems);
  if (provider !== undefined) settings.provider = provider;
  if (model !== undefined) settings.model = model;
  if (baseUrl !== undefined) settings.baseUrl = baseUrl;
  if (protocol !== undefined) settings.protocol = protocol;
  if (maxTokens !== undefined) settings.maxTokens = maxTokens;
  if (maxSteps !== undefined) settings.maxSteps = maxSteps;
  const contextWindow = optionalInt(get, 'contextWindow', CONTEXT_WINDOW_RANGE, problems);
  const compactThreshold = optionalNumber(get, 'compactThreshold', COMPACT_THRESHOLD_RANGE, problems);
  if (contextWindow !== undefined) settings.contextWindow = contextWindow;
  if (compactThreshold !== undefined) settings.compactThreshold = compactThreshold;
  const diagnosticsWait = optionalNumber(get, 'diagnosticsWait', DIAGNOSTICS_WAIT_RANGE, problems);
  if (diagnosticsWait !== undefined) settings.diagnosticsWait = diagnosticsWait;
  const vision = get('vision');
  if (typeof vision === 'boolean') settings.vision = vision;
  else if (vision !== undefined && vision !== null) {
    problems.push('rhema.vision must be true, false or null; guessing from the provider and model.');
  }
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
