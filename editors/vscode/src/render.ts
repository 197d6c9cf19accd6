/**
 * Event-to-panel rendering: turns `rhema/event` payloads into appends to the
 * Rhema output channel.
 *
 * Contract: everything goes through `OutputSink.append` (a streamed answer is
 * appended as it arrives, never a line per delta). Reasoning lines are set
 * apart with `REASONING_PREFIX`, command output with `OUTPUT_PREFIX`; every
 * tool call ends in exactly one status line; a retry shows its countdown; a
 * run closes with one line naming the stop reason, steps and tokens. Pure: no
 * `vscode` import, so it is unit-tested in plain Node.
 */
import { mainArgument } from './calls';
import type { Message, RhemaEvent, StopReason, Usage } from './protocol';

/** Where rendered text goes; the extension passes the output channel. */
/** How full the model's context window is: tokens of the next request, and the window if known. */
export interface ContextFill {
  tokens: number;
  window: number | null;
}

export interface OutputSink {
  append(text: string): void;
}

export const REASONING_PREFIX = '│ ';
export const OUTPUT_PREFIX = '  ┊ ';
export const TOOL_GLYPH = '🔧';
export const RETRY_GLYPH = '⏳';
export const ERROR_GLYPH = '✖';
export const START_GLYPH = '▶';
export const END_GLYPH = '■';
export const COMPACT_GLYPH = '⇣';

type Section = 'none' | 'reasoning' | 'answer' | 'output';

interface CallState {
  name: string;
  args: string;
  status?: string;
  headerShown: boolean;
}

const MAX_DETAIL = 160;

/** Format a token count with thousands separators (locale-independent). */
export function formatCount(n: number): string {
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** The closing line of a run, e.g. `■ end_turn · 2 steps · 1,200 in · 35 out tokens`. */
export function closingLine(stopReason: string, usage: Usage, steps?: number): string {
  const parts = [`${END_GLYPH} ${stopReason}`];
  if (steps !== undefined) {
    parts.push(`${steps} step${steps === 1 ? '' : 's'}`);
  }
  parts.push(`${formatCount(usage.input)} in · ${formatCount(usage.output)} out tokens`);
  return parts.join(' · ');
}

/** Summarise a call's JSON arguments for its status line: its main argument (`from → to` for a rename). */
export function summariseArgs(name: string, args: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return '';
  }
  const main = mainArgument(name, parsed);
  if (main === undefined) return '';
  return main.target === undefined ? oneLine(main.value) : `${main.value} → ${main.target}`;
}

function oneLine(text: string): string {
  const first = text.split('\n', 1)[0] ?? '';
  const trimmed = first.trim();
  const clipped = trimmed.length > MAX_DETAIL ? `${trimmed.slice(0, MAX_DETAIL - 1)}…` : trimmed;
  return text.includes('\n') && clipped === trimmed ? `${clipped} …` : clipped;
}

/**
 * Renders one run (a turn or a step) of one session into a sink.
 *
 * Call `begin` when the request is sent, `event` for each `rhema/event`, and
 * `finish` with the command's result (it writes the closing line only when
 * no `turn_end` did).
 */
export class RunRenderer {
  private section: Section = 'none';
  private atLineStart = true;
  private readonly calls = new Map<string, CallState>();
  private closed = false;
  private completedUsage: Usage = { input: 0, output: 0 };
  private inFlightUsage: Usage = { input: 0, output: 0 };
  private lastStop: StopReason | undefined;
  private stepCount = 0;
  /** The session's context fill after the latest step or compaction, if any. */
  contextFill: ContextFill | undefined;

  constructor(private readonly sink: OutputSink) {}

  /** Tokens used so far in this run (finished steps plus the call in flight). */
  get usage(): Usage {
    return {
      input: this.completedUsage.input + this.inFlightUsage.input,
      output: this.completedUsage.output + this.inFlightUsage.output,
    };
  }

