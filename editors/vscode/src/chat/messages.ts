/**
 * The messages between the Rhema chat view (a webview) and the extension.
 *
 * The extension owns the transcript: it applies every `Action` to its own
 * `TranscriptState` and posts the same action to the view, which applies it
 * to its copy with the same reducer (`transcript.ts`) and renders the items
 * it touched. `reset` replaces the view's copy (the view was (re)created, or
 * the session changed). Types only: shared by the extension and the webview
 * bundle.
 */
import type { ChangedFile, ImageArg, McpPromptInfo, McpResourceInfo, PlanEntryBody, ProviderSetup, RhemaEvent, SessionSummary, UsageTally } from '../contract';
import type { SERVER_SETTINGS } from '../serverSettings';
import type { SubagentView } from './subagents';

/** A mode a turn runs in: the choices of the server's `mode` setting (generated from the contract). */
export type Mode = (typeof SERVER_SETTINGS.mode.choices)[number];

/** The token counts the view shows. */
export type Usage = Pick<UsageTally, 'input' | 'output'>;

/** What the user did with one changed file in the view. */
export type Decision = 'accepted' | 'rejected' | 'conflict';

/** A changed file as the chat lists it: with its +/− line counts when known. */
export interface ChangedFileView extends ChangedFile {
  added?: number;
  removed?: number;
}

/** A file's decision; `undoable`: a reject the extension can re-apply. */
export interface FileDecision {
  decision: Decision;
  detail?: string;
  undoable?: boolean;
}

/** One change to the transcript. */
export type Action =
  | { kind: 'prompt'; text: string; mentions: string[] }
  /** A retry continues the last turn: running again, with no new prompt. */
  | { kind: 'resume' }
  | { kind: 'event'; event: RhemaEvent }
  | { kind: 'end'; stopReason: string; usage: Usage; steps?: number }
  | { kind: 'failed'; message: string }
  /** The files a turn changed so far (`live`: the turn still runs); replaces that turn's list. */
  | { kind: 'changes'; session: string; turn: number; files: ChangedFileView[]; live?: boolean }
  /** `undecided` takes a decision back (an undone reject). */
  | { kind: 'decision'; turn: number; uri: string; decision: Decision | 'undecided'; detail?: string; undoable?: boolean }
  | { kind: 'notice'; text: string }
  | { kind: 'session'; session: string; title?: string }
  /** A question (a command, a protected write) or a review waits for the user; `waiting: false` when answered. */
  | { kind: 'approval'; waiting: boolean; detail?: string };

export interface ToolCard {
  kind: 'tool';
  id: string;
  name: string;
  args: string;
  status: string;
  output: string;
  /** `running` until its result; then `ok` or `error`. */
  state: 'running' | 'ok' | 'error';
  result: string;
  code: number | null;
  /** A `task` call's subagent, as its `subagent` events tell it (./subagents.ts). */
  child?: SubagentView;
}

export type Item =
  | { kind: 'user'; text: string; mentions: string[] }
  | { kind: 'thinking'; text: string; collapsed: boolean }
  | { kind: 'answer'; text: string }
  | ToolCard
  | { kind: 'provider'; name: string; detail: string }
  /** The turn's plan (`update_plan`), right under its prompt, replaced in place as the model ticks it. */
  | { kind: 'plan'; entries: PlanEntryBody[] }
  | { kind: 'notice'; level: 'error' | 'info' | 'compaction' | 'rules'; text: string }
  /** A provider retry: `waiting` counts down, then `retried` (it went on) or `failed` (the run ended in error). */
  | { kind: 'retry'; attempt: number; total: number; delaySeconds: number; error: string; state: 'waiting' | 'retried' | 'failed' }
  | {
      kind: 'changes';
      session: string;
      turn: number;
      files: ChangedFileView[];
      decisions: Record<string, FileDecision>;
      live: boolean;
    }
  | { kind: 'end'; stopReason: string; usage: Usage; steps?: number };

/** What the run waits for, shown as a working line: the model's first token, or the user. */
export interface Waiting {
  what: 'model' | 'approval';
  detail?: string;
}

export interface TranscriptState {
  session?: string;
  title?: string;
  items: Item[];
  running: boolean;
  /** Tokens of the latest run (its finished steps plus the call in flight). */
  usage: Usage;
  /** Tokens of the latest run's finished steps. */
  settled?: Usage;
  /** The latest context fill: the next request's tokens, and the window if known. */
  context?: { tokens: number; window: number | null };
  /** What the running turn waits for, if anything. */
  waiting?: Waiting;
  /** Where the current step's items begin: tool call ids are only unique within a step. */
  stepFrom?: number;
}

/** The setup card's data: `rhema.status`'s `setup` and the provider's error. */
export interface SetupState {
  setup: ProviderSetup;
  error: string;
}

/** Extension → view. */
export type ToView =
  | { type: 'reset'; state: TranscriptState }
  /** `at`: when the extension posted it (epoch ms), for the latency the tests measure. */
  | { type: 'action'; action: Action; at?: number }
  | { type: 'sessions'; sessions: SessionSummary[]; current?: string }
  | { type: 'focusInput' }
  /** Show the setup card (none: hide it, a provider works); `provider`: the bar's provider line. */
  | { type: 'setup'; state?: SetupState; provider: string }
  /** The mode picker: `mode` shown, `modes` its choices (the contract's `mode` setting). */
  | { type: 'mode'; mode: Mode; modes: readonly Mode[] }
  /** A prompt the extension could not send (the server did not start): back into the input, with the error. */
  | { type: 'sendFailed'; text: string; message: string }
  /** The MCP servers' prompts, the input's slash commands (`error`: they could not be listed). */
  | { type: 'prompts'; prompts: McpPromptInfo[]; error?: string }
  /** The MCP servers' resources, the input's `@mcp:` mentions (`error`: servers that failed). */
  | { type: 'resources'; resources: McpResourceInfo[]; error?: string };

/** View → extension. */
export type FromView =
  | { type: 'ready' }
  | { type: 'send'; text: string; images?: ImageArg[] }
  | { type: 'stop' }
  | { type: 'openFile'; path: string; line?: number; find?: string }
  | { type: 'openDiff'; turn: number; uri: string }
  | { type: 'accept'; turn: number; uri: string }
  | { type: 'reject'; turn: number; uri: string }
  | { type: 'copy'; text: string }
  | { type: 'insert'; text: string }
  | { type: 'listSessions' }
  | { type: 'newSession' }
  | { type: 'openSession'; session: string }
  | { type: 'deleteSession'; session: string }
  /** Run the failed turn again. */
  | { type: 'retry' }
  /** Run the session's plan: continue it in this mode, the plan in its history. */
  | { type: 'runPlan'; mode: 'edit' | 'agent' }
  /** The mode picker changed: the chat's next prompts run in `mode`. */
  | { type: 'mode'; mode: Mode }
  | { type: 'acceptAll'; turn: number }
  | { type: 'rejectAll'; turn: number }
  /** Re-apply what the agent left in a rejected file. */
  | { type: 'undoReject'; turn: number; uri: string }
  /** A setup card row: write its choice, or (no choice) open the settings; `checkSetup` asks the server again. */
  | { type: 'choose'; row: string; provider?: string; model?: string; keyVar?: string }
  | { type: 'checkSetup' }
  /** `/` typed at the start of the input: the slash commands, please. */
  | { type: 'listPrompts' }
  /** `@` typed in the input: the MCP servers' resources, please. */
  | { type: 'listResources' }
  /** Stop a subagent alone (`rhema.cancel` with its session); its task ends cancelled. */
  | { type: 'cancelSubagent'; session: string };
