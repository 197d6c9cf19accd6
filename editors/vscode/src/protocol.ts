/**
 * The editor contract of rhema-lsp, as TypeScript types (see docs/protocol.md).
 *
 * Commands go out as `workspace/executeCommand` with one camelCase argument
 * object; streaming comes back as `rhema/event` notifications. This module is
 * vocabulary only: no `vscode` import, so unit tests can load it in plain Node.
 */

/** Server-side `workspace/executeCommand` ids (never registered as VS Code commands). */
export const ServerCommand = {
  turn: 'rhema.turn',
  step: 'rhema.step',
  cancel: 'rhema.cancel',
  sessions: 'rhema.sessions',
  openSession: 'rhema.openSession',
  deleteSession: 'rhema.deleteSession',
  edit: 'rhema.edit',
  undoTurn: 'rhema.undoTurn',
  status: 'rhema.status',
} as const;
export type ServerCommandId = (typeof ServerCommand)[keyof typeof ServerCommand];

/** The `rhema/event` notification method. */
export const EVENT_METHOD = 'rhema/event';

export type StopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'pause_turn'
  | 'max_steps'
  | 'cancelled'
  | 'error';
export type Mode = 'ask' | 'edit' | 'agent';

export interface Usage {
  input: number;
  output: number;
  /** Input tokens the provider's prompt cache served (absent when zero). */
  cacheRead?: number;
  /** Input tokens written to the provider's prompt cache (absent when zero). */
  cacheWrite?: number;
}

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface ContextItem {
  uri: string;
  range?: Range;
}

export interface TurnArgs {
  prompt: string;
  folder?: string;
  session?: string;
  context?: ContextItem[];
  mode?: Mode;
  maxSteps?: number;
}

export interface TurnResult {
  session: string;
  turn: number;
  stopReason: StopReason;
  text: string;
  steps: number;
  usage: Usage;
}

export interface StepArgs {
  session?: string;
  prompt?: string;
  folder?: string;
  context?: ContextItem[];
  mode?: Mode;
}

export interface StepResult {
  session: string;
  turn: number;
  stopReason: StopReason;
  text: string;
  toolCalls: { id: string; name: string; isError: boolean }[];
  usage: Usage;
}

export interface CancelResult {
  cancelled: string[];
}

export interface SessionSummary {
  session: string;
  folder: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  turns: number;
  running: boolean;
}

/** One part of a stored message (the engine's JSON form). */
export type MessagePart =
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string; signature?: string | null }
  | { type: 'tool_call'; id: string; name: string; args: unknown; raw_args?: string | null }
  | { type: 'tool_result'; id: string; content: string; is_error: boolean; code?: string | number | null };

/** One message of a session's history, as `rhema.openSession` returns it. */
export interface Message {
  role: 'user' | 'assistant' | 'tool';
  content: MessagePart[];
}

export interface OpenSessionResult {
  session: string;
  folder: string;
  title: string;
  messages: Message[];
  resumed: { rerun: string[]; interrupted: string[] };
}

export interface EditArgs {
  uri: string;
  range: Range;
  instruction: string;
  session?: string;
}

export interface EditResult {
  session: string;
  applied: boolean;
  stopReason: StopReason;
  text: string;
  usage: Usage;
}

export interface UndoTurnArgs {
  session: string;
  /** Which turn (1-based); none: the last. */
  turn?: number;
}

export interface UndoResult {
  reverted: string[];
  conflicts: string[];
}

/** The resolved provider; every field is null and `error` says why when none resolved. */
export interface ProviderStatus {
  name: string | null;
  model: string | null;
  baseUrl: string | null;
  source: string | null;
  error?: string;
}

export interface StatusResult {
  version: string;
  provider: ProviderStatus;
  folders: string[];
  mode: Mode;
  /** Sessions with a run in flight. */
  running: string[];
}

/** One `event` of a `rhema/event` notification, discriminated by `type`. */
export type RhemaEvent =
  | { type: 'step_start'; iteration: number }
  | { type: 'thinking_delta'; text: string }
  | { type: 'text_delta'; text: string }
  | { type: 'tool_call_start'; id: string; name: string }
  | { type: 'tool_call_args_delta'; id: string; delta: string }
  | { type: 'tool_output_delta'; id: string; chunk: string }
  | { type: 'tool_status'; id: string; status: string }
  | { type: 'tool_result'; id: string; name: string; content: string; isError: boolean; code?: string | number | null }
  | { type: 'provider_tool'; id: string; name: string; detail: string }
  | { type: 'usage'; input: number; output: number; cacheRead?: number; cacheWrite?: number }
  | { type: 'retry_wait'; error: string; delaySeconds: number; attempt: number; total: number }
  | { type: 'step_end'; usage: Usage; stopReason: StopReason }
  | { type: 'turn_end'; stopReason: StopReason; text: string; steps: number; usage: Usage }
  | { type: 'error'; message: string };

/** Params of the `rhema/event` notification. */
export interface RhemaEventParams {
  session: string;
  turn: number;
  seq: number;
  event: RhemaEvent;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPosition(value: unknown): value is Position {
  return (
    isRecord(value) &&
    Number.isInteger(value.line) &&
    Number.isInteger(value.character) &&
    (value.line as number) >= 0 &&
    (value.character as number) >= 0
  );
}

function isRange(value: unknown): value is Range {
  return isRecord(value) && isPosition(value.start) && isPosition(value.end);
}

/**
 * The `{uri, range}` target of the server's "Rhema: edit selection" code
 * action (the argument of the client-side `rhema.editSelection`), or
 * `undefined` for anything else (e.g. the palette passes nothing, a context
 * menu passes the editor's uri alone).
 */
export function asEditTarget(value: unknown): { uri: string; range: Range } | undefined {
  if (!isRecord(value) || typeof value.uri !== 'string' || value.uri.length === 0 || !isRange(value.range)) {
    return undefined;
  }
  const { start, end } = value.range;
  return {
    uri: value.uri,
    range: { start: { line: start.line, character: start.character }, end: { line: end.line, character: end.character } },
  };
}

/** A `rhema.turn` argument object (as the server's "explain selection" code action sends), or `undefined`. */
export function asTurnArgs(value: unknown): TurnArgs | undefined {
  if (!isRecord(value) || typeof value.prompt !== 'string' || value.prompt.length === 0) {
    return undefined;
  }
  return value as unknown as TurnArgs;
}

/** One line for `rhema.status`: version, provider / model (how it was chosen), mode. */
export function statusSummary(status: StatusResult): string {
  const { provider } = status;
  const who =
    provider.name === null
      ? 'no provider'
      : `${[provider.name, provider.model].filter(Boolean).join(' / ')}${provider.source ? ` (${provider.source})` : ''}`;
  return `Rhema ${status.version} · ${who} · mode ${status.mode}`;
}
