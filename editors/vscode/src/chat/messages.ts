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
import type { ChangedFile, RhemaEvent, SessionSummary, UsageTally } from '../contract';

/** The token counts the view shows. */
export type Usage = Pick<UsageTally, 'input' | 'output'>;

/** What the user did with one changed file in the view. */
export type Decision = 'accepted' | 'rejected' | 'conflict';

/** One change to the transcript. */
export type Action =
  | { kind: 'prompt'; text: string; mentions: string[] }
  | { kind: 'event'; event: RhemaEvent }
  | { kind: 'end'; stopReason: string; usage: Usage; steps?: number }
  | { kind: 'failed'; message: string }
  | { kind: 'changes'; session: string; turn: number; files: ChangedFile[] }
  | { kind: 'decision'; turn: number; uri: string; decision: Decision; detail?: string }
  | { kind: 'notice'; text: string }
  | { kind: 'session'; session: string; title?: string };

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
}

export type Item =
  | { kind: 'user'; text: string; mentions: string[] }
  | { kind: 'thinking'; text: string; collapsed: boolean }
  | { kind: 'answer'; text: string }
  | ToolCard
  | { kind: 'provider'; name: string; detail: string }
  | { kind: 'notice'; level: 'retry' | 'error' | 'info' | 'compaction'; text: string }
  | {
      kind: 'changes';
      session: string;
      turn: number;
      files: ChangedFile[];
      decisions: Record<string, { decision: Decision; detail?: string }>;
    }
  | { kind: 'end'; stopReason: string; usage: Usage; steps?: number };

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
}

/** Extension → view. */
export type ToView =
  | { type: 'reset'; state: TranscriptState }
  /** `at`: when the extension posted it (epoch ms), for the latency the tests measure. */
  | { type: 'action'; action: Action; at?: number }
  | { type: 'sessions'; sessions: SessionSummary[]; current?: string }
  | { type: 'focusInput' };

/** View → extension. */
export type FromView =
  | { type: 'ready' }
  | { type: 'send'; text: string }
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
  | { type: 'deleteSession'; session: string };
