/**
 * Transcript items as DOM: one node per item, updated in place as the
 * reducer touches it (a streaming answer re-renders its Markdown; a thinking
 * section opens or closes only when its `collapsed` flag changes, so the
 * user's own toggle sticks; a tool card keeps its expanded state).
 *
 * The first time an answer's text is in the DOM, its node gets
 * `data-visible-at` (epoch milliseconds): the latency the editor tests
 * measure from the model's first delta; `data-posted-at` and
 * `data-received-at` say when that message left the extension and reached
 * the view, to split it.
 */
import type { FromView, Item, ToolCard, TranscriptState } from '../src/chat/messages';
import { meterText, toolDetail, toolTarget } from '../src/chat/transcript';
import { renderMarkdown } from './markdown';

type Post = (message: FromView) => void;

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function button(label: string, action: () => void, className?: string): HTMLButtonElement {
  const node = el('button', className, label);
  node.addEventListener('click', (event) => {
    event.preventDefault();
    event.stopPropagation();
    action();
  });
  return node;
}

const STATE_GLYPH: Record<ToolCard['state'], string> = { running: '…', ok: '✓', error: '✗' };

export class TranscriptView {
  private nodes: HTMLElement[] = [];
  /** When the message being rendered left the extension and reached the view (epoch ms). */
  timing: { postedAt?: number; receivedAt?: number } = {};

  constructor(
    private readonly root: HTMLElement,
    private readonly meter: HTMLElement,
    private readonly post: Post,
  ) {}

  reset(state: TranscriptState): void {
    this.root.replaceChildren();
    this.nodes = [];
    state.items.forEach((_, index) => this.update(state, index));
    this.status(state);
  }

  update(state: TranscriptState, index: number): void {
    const item = state.items[index];
    if (item === undefined) return;
    let node = this.nodes[index];
    if (node === undefined || node.dataset.kind !== item.kind) {
      const fresh = this.create(item);
      fresh.dataset.kind = item.kind;
      if (node === undefined) this.root.append(fresh);
      else node.replaceWith(fresh);
      this.nodes[index] = fresh;
      node = fresh;
    }
    this.fill(node, item);
  }

  status(state: TranscriptState): void {
    this.meter.textContent = meterText(state.context, state.usage);
  }

  private create(item: Item): HTMLElement {
    switch (item.kind) {
      case 'thinking': {
        const details = el('details', 'thinking');
        details.open = !item.collapsed;
        details.dataset.collapsed = item.collapsed ? '1' : '0';
        details.append(el('summary', undefined, 'Thinking'), el('div', 'body markdown'));
        return details;
      }
      case 'tool': {
        const details = el('details', 'tool');
        const summary = el('summary');
        summary.append(el('span', 'glyph'), el('span', 'name'), el('a', 'path'), el('span', 'detail'), el('span', 'status'));
        details.append(summary, el('pre', 'output'), el('pre', 'result'));
        return details;
      }
      case 'changes':
        return el('section', 'changes');
      default:
        return el('div', item.kind);
    }
  }

  private fill(node: HTMLElement, item: Item): void {
    switch (item.kind) {
      case 'user':
        node.textContent = item.text;
        return;
      case 'thinking': {
        const details = node as HTMLDetailsElement;
        const collapsed = item.collapsed ? '1' : '0';
        if (details.dataset.collapsed !== collapsed) {
          details.dataset.collapsed = collapsed;
          details.open = !item.collapsed;
        }
        details.querySelector('summary')!.textContent = item.collapsed ? 'Thinking' : 'Thinking…';
        details.querySelector('.body')!.innerHTML = renderMarkdown(item.text);
        return;
      }
      case 'answer':
        node.classList.add('markdown');
        node.innerHTML = renderMarkdown(item.text);
        if (node.dataset.visibleAt === undefined && item.text.trim()) {
          node.dataset.visibleAt = String(Date.now());
          node.dataset.postedAt = String(this.timing.postedAt ?? '');
          node.dataset.receivedAt = String(this.timing.receivedAt ?? '');
        }
        return;
      case 'tool':
        this.fillTool(node, item);
        return;
      case 'provider':
        node.textContent = `${item.name}${item.detail ? `: ${item.detail}` : ''} (by the provider)`;
        return;
      case 'notice':
        node.className = `notice ${item.level}`;
        node.textContent = item.text;
        return;
      case 'changes':
        this.fillChanges(node, item);
        return;
      case 'end': {
        const steps = item.steps === undefined ? '' : ` · ${item.steps} step${item.steps === 1 ? '' : 's'}`;
        node.textContent = `${item.stopReason}${steps} · ${item.usage.input.toLocaleString('en-US')} in · ${item.usage.output.toLocaleString('en-US')} out`;
        node.className = `end ${item.stopReason}`;
        return;
      }
    }
  }

  private fillTool(node: HTMLElement, card: ToolCard): void {
    node.className = `tool ${card.state}`;
    node.dataset.id = card.id;
    const target = toolTarget(card.args);
    const detail = toolDetail(card.args);
    node.querySelector('.glyph')!.textContent = STATE_GLYPH[card.state];
    node.querySelector('.name')!.textContent = card.name;
    const link = node.querySelector<HTMLAnchorElement>('.path')!;
    if (target !== undefined) {
      link.textContent = target.path;
      link.href = '#';
      link.title = `Open ${target.path}`;
      link.onclick = (event) => {
        event.preventDefault();
        event.stopPropagation();
        this.post({ type: 'openFile', ...target });
      };
    } else {
      link.textContent = '';
    }
    node.querySelector('.detail')!.textContent = target === undefined || detail !== target.path ? detail : '';
    const code = card.code === null ? '' : ` (exit ${card.code})`;
    const status = card.state === 'running' ? card.status || 'running' : card.state === 'ok' ? `done${code}` : `failed${code}`;
    node.querySelector('.status')!.textContent = status;
    node.querySelector('.output')!.textContent = card.output;
    (node.querySelector('.output') as HTMLElement).hidden = card.output.length === 0;
    node.querySelector('.result')!.textContent = card.result;
    (node.querySelector('.result') as HTMLElement).hidden = card.result.length === 0;
  }

  private fillChanges(node: HTMLElement, item: Extract<Item, { kind: 'changes' }>): void {
    const title = el('div', 'title', `Changed files (turn ${item.turn})`);
    const list = el('ul');
    for (const file of item.files) {
      const row = el('li', 'file');
      row.dataset.uri = file.uri;
      const link = el('a', 'path', file.path);
      link.href = '#';
      link.onclick = (event) => {
        event.preventDefault();
        this.post({ type: 'openFile', path: file.path });
      };
      const decided = item.decisions[file.uri];
      row.append(link, el('span', 'file-status', file.status));
      row.append(button('Open diff', () => this.post({ type: 'openDiff', turn: item.turn, uri: file.uri }), 'diff'));
      if (decided === undefined) {
        row.append(
          button('Accept', () => this.post({ type: 'accept', turn: item.turn, uri: file.uri }), 'accept'),
          button('Reject', () => this.post({ type: 'reject', turn: item.turn, uri: file.uri }), 'reject'),
        );
      } else {
        const text = decided.decision === 'conflict' ? `not rejected: ${decided.detail ?? ''}` : decided.decision;
        row.append(el('span', `decision ${decided.decision}`, text));
      }
      list.append(row);
    }
    node.replaceChildren(title, list);
  }
}
