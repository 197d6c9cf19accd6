/**
 * The chat transcript as data: a reducer from `Action`s (the user's prompt,
 * `rhema/event`s, a run's end, the changed files, per-file decisions) to
 * `TranscriptState` items, and a reopened session's messages as items.
 *
 * Rules: reasoning is one `thinking` item per stretch, collapsed as soon as
 * the answer or a tool call starts; the answer is one `answer` item per
 * stretch of text; each tool call is one card, found by id among the current
 * step's cards (calls may run in parallel; ids repeat across steps); a
 * run ends in one `end` item (from `turn_end`, else from the command's
 * result; a single step's `tool_use` stop is not an end: the retry of a turn
 * goes on step by step). Retry waits of one stretch are one `retry` item,
 * updated per attempt and settled (`retried` or `failed`) by what comes
 * next. A turn's changed files are one `changes` item, replaced as the turn
 * changes more (decisions kept); while the turn runs (`live`) the card stays
 * below its output: new items go above it and the stream continues the item
 * before it, so a card listed mid-answer never splits the answer. The rules
 * files a turn gives the model are one `rules` notice, completed in place. A
 * turn's plan (`update_plan`) is one `plan` item right under its prompt, above
 * the answer, replaced as the model ticks it (no tool card for those calls;
 * the last plan is re-rendered when a run starts or ends: its Run buttons show
 * only between runs). `waiting` says what the run
 * waits for: the model (from the prompt or a step's start to its first
 * output) or the user (an approval). `apply` mutates the state and returns
 * the indices of the items it touched, so the view re-renders only those.
 * Pure: no `vscode`, no DOM, so the extension, the webview and the unit
 * tests share it.
 */
import { mainArgument } from '../calls';
import type { Message, PlanEntryBody, RhemaEvent, TurnChanges } from '../contract';
import { applySubagent } from './subagents';
import type { Action, ChangedFileView, FileDecision, Item, ToolCard, TranscriptState, Usage } from './messages';

export function emptyState(session?: string, title?: string): TranscriptState {
  return { session, title, items: [], running: false, usage: { input: 0, output: 0 } };
}

/**
 * Take the last prompt and everything after it out of the transcript: a retry of a prompt
 * the server never took sends it again, and shows it once, not once per attempt.
 */
export function withoutLastPrompt(state: TranscriptState): void {
  for (let index = state.items.length - 1; index >= 0; index--) {
    if (state.items[index]?.kind === 'user') {
      state.items.splice(index);
      return;
    }
  }
}

/** Apply one action; returns the indices of the items added or changed. */
export function apply(state: TranscriptState, action: Action): number[] {
  switch (action.kind) {
    case 'prompt':
      state.running = true;
      state.waiting = { what: 'model' };
      state.usage = { input: 0, output: 0 };
      state.settled = { input: 0, output: 0 };
      settleLiveChanges(state);
      return [...lastPlan(state), ...push(state, { kind: 'user', text: action.text, mentions: action.mentions })];
    case 'resume':
      state.running = true;
      state.waiting = { what: 'model' };
      state.usage = { input: 0, output: 0 };
      state.settled = { input: 0, output: 0 };
      return lastPlan(state);
    case 'event':
      return applyEvent(state, action.event);
    case 'end': {
      state.running = false;
      state.waiting = undefined;
      state.usage = { input: action.usage.input, output: action.usage.output };
      const settled = [...lastPlan(state), ...settleRetries(state, action.stopReason === 'error' ? 'failed' : 'retried')];
      if (last(state)?.kind === 'end') return settled;
      return [
        ...settled,
        ...collapseThinking(state),
        ...push(state, { kind: 'end', stopReason: action.stopReason, usage: action.usage, steps: action.steps }),
      ];
    }
    case 'failed':
      state.running = false;
      state.waiting = undefined;
      return [...lastPlan(state), ...settleRetries(state, 'failed'), ...push(state, { kind: 'notice', level: 'error', text: action.message })];
    case 'approval':
      state.waiting = action.waiting ? { what: 'approval', detail: action.detail } : undefined;
      return [];
    case 'notice':
      return push(state, { kind: 'notice', level: 'info', text: action.text });
    case 'session':
      state.session = action.session;
      if (action.title !== undefined) state.title = action.title;
      return [];
    case 'changes': {
      const index = state.items.findIndex(
        (item) => item.kind === 'changes' && item.turn === action.turn && item.session === action.session,
      );
      const found = state.items[index];
      if (found?.kind === 'changes') {
        found.files = action.files;
        found.live = action.live === true;
        return [index];
      }
      if (action.files.length === 0) return [];
      const item: Item = {
        kind: 'changes',
        session: action.session,
        turn: action.turn,
        files: action.files,
        decisions: {},
        live: action.live === true,
      };
      return push(state, item);
    }
    case 'decision': {
      const index = state.items.findIndex((item) => item.kind === 'changes' && item.turn === action.turn);
      const item = state.items[index];
      if (item?.kind !== 'changes') return [];
      if (action.decision === 'undecided') {
        delete item.decisions[action.uri];
      } else {
        const decided: FileDecision = { decision: action.decision };
        if (action.detail !== undefined) decided.detail = action.detail;
        if (action.undoable) decided.undoable = true;
        item.decisions[action.uri] = decided;
      }
      return [index];
    }
  }
}

