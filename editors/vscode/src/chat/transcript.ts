/**
 * The chat transcript as data: a reducer from `Action`s (the user's prompt,
 * `rhema/event`s, a run's end, the changed files, per-file decisions) to
 * `TranscriptState` items, and a reopened session's messages as items.
 *
 * Rules: reasoning is one `thinking` item per stretch, collapsed as soon as
 * the answer or a tool call starts; the answer is one `answer` item per
 * stretch of text; each tool call is one card, found by id (calls may run in
 * parallel); a run ends in one `end` item (from `turn_end`, else from the
 * command's result). `apply` mutates the state and returns the indices of the
 * items it touched, so the view re-renders only those. Pure: no `vscode`, no
 * DOM, so the extension, the webview and the unit tests share it.
 */
import type { Message, RhemaEvent } from '../contract';
import type { Action, Item, ToolCard, TranscriptState, Usage } from './messages';

export function emptyState(session?: string, title?: string): TranscriptState {
  return { session, title, items: [], running: false, usage: { input: 0, output: 0 } };
}

/** Apply one action; returns the indices of the items added or changed. */
export function apply(state: TranscriptState, action: Action): number[] {
  switch (action.kind) {
    case 'prompt':
      state.running = true;
      state.usage = { input: 0, output: 0 };
      state.settled = { input: 0, output: 0 };
      return [push(state, { kind: 'user', text: action.text, mentions: action.mentions })];
    case 'event':
      return applyEvent(state, action.event);
    case 'end':
      state.running = false;
      state.usage = { input: action.usage.input, output: action.usage.output };
      if (last(state)?.kind === 'end') return [];
      return [...collapseThinking(state), push(state, { kind: 'end', stopReason: action.stopReason, usage: action.usage, steps: action.steps })];
    case 'failed':
      state.running = false;
      return [push(state, { kind: 'notice', level: 'error', text: action.message })];
    case 'notice':
      return [push(state, { kind: 'notice', level: 'info', text: action.text })];
    case 'session':
      state.session = action.session;
      if (action.title !== undefined) state.title = action.title;
      return [];
    case 'changes':
      if (action.files.length === 0) return [];
      return [
        push(state, { kind: 'changes', session: action.session, turn: action.turn, files: action.files, decisions: {} }),
      ];
    case 'decision': {
      const index = state.items.findIndex((item) => item.kind === 'changes' && item.turn === action.turn);
      const item = state.items[index];
      if (item?.kind !== 'changes') return [];
      item.decisions[action.uri] = { decision: action.decision, detail: action.detail };
      return [index];
    }
  }
}

function applyEvent(state: TranscriptState, event: RhemaEvent): number[] {
  switch (event.type) {
    case 'thinking_delta': {
      const tail = last(state);
      if (tail?.kind === 'thinking') {
        tail.text += event.text;
        return [state.items.length - 1];
      }
      return [push(state, { kind: 'thinking', text: event.text, collapsed: false })];
    }
    case 'text_delta': {
      const touched = collapseThinking(state);
      const tail = last(state);
      if (tail?.kind === 'answer') {
        tail.text += event.text;
        return [...touched, state.items.length - 1];
      }
      return [...touched, push(state, { kind: 'answer', text: event.text })];
    }
    case 'tool_call_start': {
      const touched = collapseThinking(state);
      const found = findCall(state, event.id);
      if (found !== undefined) {
        found.card.name = event.name;
        return [...touched, found.index];
      }
      const card: ToolCard = {
        kind: 'tool',
        id: event.id,
        name: event.name,
        args: '',
        status: '',
        output: '',
        state: 'running',
        result: '',
        code: null,
      };
      return [...touched, push(state, card)];
    }
    case 'tool_call_args_delta':
      return withCall(state, event.id, (card) => (card.args += event.delta));
    case 'tool_output_delta':
      return withCall(state, event.id, (card) => (card.output += event.chunk));
    case 'tool_status':
      return withCall(state, event.id, (card) => (card.status = event.status.activity));
    case 'tool_result':
      return withCall(state, event.id, (card) => {
        card.name = event.name;
        card.state = event.isError ? 'error' : 'ok';
        card.result = event.content;
        card.code = event.code ?? null;
      });
    case 'provider_tool':
      return [...collapseThinking(state), push(state, { kind: 'provider', name: event.name, detail: event.detail })];
    case 'usage': {
      const settled = state.settled ?? { input: 0, output: 0 };
      state.usage = { input: settled.input + event.input, output: settled.output + event.output };
      return [];
    }
    case 'retry_wait':
      return [
        push(state, {
          kind: 'notice',
          level: 'retry',
          text: `Retry ${event.attempt}/${event.total} in ${event.delaySeconds}s: ${event.error}`,
        }),
      ];
    case 'compaction':
      return [
        push(state, {
          kind: 'notice',
          level: 'compaction',
          text: `Compacted the conversation: ${event.before} → ${event.after} tokens`,
        }),
      ];
    case 'context':
      state.context = { tokens: event.tokens, window: event.window };
      return [];
    case 'error':
      return [push(state, { kind: 'notice', level: 'error', text: event.message })];
    case 'turn_end':
      state.running = false;
      state.usage = { input: event.usage.input, output: event.usage.output };
      return [
        ...collapseThinking(state),
        push(state, { kind: 'end', stopReason: event.stopReason, usage: event.usage, steps: event.steps }),
      ];
    case 'step_end': {
      const settled = state.settled ?? { input: 0, output: 0 };
      state.settled = { input: settled.input + event.usage.input, output: settled.output + event.usage.output };
      state.usage = state.settled;
      return [];
    }
    case 'step_start':
      return [];
  }
}

