/**
 * A `task` call's subagent drawn inside the task's card: a collapsible
 * card (open while the child runs) with the child's state, a Cancel button
 * while it runs (`cancelSubagent`: the extension sends `rhema.cancel
 * {session}`, which stops the child alone), one row per child tool call
 * and the child's answer as it streams. Filled in place from the card's
 * `child` (src/chat/subagents.ts); the task card itself opens once, when
 * its child starts, so the child is seen live (the user may close it).
 */
import type { ToolCard } from '../src/chat/messages';
import { subagentState } from '../src/chat/subagents';
import { toolDetail } from '../src/chat/transcript';
import { button, el, type Post } from './cards';

const GLYPH = { running: '…', ok: '✓', error: '✗' } as const;

function create(node: HTMLElement, post: Post): HTMLDetailsElement {
  const box = el('details', 'subagent');
  box.open = true;
  const summary = el('summary');
  const cancel = button('Cancel', () => post({ type: 'cancelSubagent', session: box.dataset.session ?? '' }), 'sub-cancel');
  summary.append(el('span', 'sub-title', 'Subagent'), el('span', 'sub-state'), cancel);
  box.append(summary, el('ul', 'sub-calls'), el('div', 'sub-answer'), el('div', 'sub-error'));
  const result = node.querySelector(':scope > .result');
  if (result !== null) result.before(box);
  else node.append(box);
  if (node instanceof HTMLDetailsElement) node.open = true;
  return box;
}

/** Draw `card.child` into the task card `node` (nothing when it has none). */
export function fillSubagent(node: HTMLElement, card: ToolCard, post: Post): void {
  const child = card.child;
  let box = node.querySelector<HTMLDetailsElement>(':scope > details.subagent');
  if (child === undefined) {
    box?.remove();
    return;
  }
  box ??= create(node, post);
  box.dataset.session = child.session;
  box.className = `subagent ${child.ended === undefined ? 'running' : 'ended'}`;
  box.querySelector('.sub-state')!.textContent = subagentState(child);
  box.querySelector<HTMLElement>('.sub-cancel')!.hidden = child.ended !== undefined;
  box.querySelector('.sub-calls')!.replaceChildren(
    ...child.calls.map((call) => el('li', `sub-call ${call.state}`, `${GLYPH[call.state]} ${call.name} ${toolDetail(call.name, call.args)}`)),
  );
  box.querySelector('.sub-answer')!.textContent = child.answer;
  box.querySelector('.sub-error')!.textContent = child.error ?? '';
}