/** Settle the retry waiting in this stretch: the run went on, or ended in error. */
function settleRetries(state: TranscriptState, outcome: 'retried' | 'failed'): number[] {
  const touched: number[] = [];
  for (let index = state.items.length - 1; index >= 0; index--) {
    const item = state.items[index];
    if (item?.kind === 'user') break;
    if (item?.kind === 'retry' && item.state === 'waiting') {
      item.state = outcome;
      touched.push(index);
    }
  }
  return touched;
}

/** Output from the model: it answers, so nothing waits for it (nor for a retry). */
function answering(state: TranscriptState): number[] {
  if (state.waiting?.what === 'model') state.waiting = undefined;
  return settleRetries(state, 'retried');
}

function applyEvent(state: TranscriptState, event: RhemaEvent): number[] {
  switch (event.type) {
    case 'thinking_delta': {
      const settled = answering(state);
      const at = tailIndex(state);
      const tail = state.items[at];
      if (tail?.kind === 'thinking') {
        tail.text += event.text;
        return [...settled, at];
      }
      return [...settled, ...push(state, { kind: 'thinking', text: event.text, collapsed: false })];
    }
    case 'text_delta': {
      const touched = [...answering(state), ...collapseThinking(state)];
      const at = tailIndex(state);
      const tail = state.items[at];
      if (tail?.kind === 'answer') {
        tail.text += event.text;
        return [...touched, at];
      }
      return [...touched, ...push(state, { kind: 'answer', text: event.text })];
    }
    case 'tool_call_start': {
      const touched = [...answering(state), ...collapseThinking(state)];
      if (event.name === PLAN_TOOL) return touched; // the plan item shows it
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
      return [...touched, ...push(state, card)];
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
    case 'plan':
      return [...answering(state), ...showPlan(state, event.entries)];
    case 'provider_tool':
      return [
        ...answering(state),
        ...collapseThinking(state),
        ...push(state, { kind: 'provider', name: event.name, detail: event.detail }),
      ];
    case 'usage': {
      const settled = state.settled ?? { input: 0, output: 0 };
      state.usage = { input: settled.input + event.input, output: settled.output + event.output };
      return [];
    }
    case 'retry_wait': {
      if (state.waiting?.what === 'model') state.waiting = undefined;
      const at = tailIndex(state);
      const tail = state.items[at];
      const retry = { attempt: event.attempt, total: event.total, delaySeconds: event.delaySeconds, error: event.error };
      if (tail?.kind === 'retry' && tail.state === 'waiting') {
        Object.assign(tail, retry);
        return [at];
      }
      return push(state, { kind: 'retry', ...retry, state: 'waiting' });
    }
    case 'compaction':
      return push(state, {
        kind: 'notice',
        level: 'compaction',
        text: `Compacted the conversation: ${event.before} → ${event.after} tokens`,
      });
    case 'context':
      state.context = { tokens: event.tokens, window: event.window };
      return [];
    case 'rules': {
      // One line per turn naming every rules file given so far, updated in place.
      const text = `Rules: ${event.files.join(', ')}`;
      for (let index = state.items.length - 1; index >= 0; index--) {
        const item = state.items[index];
        if (item?.kind === 'user') break;
        if (item?.kind === 'notice' && item.level === 'rules') {
          item.text = text;
          return [index];
        }
      }
      return push(state, { kind: 'notice', level: 'rules', text });
    }
    case 'error':
      return [...settleRetries(state, 'failed'), ...push(state, { kind: 'notice', level: 'error', text: event.message })];
    case 'turn_end': {
      state.usage = { input: event.usage.input, output: event.usage.output };
      // One step of a retried turn stopped for its tools: the turn goes on.
      if (event.stopReason === 'tool_use') return answering(state);
      state.running = false;
      state.waiting = undefined;
      return [
        ...lastPlan(state),
        ...settleRetries(state, event.stopReason === 'error' ? 'failed' : 'retried'),
        ...collapseThinking(state),
        ...push(state, { kind: 'end', stopReason: event.stopReason, usage: event.usage, steps: event.steps }),
      ];
    }
    case 'step_end': {
      const settled = state.settled ?? { input: 0, output: 0 };
      state.settled = { input: settled.input + event.usage.input, output: settled.output + event.usage.output };
      state.usage = state.settled;
      return answering(state);
    }
    case 'subagent':
      return withCall(state, event.id, (card) => applySubagent(card, event));
    case 'step_start':
      state.stepFrom = tailIndex(state) + 1;
      if (state.running && state.waiting?.what !== 'approval') state.waiting = { what: 'model' };
      return [];
  }
}

/** The tool whose calls are the turn's plan. */
export const PLAN_TOOL = 'update_plan';

/**
 * Show the turn's plan: its `plan` item (since the last prompt) replaced, or
 * a new one right under the prompt; the indices from there on move down one
 * and are all touched.
 */
function showPlan(state: TranscriptState, entries: PlanEntryBody[]): number[] {
  let prompt = -1;
  for (let index = state.items.length - 1; index >= 0; index--) {
    const item = state.items[index];
    if (item?.kind === 'plan') {
      item.entries = entries;
      return [index];
    }
    if (item?.kind === 'user') {
      prompt = index;
      break;
    }
  }
  const at = prompt + 1;
  state.items.splice(at, 0, { kind: 'plan', entries });
  if (state.stepFrom !== undefined && state.stepFrom >= at) state.stepFrom += 1;
  return state.items.map((_, index) => index).filter((index) => index >= at);
}

/** The index of the session's latest plan (to re-render its Run buttons), if any. */
function lastPlan(state: TranscriptState): number[] {
  const index = state.items.map((item) => item.kind).lastIndexOf('plan');
  return index < 0 ? [] : [index];
}

/** Whether the plan at `index` is the one "Run this plan" runs: the latest, between runs, not all done. */
export function runnablePlan(state: TranscriptState, index: number): boolean {
  const item = state.items[index];
  return (
    !state.running &&
    item?.kind === 'plan' &&
    lastPlan(state)[0] === index &&
    item.entries.some((entry) => entry.status !== 'completed')
  );
}

/** Whether the last item is the running turn's changed-files card, which stays below its output. */
function liveCardLast(state: TranscriptState): boolean {
  const tail = state.items[state.items.length - 1];
  return tail?.kind === 'changes' && tail.live;
}

/** The index of the item the stream continues (the live changed-files card is not it). */
function tailIndex(state: TranscriptState): number {
  return state.items.length - (liveCardLast(state) ? 2 : 1);
}

function last(state: TranscriptState): Item | undefined {
  return state.items[tailIndex(state)];
}

/** Add an item at the end of the output (above a live changed-files card); the indices touched. */
function push(state: TranscriptState, item: Item): number[] {
  const at = state.items.length;
  if (item.kind !== 'changes' && liveCardLast(state)) {
    state.items.splice(at - 1, 0, item);
    return [at - 1, at];
  }
  state.items.push(item);
  return [at];
}

/** A new prompt: a card still listed as live belongs to the turn before, and stays above it. */
function settleLiveChanges(state: TranscriptState): void {
  for (const item of state.items) if (item.kind === 'changes') item.live = false;
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
  for (let index = state.items.length - 1; index >= (state.stepFrom ?? 0); index--) {
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

/** A tool call's one-line detail for its card: its main argument (`from → to` for a rename). */
export function toolDetail(name: string, args: string): string {
  try {
    const main = mainArgument(name, JSON.parse(args));
    if (main === undefined) return '';
    const first = main.value.split('\n', 1)[0] ?? '';
    return main.target === undefined ? first : `${first} → ${main.target}`;
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
    // Each assistant message is one step; its results follow it (in the next message).
    if (role === 'assistant') state.stepFrom = state.items.length;
    for (const part of parts) {
      const text = typeof part.text === 'string' ? part.text : '';
      if (role === 'assistant' && part.type === 'thinking' && text) {
        applyEvent(state, { type: 'thinking_delta', text });
      } else if (role === 'assistant' && part.type === 'text' && text) {
        applyEvent(state, { type: 'text_delta', text });
      } else if (role === 'assistant' && part.type === 'tool_call' && part.name === PLAN_TOOL) {
        const args = part.args as { entries?: unknown } | null;
        if (Array.isArray(args?.entries)) showPlan(state, args.entries as PlanEntryBody[]);
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

/**
 * A reopened session's changed files, each turn's list placed at the end of
 * that turn (before the next prompt): the turns still in the conversation
 * match the prompts from the last one back (an older part may be compacted
 * into one summary). Files the store says were restored read as rejected.
 */
export function placeChanges(items: Item[], session: string, turns: readonly TurnChanges[], views: ChangedFileView[][]): Item[] {
  const prompts = items.flatMap((item, index) => (item.kind === 'user' ? [index] : []));
  const live = turns.flatMap((turn, index) => (turn.inConversation ? [{ turn, files: views[index] ?? turn.files }] : []));
  const after = new Map<number, Item[]>();
  live.forEach(({ turn, files }, index) => {
    if (files.length === 0) return;
    const prompt = prompts[prompts.length - live.length + index];
    if (prompt === undefined) return;
    const next = prompts.find((p) => p > prompt) ?? items.length;
    const decisions: Record<string, FileDecision> = {};
    for (const file of files) if (file.state === 'restored') decisions[file.uri] = { decision: 'rejected' };
    const card: Item = { kind: 'changes', session, turn: turn.turn, files, decisions, live: false };
    after.set(next, [...(after.get(next) ?? []), card]);
  });
  const out: Item[] = [];
  items.forEach((item, index) => {
    out.push(...(after.get(index) ?? []), item);
  });
  out.push(...(after.get(items.length) ?? []));
  return out;
}
