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

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'max_steps' | 'cancelled' | 'error';
export type Mode = 'ask' | 'edit' | 'agent';

export interface Usage {
  input: number;
  output: number;
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

export interface OpenSessionResult {
  session: string;
  folder: string;
  title: string;
  messages: unknown[];
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
}

export interface UndoResult {
  reverted: string[];
  conflicts: string[];
}

export interface StatusResult {
  version: string;
  provider: { name: string; model: string; baseUrl?: string | null; source: string };
  folders: string[];
  mode: Mode;
  running: string[] | number | boolean;
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
  | { type: 'usage'; input: number; output: number }
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
