/**
 * Transcript items as DOM: one node per item, updated in place as the
 * reducer touches it, at most once per animation frame (many deltas between
 * two frames are one update). A streaming answer or reasoning renders only
 * the Markdown that changed (`StreamedMarkdown`); a thinking section opens
 * or closes only when its `collapsed` flag changes, so the user's own toggle
 * sticks; a tool card keeps its expanded state. The working line under the
 * transcript says what the run waits for (the model's first token, the
 * user's approval). A plan is a checklist whose Run buttons show only on
 * the latest plan, between runs.
 *
 * The first time an answer's text is in the DOM, its node gets
 * `data-visible-at` (epoch milliseconds): the latency the editor tests
 * measure from the model's first delta; `data-posted-at` and
 * `data-received-at` say when that message left the extension and reached
 * the view, to split it; `data-rendered-at` is the last time its text
 * changed in the DOM (the rendering time of a long answer).
 */
import type { Item, TranscriptState } from '../src/chat/messages';
import { meterText, runnablePlan } from '../src/chat/transcript';
import { createTool, el, fillChanges, fillError, fillPlan, fillRetry, fillTool, tickRetry, type Post } from './cards';
import { StreamedMarkdown } from './stream';

const STOP_LABEL: Record<string, string> = {
  end_turn: 'Done',
  done: 'Done',
  max_tokens: 'Stopped at the token limit (rhema.maxTokens)',
  max_steps: 'Stopped at the step limit (rhema.maxSteps): send a follow-up to go on',
  pause_turn: 'Paused by the provider: send a follow-up to go on',
  cancelled: 'Cancelled',
  error: 'Failed',
  tool_use: 'Step done',
};

export function stopLabel(reason: string): string {
  return STOP_LABEL[reason] ?? reason;
}

export class TranscriptView {
  private nodes: HTMLElement[] = [];
  private readonly streams = new WeakMap<HTMLElement, StreamedMarkdown>();
  private readonly dirty = new Set<number>();
  private state: TranscriptState | undefined;
  private frame: number | undefined;
  private ticker: number | undefined;
  private waitingFor = '';
  /** When the message being rendered left the extension and reached the view (epoch ms). */
  timing: { postedAt?: number; receivedAt?: number } = {};
  /** Called after each rendered frame (the view follows the output). */
  onRendered: () => void = () => undefined;

  constructor(
    private readonly root: HTMLElement,
    private readonly meter: HTMLElement,
    private readonly working: HTMLElement,
    private readonly post: Post,
  ) {}

  reset(state: TranscriptState): void {
    this.root.replaceChildren();
    this.nodes = [];
    this.dirty.clear();
    this.state = state;
    state.items.forEach((_, index) => this.render(state, index));
    this.status(state);
    this.onRendered();
  }

  /** Render these items with the next frame. */
  schedule(state: TranscriptState, indices: number[]): void {
    this.state = state;
    for (const index of indices) this.dirty.add(index);
    this.frame ??= requestAnimationFrame(() => this.flush());
  }

  /** Render what is scheduled now. */
  flush(): void {
    if (this.frame !== undefined) cancelAnimationFrame(this.frame);
    this.frame = undefined;
    const state = this.state;
    if (state === undefined) return;
    for (const index of [...this.dirty].sort((a, b) => a - b)) this.render(state, index);
    this.dirty.clear();
    this.status(state);
    this.onRendered();
  }

  status(state: TranscriptState): void {
    this.meter.textContent = meterText(state.context, state.usage);
    const waiting = state.running ? state.waiting : undefined;
    this.working.hidden = waiting === undefined;
    this.working.dataset.what = waiting?.what ?? '';
    this.working.textContent =
      waiting === undefined
        ? ''
        : waiting.what === 'model'
          ? 'Waiting for the model…'
          : `Waiting for your approval${waiting.detail ? `: ${waiting.detail}` : '…'}`;
    // A tool card that waits for an approval says so: redrawn when that changes.
    const what = waiting?.what ?? '';
    if (what !== this.waitingFor) {
      this.waitingFor = what;
      for (const card of this.root.querySelectorAll<HTMLElement>('.tool.running')) {
        const index = this.nodes.indexOf(card);
        if (index >= 0) this.render(state, index);
      }
    }
  }

