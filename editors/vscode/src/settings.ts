/**
 * Settings mapping: the `rhema.*` VS Code settings to the server's settings
 * object (sent as `initializationOptions` and as the `rhema` section of
 * `workspace/configuration`), and to the command line that starts the server.
 *
 * Contract: the server object has exactly the server's setting keys
 * (provider, model, baseUrl, protocol, thinking, maxTokens, maxSteps, mode,
 * review, sessionStore, commandAllowlist, logLevel, contextWindow,
 * compactThreshold, diagnosticsWait, vision, inlineCompletion,
 * completionProvider, completionModel, completionBaseUrl, completionDebounce);
 * unset optional values are
 * left out so the server's own defaults apply, and the ranges, choices and
 * defaults are the server's own (`serverSettings.ts`, generated from
 * rhema_lsp/runs/settings.py and providers/presets.py). An invalid value never stops the extension: it is replaced
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
import { SERVER_SETTINGS } from './serverSettings';

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

export type Thinking = (typeof SERVER_SETTINGS.thinking.choices)[number];
export type SessionStore = (typeof SERVER_SETTINGS.sessionStore.choices)[number];
/** A provider preset of the server's, or `custom`. */
export type Provider = (typeof SERVER_SETTINGS.provider.choices)[number];
export type WireProtocol = (typeof SERVER_SETTINGS.protocol.choices)[number];
export type LogLevel = (typeof SERVER_SETTINGS.logLevel.choices)[number];

export const THINKING: readonly Thinking[] = SERVER_SETTINGS.thinking.choices;
export const MODES: readonly Mode[] = SERVER_SETTINGS.mode.choices;
export const SESSION_STORES: readonly SessionStore[] = SERVER_SETTINGS.sessionStore.choices;
/** The server's provider presets and `custom`; an empty `rhema.provider` lets the server choose. */
export const PROVIDERS: readonly Provider[] = SERVER_SETTINGS.provider.choices;
export const PROTOCOLS: readonly WireProtocol[] = SERVER_SETTINGS.protocol.choices;
export const LOG_LEVELS: readonly LogLevel[] = SERVER_SETTINGS.logLevel.choices;

function range(setting: { min: number; max: number }): { min: number; max: number } {
  return { min: setting.min, max: setting.max };
}

/** The server's bounds for `maxTokens` and `maxSteps`. */
export const MAX_TOKENS_RANGE = range(SERVER_SETTINGS.maxTokens);
export const MAX_STEPS_RANGE = range(SERVER_SETTINGS.maxSteps);
/** The server's bounds for `contextWindow` and `compactThreshold`. */
export const CONTEXT_WINDOW_RANGE = range(SERVER_SETTINGS.contextWindow);
export const COMPACT_THRESHOLD_RANGE = range(SERVER_SETTINGS.compactThreshold);
/** The server's bounds for `diagnosticsWait` (seconds). */
export const DIAGNOSTICS_WAIT_RANGE = range(SERVER_SETTINGS.diagnosticsWait);
/** The server's bounds for `completionDebounce` (milliseconds). */
export const COMPLETION_DEBOUNCE_RANGE = range(SERVER_SETTINGS.completionDebounce);
/** The server's bounds for `toolOutputCap` (bytes). */
export const TOOL_OUTPUT_CAP_RANGE = range(SERVER_SETTINGS.toolOutputCap);

/** The server's settings object, keys as in the editor contract. */
export interface ServerSettings {
  provider?: Provider;
  model?: string;
  baseUrl?: string;
  protocol?: WireProtocol;
  thinking: Thinking;
  maxTokens?: number;
  maxSteps?: number;
  toolOutputCap?: number;
  contextWindow?: number;
  compactThreshold?: number;
  diagnosticsWait?: number;
  vision?: boolean;
  inlineCompletion?: boolean;
  completionProvider?: Provider;
  completionModel?: string;
  completionBaseUrl?: string;
  completionDebounce?: number;
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
    thinking: choice(get, 'thinking', THINKING, SERVER_SETTINGS.thinking.default, problems),
    mode: choice(get, 'mode', MODES, SERVER_SETTINGS.mode.default, problems),
    review: flag(get, 'review', SERVER_SETTINGS.review.default, problems),
    sessionStore: choice(get, 'sessionStore', SESSION_STORES, SERVER_SETTINGS.sessionStore.default, problems),
    commandAllowlist: stringList(get, 'commandAllowlist', problems),
    logLevel: choice(get, 'logLevel', LOG_LEVELS, SERVER_SETTINGS.logLevel.default, problems),
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
  const toolOutputCap = optionalInt(get, 'toolOutputCap', TOOL_OUTPUT_CAP_RANGE, problems);
  if (toolOutputCap !== undefined) settings.toolOutputCap = toolOutputCap;
  const contextWindow = optionalInt(get, 'contextWindow', CONTEXT_WINDOW_RANGE, problems);
  const compactThreshold = optionalNumber(get, 'compactThreshold', COMPACT_THRESHOLD_RANGE, problems);
  if (contextWindow !== undefined) settings.contextWindow = contextWindow;
  if (compactThreshold !== undefined) settings.compactThreshold = compactThreshold;
  const diagnosticsWait = optionalNumber(get, 'diagnosticsWait', DIAGNOSTICS_WAIT_RANGE, problems);
  if (diagnosticsWait !== undefined) settings.diagnosticsWait = diagnosticsWait;
  const inlineCompletion = get('inlineCompletion');
  if (inlineCompletion !== undefined && inlineCompletion !== null) {
    settings.inlineCompletion = flag(get, 'inlineCompletion', SERVER_SETTINGS.inlineCompletion.default, problems);
  }
  const completionProvider = optionalChoice(get, 'completionProvider', PROVIDERS, problems);
  const completionModel = optionalString(get, 'completionModel', problems);
  const completionBaseUrl = optionalString(get, 'completionBaseUrl', problems);
  const completionDebounce = optionalInt(get, 'completionDebounce', COMPLETION_DEBOUNCE_RANGE, problems);
  if (completionProvider !== undefined) settings.completionProvider = completionProvider;
  if (completionModel !== undefined) settings.completionModel = completionModel;
  if (completionBaseUrl !== undefined) settings.completionBaseUrl = completionBaseUrl;
  if (completionDebounce !== undefined) settings.completionDebounce = completionDebounce;
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
