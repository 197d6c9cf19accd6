/**
 * The chat's cards as DOM, filled in place from their items: a tool call
 * (its inline diff for file edits), the changed files of a turn (+/− counts,
 * Accept all / Reject all, per-file decisions with an Undo for a reject), a
 * provider retry counting down, an error in plain words with a Retry, and
 * the model's plan as a checklist with "Run this plan" (edit, or agent).
 */
import { toolDiff, type DiffLine } from '../src/chat/diff';
import { explainError } from '../src/chat/errors';
import type { FromView, Item, ToolCard } from '../src/chat/messages';
import { toolDetail, toolTarget } from '../src/chat/transcript';
import { fillSubagent } from './subagents';

export type Post = (message: FromView) => void;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function button(label: string, action: () => void, className?: string): HTMLButtonElement {
  const node = el('button', className, label);
  node.addEventListener('click', (event) => {
    event.preventDefault();
    event.stopPropagation();
    action();
  });
  return node;
}

const STATE_GLYPH: Record<ToolCard['state'], string> = { running: '…', ok: '✓', error: '✗' };
const MAX_DIFF_LINES = 400;

export function createTool(): HTMLElement {
  const details = el('details', 'tool');
  const summary = el('summary');
  summary.append(
    el('span', 'glyph'),
    el('span', 'name'),
    el('a', 'path'),
    el('span', 'detail'),
    el('span', 'counts'),
    el('span', 'status'),
  );
  details.append(summary, el('pre', 'diff'), el('pre', 'output'), el('pre', 'result'));
  return details;
}

function diffNode(node: HTMLElement, lines: DiffLine[]): void {
  const shown = lines.slice(0, MAX_DIFF_LINES).map((line) => {
    const row = el('span', line.op === '+' ? 'add' : line.op === '-' ? 'del' : 'ctx', `${line.op} ${line.text}\n`);
    return row;
  });
  if (lines.length > MAX_DIFF_LINES) shown.push(el('span', 'ctx', `… ${lines.length - MAX_DIFF_LINES} more lines\n`));
  node.replaceChildren(...shown);
}

export function fillTool(node: HTMLElement, card: ToolCard, post: Post, approval: boolean): void {
  node.className = `tool ${card.state}`;
  node.dataset.id = card.id;
  const target = toolTarget(card.args);
  const detail = toolDetail(card.name, card.args);
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
      post({ type: 'openFile', ...target });
    };
  } else {
    link.textContent = '';
  }
  node.querySelector('.detail')!.textContent = target === undefined || detail !== target.path ? detail : '';
  const code = card.code === null ? '' : ` (exit ${card.code})`;
  const running = approval ? 'waiting for your approval' : card.status || 'running';
  const status = card.state === 'running' ? running : card.state === 'ok' ? `done${code}` : `failed${code}`;
  node.querySelector('.status')!.textContent = status;
  const diff = node.querySelector<HTMLElement>('.diff')!;
  const counts = node.querySelector<HTMLElement>('.counts')!;
  const lines = toolDiff(card.name, card.args);
  // The diff is final once the arguments are: drawn once, not on every status tick.
  if (lines !== undefined && diff.dataset.args !== String(card.args.length)) {
    diff.dataset.args = String(card.args.length);
    diffNode(diff, lines);
    const added = lines.filter((l) => l.op === '+').length;
    const removed = lines.filter((l) => l.op === '-').length;
    counts.replaceChildren(el('span', 'added', `+${added}`), el('span', 'removed', `−${removed}`));
  }
  diff.hidden = lines === undefined;
  node.querySelector('.output')!.textContent = card.output;
  (node.querySelector('.output') as HTMLElement).hidden = card.output.length === 0;
  node.querySelector('.result')!.textContent = card.result;
  (node.querySelector('.result') as HTMLElement).hidden = card.result.length === 0;
  fillSubagent(node, card, post);
}

const STATE_NOTE: Record<string, string> = { changed: 'changed since', restored: 'restored' };