  private render(state: TranscriptState, index: number): void {
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
      if (item.kind === 'user') {
        // A new prompt: the Retry of an older failure would retry the wrong thing.
        for (const retry of this.root.querySelectorAll('.notice.error .retry')) retry.remove();
      }
    }
    if (item.kind === 'plan') fillPlan(node, item, runnablePlan(state, index), this.post);
    else this.fill(node, item, state);
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
      case 'tool':
        return createTool();
      case 'changes':
        return el('section', 'changes');
      default:
        return el('div', item.kind);
    }
  }

  private markdown(node: HTMLElement, text: string): void {
    let stream = this.streams.get(node);
    if (stream === undefined) {
      stream = new StreamedMarkdown(node, () => this.onRendered());
      this.streams.set(node, stream);
    }
    stream.show(text);
  }

  private fill(node: HTMLElement, item: Item, state: TranscriptState): void {
    switch (item.kind) {
      case 'user':
        node.textContent = item.text;
        if (item.mentions.length > 0) {
          const chips = el('div', 'chips');
          for (const mention of item.mentions) chips.append(el('span', 'chip', mention));
          node.append(chips);
        }
        return;
      case 'thinking': {
        const details = node as HTMLDetailsElement;
        const collapsed = item.collapsed ? '1' : '0';
        if (details.dataset.collapsed !== collapsed) {
          details.dataset.collapsed = collapsed;
          details.open = !item.collapsed;
        }
        details.querySelector('summary')!.textContent = item.collapsed ? 'Thinking' : 'Thinking…';
        this.markdown(details.querySelector<HTMLElement>('.body')!, item.text);
        return;
      }
      case 'answer':
        node.classList.add('markdown');
        this.markdown(node, item.text); // stamps data-rendered-at when the DOM changes
        if (node.dataset.visibleAt === undefined && item.text.trim()) {
          node.dataset.visibleAt = String(Date.now());
          node.dataset.postedAt = String(this.timing.postedAt ?? '');
          node.dataset.receivedAt = String(this.timing.receivedAt ?? '');
        }
        return;
      case 'tool':
        fillTool(node, item, this.post, state.running && state.waiting?.what === 'approval');
        return;
      case 'provider':
        node.textContent = `${item.name}${item.detail ? `: ${item.detail}` : ''} (by the provider)`;
        return;
      case 'notice':
        if (item.level === 'error') {
          fillError(node, item.text, this.post);
        } else {
          node.className = `notice ${item.level}`;
          node.textContent = item.text;
        }
        return;
      case 'retry':
        fillRetry(node, item);
        if (item.state === 'waiting') this.tick();
        return;
      case 'changes':
        fillChanges(node, item, this.post);
        return;
      case 'plan':
        return; // filled by fillPlan, which needs to know if it runs
      case 'end': {
        const steps = item.steps === undefined ? '' : ` · ${item.steps} step${item.steps === 1 ? '' : 's'}`;
        node.textContent = `${stopLabel(item.stopReason)}${steps} · ${item.usage.input.toLocaleString('en-US')} in · ${item.usage.output.toLocaleString('en-US')} out`;
        node.className = `end ${item.stopReason}`;
        return;
      }
    }
  }

  /** Count the waiting retries down, a tenth of a second at a time, while there are any. */
  private tick(): void {
    if (this.ticker !== undefined) return;
    this.ticker = window.setInterval(() => {
      const waiting = this.root.querySelectorAll<HTMLElement>('.notice.retry.waiting');
      for (const node of waiting) tickRetry(node);
      if (waiting.length === 0) {
        window.clearInterval(this.ticker);
        this.ticker = undefined;
      }
    }, 100);
  }
}
