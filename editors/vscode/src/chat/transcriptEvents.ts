/**
 * The transcript's reducer of `rhema/event`s (the rules are in
 * `transcript.ts`'s header): deltas continue the tail item, tool events
 * find their card by id in the current step, plans go under the prompt,
 * usage and context feed the meter, a turn's end settles what waits.
 * Returns the indices of the items it touched. Pure: no `vscode`, no DOM.
 */
import type { RhemaEvent } from '../contract';
import type { ToolCard, TranscriptState } from './messages';
import { applySubagent } from './subagents';
import {
  answering,
  collapseThinking,
  findCall,
  lastPlan,
  PLAN_TOOL,
  push,
  settleRetries,
  showPlan,
  tailIndex,
  withCall,
} from './transcriptState';

/** Apply one event; returns the indices of the items added or changed. */
export function applyEvent(state: TranscriptState, event: RhemaEvent): number[] {
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