export function fillChanges(node: HTMLElement, item: Extract<Item, { kind: 'changes' }>, post: Post): void {
  const undecided = item.files.filter((file) => item.decisions[file.uri] === undefined);
  const head = el('div', 'head');
  head.append(el('span', 'title', `Changed files · turn ${item.turn}${item.live ? ' (so far)' : ''}`));
  if (undecided.length > 0 && !item.live) {
    head.append(
      button('Accept all', () => post({ type: 'acceptAll', turn: item.turn }), 'accept-all'),
      button('Reject all', () => post({ type: 'rejectAll', turn: item.turn }), 'reject-all'),
    );
  }
  const list = el('ul');
  for (const file of item.files) {
    const row = el('li', 'file');
    row.dataset.uri = file.uri;
    const link = el('a', 'path', file.path);
    link.href = '#';
    link.title = `Open ${file.path}`;
    link.onclick = (event) => {
      event.preventDefault();
      post({ type: 'openFile', path: file.path });
    };
    const name = el('span', 'name');
    name.append(link, el('span', 'file-status', file.status));
    if (file.added !== undefined && file.removed !== undefined) {
      const counts = el('span', 'counts');
      counts.append(el('span', 'added', `+${file.added}`), el('span', 'removed', `−${file.removed}`));
      name.append(counts);
    }
    const note = STATE_NOTE[file.state];
    if (note !== undefined && item.decisions[file.uri] === undefined) name.append(el('span', 'file-state', note));
    const actions = el('span', 'actions');
    actions.append(button('Diff', () => post({ type: 'openDiff', turn: item.turn, uri: file.uri }), 'diff'));
    const decided = item.decisions[file.uri];
    if (decided === undefined) {
      if (!item.live) {
        actions.append(
          button('Accept', () => post({ type: 'accept', turn: item.turn, uri: file.uri }), 'accept'),
          button('Reject', () => post({ type: 'reject', turn: item.turn, uri: file.uri }), 'reject'),
        );
      }
    } else {
      const text = decided.decision === 'conflict' ? `not rejected: ${decided.detail ?? ''}` : decided.decision;
      actions.append(el('span', `decision ${decided.decision}`, text));
      if (decided.undoable) {
        actions.append(button('Undo', () => post({ type: 'undoReject', turn: item.turn, uri: file.uri }), 'undo'));
      }
    }
    row.append(name, actions);
    list.append(row);
  }
  node.replaceChildren(head, list);
}

/** A retry: counting down while it waits (`tick` redraws it), then how it went. */
export function fillRetry(node: HTMLElement, item: Extract<Item, { kind: 'retry' }>): void {
  node.className = `notice retry ${item.state}`;
  const key = `${item.attempt}/${item.total}/${item.delaySeconds}`;
  if (node.dataset.attempt !== key) {
    node.dataset.attempt = key;
    node.dataset.deadline = String(Date.now() + item.delaySeconds * 1000);
  }
  node.dataset.state = item.state;
  node.dataset.text = item.error;
  node.dataset.total = String(item.total);
  tickRetry(node);
}

export function tickRetry(node: HTMLElement): void {
  const [attempt = '', total = ''] = (node.dataset.attempt ?? '').split('/');
  const error = node.dataset.text ?? '';
  if (node.dataset.state === 'waiting') {
    const left = Math.max(0, (Number(node.dataset.deadline) - Date.now()) / 1000);
    const shown = left < 10 ? left.toFixed(1) : left.toFixed(0);
    node.textContent = `Attempt ${attempt} of ${total} failed; retrying in ${shown}s: ${error}`;
  } else if (node.dataset.state === 'retried') {
    node.textContent = `Attempt ${attempt} of ${total} failed; retried: ${error}`;
  } else {
    node.textContent = `Gave up after ${total} attempts: ${error}`;
  }
}

/** An error: what failed and the fix first, the server's words behind "Details", and a Retry. */
export function fillError(node: HTMLElement, text: string, post: Post): void {
  node.className = 'notice error';
  const explained = explainError(text);
  const parts: HTMLElement[] = [el('div', 'headline', explained.headline)];
  if (explained.fix) parts.push(el('div', 'fix', explained.fix));
  if (explained.detail !== explained.headline) {
    const details = el('details', 'detail');
    details.append(el('summary', undefined, 'Details'), el('div', 'text', explained.detail));
    parts.push(details);
  }
  if (explained.retry) parts.push(button('Retry', () => post({ type: 'retry' }), 'retry'));
  node.replaceChildren(...parts);
}

const PLAN_GLYPH: Record<string, string> = { pending: '○', in_progress: '◐', completed: '✓' };

/** The plan's checklist; `runnable`: with the buttons that run it. */
export function fillPlan(node: HTMLElement, item: Extract<Item, { kind: 'plan' }>, runnable: boolean, post: Post): void {
  const done = item.entries.filter((entry) => entry.status === 'completed').length;
  const head = el('div', 'plan-head', `Plan · ${done} of ${item.entries.length} done`);
  const list = el('ol', 'plan-steps');
  for (const entry of item.entries) {
    const row = el('li', `step ${entry.status}`);
    row.dataset.status = entry.status;
    row.append(el('span', 'glyph', PLAN_GLYPH[entry.status] ?? '○'), el('span', 'content', entry.content));
    list.append(row);
  }
  node.replaceChildren(head, list);
  if (runnable) {
    const actions = el('div', 'plan-actions');
    actions.append(
      button('Run this plan', () => post({ type: 'runPlan', mode: 'edit' }), 'run-plan'),
      button('Run in agent mode', () => post({ type: 'runPlan', mode: 'agent' }), 'run-plan-agent secondary'),
    );
    node.append(actions);
  }
}
