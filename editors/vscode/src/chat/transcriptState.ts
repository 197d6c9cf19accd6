/**
 * The transcript state's primitives, shared by the reducer of actions
 * (`transcript.ts`) and of events (`transcriptEvents.ts`): the empty state,
 * where the stream continues (the item above a running turn's live
 * changed-files card), adding an item, collapsing reasoning, finding a
 * tool call's card in the current step, settling retries, and the turn's
 * plan item. Each function that changes the state returns the indices of
 * the items it touched. Pure: no `vscode`, no DOM.
 */
import type { PlanEntryBody } from '../contract';
import type { Item, ToolCard, TranscriptState } from './messages';

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

/** Settle the retry waiting in this stretch: the run went on, or ended in error. */
export function settleRetries(state: TranscriptState, outcome: 'retried' | 'failed'): number[] {
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
export function answering(state: TranscriptState): number[] {
  if (state.waiting?.what === 'model') state.waiting = undefined;
  return settleRetries(state, 'retried');
}

/** The tool whose calls are the turn's plan. */
export const PLAN_TOOL = 'update_plan';

/**
 * Show the turn's plan: its `plan` item (since the last prompt) replaced, or
 * a new one right under the prompt; the indices from there on move down one
 * and are all touched.
 */
export function showPlan(state: TranscriptState, entries: PlanEntryBody[]): number[] {
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
export function lastPlan(state: TranscriptState): number[] {
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
export function liveCardLast(state: TranscriptState): boolean {
  const tail = state.items[state.items.length - 1];
  return tail?.kind === 'changes' && tail.live;
}

/** The index of the item the stream continues (the live changed-files card is not it). */
export function tailIndex(state: TranscriptState): number {
  return state.items.length - (liveCardLast(state) ? 2 : 1);
}

export function last(state: TranscriptState): Item | undefined {
  return state.items[tailIndex(state)];
}

/** Add an item at the end of the output (above a live changed-files card); the indices touched. */
export function push(state: TranscriptState, item: Item): number[] {
  const at = state.items.length;
  if (item.kind !== 'changes' && liveCardLast(state)) {
    state.items.splice(at - 1, 0, item);
    return [at - 1, at];
  }
  state.items.push(item);
  return [at];
}

/** A new prompt: a card still listed as live belongs to the turn before, and stays above it. */
export function settleLiveChanges(state: TranscriptState): void {
  for (const item of state.items) if (item.kind === 'changes') item.live = false;
}

/** Collapse the open reasoning: the answer (or a tool call) has started. */
export function collapseThinking(state: TranscriptState): number[] {
  const touched: number[] = [];
  state.items.forEach((item, index) => {
    if (item.kind === 'thinking' && !item.collapsed) {
      item.collapsed = true;
      touched.push(index);
    }
  });
  return touched;
}

export function findCall(state: TranscriptState, id: string): { card: ToolCard; index: number } | undefined {
  for (let index = state.items.length - 1; index >= (state.stepFrom ?? 0); index--) {
    const item = state.items[index];
    if (item?.kind === 'tool' && item.id === id) return { card: item, index };
  }
  return undefined;
}

export function withCall(state: TranscriptState, id: string, change: (card: ToolCard) => void): number[] {
  const found = findCall(state, id);
  if (found === undefined) return [];
  change(found.card);
  return [found.index];
}
