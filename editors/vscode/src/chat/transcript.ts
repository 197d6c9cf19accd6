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
 * tests share it. This module holds the actions and a reopened session;
 * the events are `transcriptEvents.ts`, the state's primitives
 * `transcriptState.ts`, the text derived from items `transcriptText.ts`
 * (all re-exported here).
 */
import type { Message, PlanEntryBody, TurnChanges } from '../contract';
import type { Action, ChangedFileView, FileDecision, Item, TranscriptState } from './messages';
import { applyEvent } from './transcriptEvents';
import {
  collapseThinking,
  emptyState,
  findCall,
  last,
  lastPlan,
  PLAN_TOOL,
  push,
  settleLiveChanges,
  settleRetries,
  showPlan,
} from './transcriptState';
import { promptOf } from './transcriptText';

export { applyEvent } from './transcriptEvents';
export { emptyState, PLAN_TOOL, runnablePlan, withoutLastPrompt } from './transcriptState';
export { meterText, promptOf, toolDetail, toolTarget } from './transcriptText';

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