  /** Whether the closing line has been written. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Write the run's heading line. */
  begin(title: string): void {
    this.line(`${START_GLYPH} ${oneLine(title)}`);
  }

  /** Render one event. */
  event(event: RhemaEvent): void {
    switch (event.type) {
      case 'step_start':
        this.stepCount = Math.max(this.stepCount, event.iteration);
        this.inFlightUsage = { input: 0, output: 0 };
        if (event.iteration > 1) {
          this.line(`── step ${event.iteration}`);
        }
        return;
      case 'thinking_delta':
        this.enter('reasoning');
        this.write(event.text, REASONING_PREFIX);
        return;
      case 'text_delta':
        this.enter('answer');
        this.write(event.text, '');
        return;
      case 'tool_call_start':
        this.call(event.id, event.name);
        return;
      case 'tool_call_args_delta':
        this.call(event.id).args += event.delta;
        return;
      case 'tool_output_delta': {
        const call = this.call(event.id);
        if (!call.headerShown) {
          call.headerShown = true;
          this.line(`${TOOL_GLYPH} ${this.describe(call)} …`);
        }
        this.enter('output');
        this.write(event.chunk, OUTPUT_PREFIX);
        return;
      }
      case 'tool_status':
        this.call(event.id).status = event.status.activity;
        return;
      case 'tool_result':
        this.toolResult(event);
        return;
      case 'provider_tool':
        this.line(`${TOOL_GLYPH} ${event.name}${event.detail ? `: ${oneLine(event.detail)}` : ''} (by the provider)`);
        return;
      case 'usage':
        this.inFlightUsage = { input: event.input, output: event.output };
        return;
      case 'retry_wait':
        this.line(
          `${RETRY_GLYPH} retry ${event.attempt}/${event.total} in ${event.delaySeconds}s: ${oneLine(event.error)}`,
        );
        return;
      case 'step_end':
        this.completedUsage = {
          input: this.completedUsage.input + event.usage.input,
          output: this.completedUsage.output + event.usage.output,
        };
        this.inFlightUsage = { input: 0, output: 0 };
        this.lastStop = event.stopReason;
        return;
      case 'compaction':
        this.line(
          `${COMPACT_GLYPH} compacted the conversation: ${formatCount(event.before)} → ${formatCount(event.after)} tokens (summary ${formatCount(event.summaryTokens)})`,
        );
        return;
      case 'context':
        this.contextFill = { tokens: event.tokens, window: event.window };
        return;
      case 'rules':
        this.line(`Rules: ${event.files.join(', ')}`);
        return;
      case 'turn_end':
        this.close(event.stopReason, event.usage, event.steps);
        return;
      case 'error':
        this.line(`${ERROR_GLYPH} ${event.message}`);
        return;
    }
  }

  /** Close the run from a command result, unless a `turn_end` already did. */
  finish(result: { stopReason: string; usage: Usage; steps?: number }): void {
    if (!this.closed) {
      this.close(result.stopReason, result.usage, result.steps);
    }
  }

  /** Close the run after the request failed (an error or a cancel without a result). */
  fail(message: string): void {
    this.line(`${ERROR_GLYPH} ${message}`);
    if (!this.closed) {
      this.close(this.lastStop ?? 'error', this.usage, this.stepCount || undefined);
    }
  }

  private close(stopReason: string, usage: Usage, steps?: number): void {
    this.line(closingLine(stopReason, usage, steps));
    this.closed = true;
  }

  private toolResult(event: Extract<RhemaEvent, { type: 'tool_result' }>): void {
    const call = this.call(event.id, event.name);
    let status = '✓';
    if (event.isError) {
      const detail = [call.status, event.code !== undefined && event.code !== null ? `code ${event.code}` : '']
        .filter((part) => part)
        .join(', ');
      const message = oneLine(event.content);
      status = `✗${detail ? ` (${detail})` : ''}${message ? `: ${message}` : ''}`;
    } else if (event.code !== undefined && event.code !== null) {
      status = `✓ (code ${event.code})`;
    }
    this.line(`${TOOL_GLYPH} ${this.describe(call)} ${status}`);
    this.calls.delete(event.id);
  }