function push(state: TranscriptState, item: Item): number {
  state.items.push(item);
  return state.items.length - 1;
}

function last(state: TranscriptState): Item | undefined {
  return state.items[state.items.length - 1];
}

/** Collapse the open reasoning: the answer (or a tool call) has started. */
function collapseThinking(state: TranscriptState): number[] {
  const touched: number[] = [];
  state.items.forEach((item, index) => {
    if (item.kind === 'thinking' && !item.collapsed) {
      item.collapsed = true;
      touched.push(index);
    }
  });
  return touched;
}

function findCall(state: TranscriptState, id: string): { card: ToolCard; index: number } | undefined {
  for (let index = state.items.length - 1; index >= 0; index--) {
    const item = state.items[index];
    if (item?.kind === 'tool' && item.id === id) return { card: item, index };
  }
  return undefined;
}

function withCall(state: TranscriptState, id: string, change: (card: ToolCard) => void): number[] {
  const found = findCall(state, id);
  if (found === undefined) return [];
  change(found.card);
  return [found.index];
}

/** The path (and a line or text to find) a tool call's arguments point at, if any. */
export function toolTarget(args: string): { path: string; line?: number; find?: string } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const record = parsed as Record<string, unknown>;
  const path = typeof record.path === 'string' ? record.path : typeof record.to === 'string' ? record.to : undefined;
  if (!path) return undefined;
  const target: { path: string; line?: number; find?: string } = { path };
  if (typeof record.offset === 'number') target.line = record.offset;
  const text = typeof record.new_text === 'string' ? record.new_text : undefined;
  const first = text?.split('\n').find((line) => line.trim().length > 0);
  if (first !== undefined) target.find = first;
  return target;
}

/** A tool call's one-line detail for its card: the command, pattern or path. */
export function toolDetail(args: string): string {
  try {
    const record = JSON.parse(args) as Record<string, unknown>;
    for (const key of ['command', 'pattern', 'path']) {
      const value = record[key];
      if (typeof value === 'string' && value) return value.split('\n', 1)[0] ?? '';
    }
  } catch {
    // Arguments still streaming: no detail yet.
  }
  return '';
}

/** Fill of the context window as `12.3k / 128k (10%)`, or the tokens alone. */
export function meterText(context: TranscriptState['context'], usage: Usage): string {
  const tokens = `${usage.input.toLocaleString('en-US')} in · ${usage.output.toLocaleString('en-US')} out`;
  if (context === undefined) return tokens;
  const k = (n: number): string => (n >= 1000 ? `${(n / 1000).toFixed(1)}k` : `${n}`);
  if (context.window === null) return `${tokens} · context ${k(context.tokens)}`;
  const share = Math.round((100 * context.tokens) / context.window);
  return `${tokens} · context ${k(context.tokens)} / ${k(context.window)} (${share}%)`;
}

/** Where the server's rendering of `context` begins in a stored prompt (docs/protocol.md, Context). */
const CONTEXT_BLOCK = /\n\n[^\n]* \(the editor's current text[^\n]*:\n/;

/** The prompt the user typed, without the context the server appended to it. */
export function promptOf(stored: string): string {
  const match = CONTEXT_BLOCK.exec(stored);
  return match === null ? stored : stored.slice(0, match.index);
}

/** A reopened session (`rhema.openSession`'s messages) as transcript items. */
export function fromMessages(messages: readonly Message[] | readonly unknown[]): Item[] {
  const state = emptyState();
  for (const message of messages) {
    if (typeof message !== 'object' || message === null) continue;
    const { role, content } = message as { role?: unknown; content?: unknown };
    const parts = (Array.isArray(content) ? (content as unknown[]) : []).filter(
      (part): part is Record<string, unknown> => typeof part === 'object' && part !== null,
    );
    if (role === 'user') {
      const text = promptOf(
        parts
          .filter((part) => part.type === 'text' && typeof part.text === 'string')
          .map((part) => part.text as string)
          .join(''),
      );
      if (text.trim()) {
        collapseThinking(state);
        push(state, { kind: 'user', text, mentions: [] });
      }
    }
    for (const part of parts) {
      const text = typeof part.text === 'string' ? part.text : '';
      if (role === 'assistant' && part.type === 'thinking' && text) {
        applyEvent(state, { type: 'thinking_delta', text });
      } else if (role === 'assistant' && part.type === 'text' && text) {
        applyEvent(state, { type: 'text_delta', text });
      } else if (role === 'assistant' && part.type === 'tool_call' && typeof part.id === 'string') {
        applyEvent(state, { type: 'tool_call_start', id: part.id, name: String(part.name) });
        const args = typeof part.raw_args === 'string' ? part.raw_args : JSON.stringify(part.args ?? {});
        applyEvent(state, { type: 'tool_call_args_delta', id: part.id, delta: args });
      } else if (part.type === 'tool_result' && typeof part.id === 'string') {
        const found = findCall(state, part.id);
        if (found === undefined) continue;
        found.card.state = part.is_error === true ? 'error' : 'ok';
        found.card.result = typeof part.content === 'string' ? part.content : '';
      }
    }
  }
  collapseThinking(state);
  return state.items;
}
