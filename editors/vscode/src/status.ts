/**
 * Status bar text: the running state and the session's token usage.
 *
 * Pure formatting; `extension.ts` owns the `StatusBarItem`.
 */
import type { Usage } from './protocol';
import { type ContextFill, formatCount } from './render';

export interface StatusState {
  running: boolean;
  /** What the run is doing now (from `$/progress` reports), if known. */
  activity?: string;
  session?: string;
  usage: Usage;
  /** The current session's context fill, once a step or compaction reported it. */
  context?: ContextFill;
  serverState: 'starting' | 'running' | 'stopped';
}

/** Compact token count: 950, 1.2k, 3.4M. */
export function compactCount(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** The context fill as status bar text: "12k/200k (6%)", or "12k" while the window is unknown. */
export function fillText(fill: ContextFill): string {
  if (fill.window === null || fill.window <= 0) return compactCount(fill.tokens);
  const share = Math.floor((100 * fill.tokens) / fill.window);
  return `${compactCount(fill.tokens)}/${compactCount(fill.window)} (${share}%)`;
}

/** The status bar item's text and tooltip. */
export function statusText(state: StatusState): { text: string; tooltip: string } {
  const tokens = state.usage.input + state.usage.output;
  const tooltipLines = [
    `Rhema server: ${state.serverState}`,
    state.session ? `Session: ${state.session}` : 'No session yet',
    `Tokens: ${formatCount(state.usage.input)} in · ${formatCount(state.usage.output)} out`,
  ];
  if (state.context) tooltipLines.push(`Context: ${fillText(state.context)} of the model's window`);
  if (state.serverState !== 'running') {
    return { text: `$(debug-disconnect) Rhema ${state.serverState}`, tooltip: tooltipLines.join('\n') };
  }
  if (state.running) {
    const activity = state.activity ? `: ${state.activity}` : '…';
    return { text: `$(sync~spin) Rhema${activity}`, tooltip: tooltipLines.join('\n') };
  }
  const fill = state.context ? ` · ctx ${fillText(state.context)}` : '';
  return {
    text:
      tokens > 0
        ? `$(comment-discussion) Rhema · ${compactCount(tokens)} tokens${fill}`
        : `$(comment-discussion) Rhema${fill}`,
    tooltip: tooltipLines.join('\n'),
  };
}