  private describe(call: CallState): string {
    const summary = summariseArgs(call.name, call.args);
    return summary ? `${call.name} ${summary}` : call.name;
  }

  private call(id: string, name?: string): CallState {
    let call = this.calls.get(id);
    if (call === undefined) {
      call = { name: name ?? 'tool', args: '', headerShown: false };
      this.calls.set(id, call);
    } else if (name !== undefined) {
      call.name = name;
    }
    return call;
  }

  /** Switch section; a new section always starts on a fresh line. */
  private enter(section: Section): void {
    if (this.section !== section) {
      this.endLine();
      this.section = section;
    }
  }

  private line(text: string): void {
    this.endLine();
    this.section = 'none';
    this.sink.append(`${text}\n`);
    this.atLineStart = true;
  }

  private endLine(): void {
    if (!this.atLineStart) {
      this.sink.append('\n');
      this.atLineStart = true;
    }
  }

  /** Append `text`, putting `prefix` at the start of every line it begins. */
  private write(text: string, prefix: string): void {
    if (text.length === 0) {
      return;
    }
    let out = '';
    const pieces = text.split('\n');
    pieces.forEach((piece, index) => {
      if (index > 0) {
        out += '\n';
        this.atLineStart = true;
      }
      if (piece.length > 0) {
        if (this.atLineStart) {
          out += prefix;
        }
        out += piece;
        this.atLineStart = false;
      }
    });
    this.sink.append(out);
  }
}

/**
 * A reopened session's history (`rhema.openSession`'s `messages`) as panel
 * lines: `you:` and `rhema:` turns, reasoning set apart as in a live run, and
 * one line per tool call with its result's status (`…` when the call has no
 * result, e.g. an interrupted run). Defensive: parts it does not know are
 * skipped, so an older or newer server never breaks the panel.
 */
export function transcriptLines(messages: readonly Message[] | readonly unknown[]): string[] {
  const lines: string[] = [];
  const callLines = new Map<string, number>();
  for (const message of messages) {
    if (typeof message !== 'object' || message === null) continue;
    const { role, content } = message as { role?: unknown; content?: unknown };
    const parts = (Array.isArray(content) ? (content as unknown[]) : []).filter(
      (part): part is Record<string, unknown> => typeof part === 'object' && part !== null,
    );
    const text = parts
      .filter((part) => part.type === 'text' && typeof part.text === 'string')
      .map((part) => part.text as string)
      .join('')
      .trim();
    if (role === 'user' && text) lines.push(`you: ${text}`);
    if (role === 'assistant') {
      for (const part of parts) {
        if (part.type === 'thinking' && typeof part.text === 'string') {
          for (const line of part.text.split('\n')) if (line.trim()) lines.push(`${REASONING_PREFIX}${line}`);
        }
      }
      if (text) lines.push(`rhema: ${text}`);
      for (const part of parts) {
        if (part.type !== 'tool_call' || typeof part.name !== 'string') continue;
        const args = typeof part.raw_args === 'string' ? part.raw_args : JSON.stringify(part.args ?? {});
        const summary = summariseArgs(part.name, args);
        if (typeof part.id === 'string') callLines.set(part.id, lines.length);
        lines.push(`${TOOL_GLYPH} ${summary ? `${part.name} ${summary}` : part.name} …`);
      }
    }
    for (const part of parts) {
      if (part.type !== 'tool_result' || typeof part.id !== 'string') continue;
      const index = callLines.get(part.id);
      if (index === undefined) continue;
      const status =
        part.is_error === true
          ? `✗${typeof part.content === 'string' && part.content ? `: ${oneLine(part.content)}` : ''}`
          : '✓';
      lines[index] = `${(lines[index] ?? '').replace(/ …$/, '')} ${status}`;
      callLines.delete(part.id);
    }
  }
  return lines;
}
