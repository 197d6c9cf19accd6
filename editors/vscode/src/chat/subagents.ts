/**
 * A `task` call's subagent in the chat: the `subagent` events of the
 * contract (`{id, session, event}`, one event of the child turn that the
 * task call `id` started, stored as session `session`) folded into the task
 * card's `child`, which the webview draws as a collapsible card inside the
 * task's card (webview/subagents.ts).
 *
 * Rules: one child per task card, created by its first event; one row per
 * child tool call (running, then ok or error); the answer is the child's
 * latest step's text, as it streams; the child has ended once its
 * `turn_end` arrived (its stop reason kept: `cancelled` when the user
 * stopped it alone, with the card's Cancel, which sends `rhema.cancel
 * {session}`). Bounded: the latest `MAX_CALLS` rows, the answer's tail.
 * Pure: no `vscode`, no DOM (unit-tested in Node, shared with the webview).
 */
import type { SubagentPayload } from '../contract';

export interface SubagentCall {
  id: string;
  name: string;
  args: string;
  state: 'running' | 'ok' | 'error';
}

export interface SubagentView {
  session: string;
  calls: SubagentCall[];
  answer: string;
  /** The child's `turn_end` stop reason, once it ended. */
  ended?: string;
  error?: string;
}

export const MAX_CALLS = 40;
export const ANSWER_SHOWN = 4000;

/** Fold one `subagent` event into `card.child`. */
export function applySubagent(card: { child?: SubagentView }, event: SubagentPayload): void {
  const child = (card.child ??= { session: event.session, calls: [], answer: '' });
  const inner = event.event;
  switch (inner.type) {
    case 'tool_call_start':
      child.calls.push({ id: inner.id, name: inner.name, args: '', state: 'running' });
      if (child.calls.length > MAX_CALLS) child.calls.shift();
      return;
    case 'tool_call_args_delta': {
      const call = child.calls.find((c) => c.id === inner.id);
      if (call !== undefined && call.args.length < 4096) call.args += inner.delta;
      return;
    }
    case 'tool_result': {
      const call = child.calls.find((c) => c.id === inner.id);
      if (call !== undefined) call.state = inner.isError ? 'error' : 'ok';
      return;
    }
    case 'step_start':
      child.answer = '';
      return;
    case 'text_delta':
      child.answer = (child.answer + inner.text).slice(-ANSWER_SHOWN);
      return;
    case 'error':
      child.error = inner.message;
      return;
    case 'turn_end':
      child.ended = inner.stopReason;
      return;
    default:
      return;
  }
}

/** The child's state in words: running, or how it ended. */
export function subagentState(child: SubagentView): string {
  if (child.ended === undefined) return 'running';
  return child.ended === 'end_turn' ? 'done' : child.ended.replace(/_/g, ' ');
}
