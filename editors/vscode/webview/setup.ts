/**
 * The setup card above the transcript: shown while no provider works, from
 * `rhema.status`'s `setup` (`setupCard`), one row per choice with the button
 * that writes it (a hosted provider's asks for its key first), "Check again"
 * to ask the server anew.
 */
import type { SetupState } from '../src/chat/messages';
import { setupCard } from '../src/chat/setup';
import { button, el, type Post } from './cards';

export function showSetup(root: HTMLElement, state: SetupState | undefined, post: Post): void {
  root.hidden = state === undefined;
  if (state === undefined) {
    root.replaceChildren();
    return;
  }
  const card = setupCard(state.setup, state.error);
  const rows = card.rows.map((row) => {
    const node = el('li', 'choice');
    node.dataset.row = row.id;
    const text = el('div', 'text');
    text.append(el('div', 'title', row.title), el('div', 'detail', row.detail));
    node.append(text);
    if (row.buttons.length > 0) {
      const buttons = el('div', 'buttons');
      for (const { label, choice, keyVar } of row.buttons) {
        const node = button(label, () => post({ type: 'choose', row: row.id, ...(choice ?? {}), ...(keyVar ? { keyVar } : {}) }), 'use');
        node.dataset.provider = choice?.provider ?? '';
        buttons.append(node);
      }
      node.append(buttons);
    }
    if (row.id === 'demo') node.classList.add('demo');
    return node;
  });
  const list = el('ul');
  list.append(...rows);
  root.replaceChildren(
    el('h2', undefined, card.heading),
    el('p', 'intro', card.intro),
    list,
    button('Check again', () => post({ type: 'checkSetup' }), 'check'),
  );
}
