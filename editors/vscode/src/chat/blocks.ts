/**
 * Where a streaming Markdown text can be cut so that the part before the cut
 * never renders differently, whatever arrives after it: the chat renders
 * that closed part once and re-renders only the tail (the cost of an update
 * is the tail's, not the answer's).
 *
 * A cut is made only at the start of a line that begins a new top-level
 * block after a blank line: outside a fenced code block, not indented (an
 * indented line may continue a list item or an indented code block), and
 * not a list item continuing an open list (splitting a loose list would
 * render two lists); and right after the closing line of a fence that
 * opened unindented (nothing after it can change the code block). Anything
 * else stays in the tail, so the rule errs towards re-rendering, never
 * towards a wrong rendering, with two exceptions: a reference-style link
 * defined after a cut does not resolve before it (models rarely write
 * them), and a tight list (no blank line yet) is cut before one of its
 * items every `LIST_CHUNK` characters, so a list of thousands of items
 * does not re-render whole on each update: its parts render as lists of
 * their own (`listCuts` says where, for the view to join them), which a
 * blank line arriving later between two items would render loose. The text
 * only grows; each call scans only the lines completed since the last one.
 * `openFence` tells where a fence still open starts, so the view can stream
 * its lines as plain text instead of rendering it again on each update.
 * Pure: unit-tested in Node, used by the webview.
 */

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const LIST_ITEM = /^(?:[*+-]|\d{1,9}[.)])(?:[ \t]|$)/;

/** Characters of a tight list between two cuts inside it. */
export const LIST_CHUNK = 2000;

/** A fenced code block still open: where its opening line starts, where its body starts, its language. */
export interface OpenFence {
  start: number;
  body: number;
  lang: string;
  /** The opening line was indented (a list item's code): the view renders it as Markdown. */
  indented: boolean;
}

export class BlockSplitter {
  private closed = 0;
  private scanned = 0;
  private fence: { char: string; length: number; open: OpenFence } | undefined;
  private blankBefore = false;
  private listOpen = false;
  private listTight = false;
  private readonly cuts = new Set<number>();

  /** The offset up to which `text` (a longer version of the text of the previous call) is closed blocks. */
  closedUpTo(text: string): number {
    for (;;) {
      const end = text.indexOf('\n', this.scanned);
      if (end < 0) return this.closed;
      this.line(text.slice(this.scanned, end), this.scanned, end + 1);
      this.scanned = end + 1;
    }
  }

  /** The fence open at the end of the lines scanned so far, if any. */
  get openFence(): OpenFence | undefined {
    return this.fence?.open;
  }

  /** Whether the cut at `offset` is inside a tight list (the lists on both sides are one). */
  listCut(offset: number): boolean {
    return this.cuts.has(offset);
  }

  private line(line: string, start: number, next: number): void {
    if (this.fence !== undefined) {
      const close = FENCE.exec(line);
      const marker = close?.[1];
      if (marker !== undefined && marker[0] === this.fence.char && marker.length >= this.fence.length && line.trim() === marker) {
        if (!this.fence.open.indented) {
          this.closed = next;
          this.listOpen = false;
        }
        this.fence = undefined;
      }
      this.blankBefore = false;
      return;
    }
    if (line.trim() === '') {
      this.blankBefore = true;
      return;
    }
    const indented = line[0] === ' ' || line[0] === '\t';
    const item = LIST_ITEM.test(line);
    if (!indented) {
      if (this.blankBefore && !(item && this.listOpen) && start > 0) this.closed = start;
      if (item && this.listOpen && this.blankBefore) this.listTight = false;
      if (item && this.listOpen && this.listTight && !this.blankBefore && start - this.closed >= LIST_CHUNK) {
        this.closed = start;
        this.cuts.add(start);
      }
      if (item && !this.listOpen) this.listTight = true;
      if (item) this.listOpen = true;
      else if (this.blankBefore) this.listOpen = false;
    } else if (this.blankBefore) {
      this.listTight = false;
    }
    const open = FENCE.exec(line)?.[1];
    if (open !== undefined && !(open[0] === '`' && line.slice(line.indexOf(open) + open.length).includes('`'))) {
      const info = line.slice(line.indexOf(open) + open.length).trim();
      const lang = (info.split(/\s+/, 1)[0] ?? '').replace(/[^\w+#-]/g, '');
      this.fence = { char: open[0] ?? '`', length: open.length, open: { start, body: next, lang, indented } };
    }
    this.blankBefore = false;
  }
}
