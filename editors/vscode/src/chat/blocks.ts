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
 * render two lists). Anything else stays in the tail, so the rule errs
 * towards re-rendering, never towards a wrong rendering (one exception: a
 * reference-style link defined after a cut does not resolve before it;
 * models rarely write them). The text only grows; each call scans only the lines completed since the last one. Pure:
 * unit-tested in Node, used by the webview.
 */

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const LIST_ITEM = /^(?:[*+-]|\d{1,9}[.)])(?:[ \t]|$)/;

export class BlockSplitter {
  private closed = 0;
  private scanned = 0;
  private fence: { char: string; length: number } | undefined;
  private blankBefore = false;
  private listOpen = false;

  /** The offset up to which `text` (a longer version of the text of the previous call) is closed blocks. */
  closedUpTo(text: string): number {
    for (;;) {
      const end = text.indexOf('\n', this.scanned);
      if (end < 0) return this.closed;
      this.line(text.slice(this.scanned, end), this.scanned);
      this.scanned = end + 1;
    }
  }

  private line(line: string, start: number): void {
    if (this.fence !== undefined) {
      const close = FENCE.exec(line);
      const marker = close?.[1];
      if (marker !== undefined && marker[0] === this.fence.char && marker.length >= this.fence.length && line.trim() === marker) {
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
      if (item) this.listOpen = true;
      else if (this.blankBefore) this.listOpen = false;
    }
    const open = FENCE.exec(line)?.[1];
    if (open !== undefined && !(open[0] === '`' && line.slice(line.indexOf(open) + open.length).includes('`'))) {
      this.fence = { char: open[0] ?? '`', length: open.length };
    }
    this.blankBefore = false;
  }
}
