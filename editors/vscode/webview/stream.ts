/**
 * Streaming Markdown into one node at the cost of what changed: the blocks
 * no later text can change (`BlockSplitter`) are rendered once and
 * appended; only the tail after them is rendered again on each update. A
 * text that is not a continuation of the one shown (another item reusing the
 * node) starts over. Closed blocks go into pages of about `PAGE` characters
 * whose layout and paint the browser skips while they are off screen
 * (`content-visibility: auto`), so a long answer costs what is visible.
 */
import { BlockSplitter } from '../src/chat/blocks';
import { renderMarkdown } from './markdown';

const PAGE = 4000;

export class StreamedMarkdown {
  private splitter = new BlockSplitter();
  private text = '';
  private rendered = 0;
  private page: HTMLElement | undefined;
  private pageStart = 0;
  private readonly closed: HTMLElement;
  private readonly tail: HTMLElement;

  constructor(private readonly root: HTMLElement) {
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
    }
    this.text = text;
    const closed = this.splitter.closedUpTo(text);
    if (closed > this.rendered) {
      if (this.page === undefined || this.rendered - this.pageStart > PAGE) {
        this.page = document.createElement('div');
        this.page.className = 'md-page';
        this.pageStart = this.rendered;
        this.closed.append(this.page);
      }
      this.page.insertAdjacentHTML('beforeend', renderMarkdown(text.slice(this.rendered, closed)));
      this.rendered = closed;
    }
    this.tail.innerHTML = renderMarkdown(text.slice(this.rendered));
  }

  /** The node it renders into. */
  get node(): HTMLElement {
    return this.root;
  }
}
