/**
 * Line diffs for the chat: the +/− counts of a changed file (its checkpoint
 * before the turn against its text now) and the inline diff of an edit
 * card (`edit_file`'s old and new text, `write_file`'s content).
 *
 * Myers' O(ND) algorithm over lines; past `MAX_EDITS` differences it stops
 * looking for the shortest script and counts the lines each side has that
 * the other lacks (a close upper bound, cheap on huge rewrites). Pure:
 * unit-tested in Node, shared by the extension and the webview.
 */

/** One line of a diff: kept, added or removed. */
export interface DiffLine {
  op: ' ' | '+' | '-';
  text: string;
}

const MAX_EDITS = 2000;

export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The shortest line diff from `before` to `after`, or `undefined` past `MAX_EDITS` edits. */
export function diffLines(before: string, after: string): DiffLine[] | undefined {
  const a = splitLines(before);
  const b = splitLines(after);
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_EDITS);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && (v[offset + k - 1] ?? 0) < (v[offset + k + 1] ?? 0))
          ? (v[offset + k + 1] ?? 0)
          : (v[offset + k - 1] ?? 0) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, a, b, offset, d);
    }
  }
  return undefined;
}

function backtrack(trace: Int32Array[], a: string[], b: string[], offset: number, depth: number): DiffLine[] {
  const out: DiffLine[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = depth; d > 0; d--) {
    const v = trace[d] ?? new Int32Array(0);
    const k = x - y;
    const down = k === -d || (k !== d && (v[offset + k - 1] ?? 0) < (v[offset + k + 1] ?? 0));
    const prevK = down ? k + 1 : k - 1;
    const prevX = v[offset + prevK] ?? 0;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      y--;
      out.push({ op: ' ', text: a[--x] ?? '' });
    }
    if (down) out.push({ op: '+', text: b[--y] ?? '' });
    else out.push({ op: '-', text: a[--x] ?? '' });
  }
  while (x > 0 && y > 0) {
    y--;
    out.push({ op: ' ', text: a[--x] ?? '' });
  }
  return out.reverse();
}

/** Lines added and removed from `before` to `after`. */
export function diffCounts(before: string, after: string): { added: number; removed: number } {
  const lines = diffLines(before, after);
  if (lines !== undefined) {
    return { added: lines.filter((l) => l.op === '+').length, removed: lines.filter((l) => l.op === '-').length };
  }
  const count = (lines: string[]): Map<string, number> => {
    const counts = new Map<string, number>();
    for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
    return counts;
  };
  const left = count(splitLines(before));
  const right = count(splitLines(after));
  const missing = (from: Map<string, number>, to: Map<string, number>): number =>
    [...from].reduce((sum, [line, n]) => sum + Math.max(0, n - (to.get(line) ?? 0)), 0);
  return { added: missing(right, left), removed: missing(left, right) };
}

/** The inline diff a file tool's arguments describe, if they can be read (still streaming: none). */
export function toolDiff(name: string, args: string): DiffLine[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const record = parsed as Record<string, unknown>;
  if (name === 'edit_file' && typeof record.old_text === 'string' && typeof record.new_text === 'string') {
    return diffLines(record.old_text, record.new_text);
  }
  if (name === 'write_file' && typeof record.content === 'string') {
    return splitLines(record.content).map((text) => ({ op: '+', text }));
  }
  return undefined;
}
