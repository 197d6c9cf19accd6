/**
 * Streaming Markdown into one node at the cost of what changed: the blocks
 * no later text can change (`BlockSplitter`) are rendered once and
 * appended; only the tail after them is rendered again on each update. A
 * text that is not a continuation of the one shown (another item reusing the
 * node) starts over. Closed blocks go into pages of about `PAGE` characters
 * whose layout and paint the browser skips while they are off screen
 * (`content-visibility: auto`), so a long answer costs what is visible.
 *
 * Rules that keep a long answer's updates cheap whatever its shape:
 * - a fenced code block still open is not rendered again: its lines are
 *   appended as plain text as they complete, `CHUNK_LINES` to a block (the
 *   line being written shows too, unless it may be the closing fence); once
 *   closed it is rendered once, and highlighted slice by slice while the view
 *   is idle (`highlightLater`);
 * - a tight list is cut into parts of its own (`listCut`), joined here by
 *   the classes `list-continues` / `list-continued` (no gap between them);
 * - a tail that took more than `SLOW_MS` to render is not rendered again
 *   before `SPACING` times that cost has passed: the input keeps most of
 *   the main thread, and a timer shows the latest text when the stream
 *   pauses or ends (then `onLate` runs, so the view follows the output).
 * `data-rendered-at` on the root (epoch ms) is the last time its text
 * changed in the DOM (the editor tests' rendering figure).
 */
import { BlockSplitter, type OpenFence } from '../src/chat/blocks';
import { codeBlock, highlightLater, renderMarkdown } from './markdown';

const PAGE = 4000;
const SLOW_MS = 8;
const SPACING = 4;
/** A line that may be the start of a closing fence: not shown until it is complete. */
const MAYBE_CLOSE = /^ {0,3}(`+|~+)$/;

/** Complete lines of an open fence per block of their own (a line added lays out only its block). */
const CHUNK_LINES = 40;

interface LiveFence {
  start: number;
  /** The text up to here is in the block's `code` (complete lines). */
  shown: number;
  partial: Text;
  chunk: HTMLElement | undefined;
  lines: number;
}

export class StreamedMarkdown {
  private splitter = new BlockSplitter();
  private text = '';
  private rendered = 0;
  private page: HTMLElement | undefined;
  private pageStart = 0;
  private readonly closed: HTMLElement;
  private readonly tail: HTMLElement;
  private live: LiveFence | undefined;
  private tailShown: string | undefined;
  private notBefore = 0;
  private timer: number | undefined;

  constructor(
    private readonly root: HTMLElement,
    private readonly onLate: () => void = () => undefined,
  ) {
    this.closed = document.createElement('div');
    this.closed.className = 'md-closed';
    this.tail = document.createElement('div');
    this.tail.className = 'md-tail';
    root.replaceChildren(this.closed, this.tail);
  }

  /** Show `text`. */
  show(text: string): void {
    if (text === this.text) return;
    if (!text.startsWith(this.text)) {
      this.splitter = new BlockSplitter();
      this.rendered = 0;
      this.page = undefined;
      this.closed.replaceChildren();
      this.live = undefined;
      this.tailShown = undefined;
    }
    this.text = text;
    const closed = this.splitter.closedUpTo(text);
    let changed = false;
    if (closed > this.rendered) {
      this.append(text.slice(this.rendered, closed), this.rendered, closed);
      this.rendered = closed;
      this.live = undefined;
      this.tailShown = undefined;
      changed = true;
    }
    if (this.showTail(false) || changed) this.stamp();
  }

  /** The node it renders into. */
  get node(): HTMLElement {
    return this.root;
  }

  private stamp(): void {
    this.root.dataset.renderedAt = String(Date.now());
  }

  /** Closed blocks `from`–`to` into the current page (a new one past `PAGE` characters). */
  private append(chunk: string, from: number, to: number): void {
    if (this.page === undefined || from - this.pageStart > PAGE) {
      this.page = document.createElement('div');
      this.page.className = 'md-page';
      this.pageStart = from;
      this.closed.append(this.page);
    }
    const before = this.page.lastElementChild;
    this.page.insertAdjacentHTML('beforeend', renderMarkdown(chunk));
    highlightLater(this.page);
    const first = before === null ? this.page.firstElementChild : before.nextElementSibling;
    if (this.splitter.listCut(from)) first?.classList.add('list-continued');
    if (this.splitter.listCut(to)) this.page.lastElementChild?.classList.add('list-continues');
  }

  /** Bring the tail up to date (`force`: even if the last render was slow); whether the DOM changed. */
  private showTail(force: boolean): boolean {
    const fence = this.splitter.openFence;
    if (fence !== undefined && !fence.indented && fence.start >= this.rendered) return this.showLive(fence);
    this.live = undefined;
    const tail = this.text.slice(this.rendered);
    if (tail === this.tailShown) return false;
    const now = performance.now();
    if (!force && now < this.notBefore) {
      this.timer ??= window.setTimeout(() => {
        this.timer = undefined;
        if (this.showTail(true)) {
          this.stamp();
          this.onLate();
        }
      }, this.notBefore - now);
      return false;
    }
    if (this.timer !== undefined) window.clearTimeout(this.timer);
    this.timer = undefined;
    this.tail.innerHTML = renderMarkdown(tail);
    highlightLater(this.tail);
    this.markContinued();
    this.tailShown = tail;
    const cost = performance.now() - now;
    this.notBefore = cost > SLOW_MS ? performance.now() + SPACING * cost : 0;
    return true;
  }

  /** The tail ends in an open fence: what precedes it rendered once, its lines appended as text. */
  private showLive(fence: OpenFence): boolean {
    let live = this.live;
    if (live === undefined || live.start !== fence.start) {
      this.tail.innerHTML = renderMarkdown(this.text.slice(this.rendered, fence.start)) + codeBlock(fence.lang, '');
      highlightLater(this.tail);
      this.markContinued();
      const blocks = this.tail.querySelectorAll('.code > pre > code');
      const partial = document.createTextNode('');
      blocks[blocks.length - 1]?.append(partial);
      live = { start: fence.start, shown: fence.body, partial, chunk: undefined, lines: 0 };
      this.live = live;
      this.tailShown = undefined;
    }
    const complete = this.text.lastIndexOf('\n') + 1;
    if (complete > live.shown) {
      const lines = this.text.slice(live.shown, complete);
      if (live.chunk === undefined || live.lines >= CHUNK_LINES) {
        live.chunk = document.createElement('span');
        live.chunk.className = 'live-lines';
        live.partial.before(live.chunk);
        live.lines = 0;
      }
      live.chunk.append(lines);
      live.lines += lines.split('\n').length - 1;
      live.shown = complete;
    }
    const line = this.text.slice(live.shown);
    const partial = MAYBE_CLOSE.test(line) ? '' : line;
    if (partial !== live.partial.data) live.partial.data = partial;
    return true;
  }

  /** A tail that starts inside a tight list continues the closed part's list. */
  private markContinued(): void {
    if (this.splitter.listCut(this.rendered)) this.tail.firstElementChild?.classList.add('list-continued');
  }
}
