/**
 * `@` mentions in a chat prompt: `@file` (the active editor's file),
 * `@file:<path>` (a workspace-relative path; quotes for spaces:
 * `@file:"my file.py"`), `@selection` (the active editor's selection) and
 * `@problems` (the workspace's errors and warnings). The extension turns
 * them into `context` refs (diagnostics included); the prompt text keeps
 * them, so the model reads what the user wrote. Pure: unit-tested in Node.
 */

export type Mention = { kind: 'file'; path?: string } | { kind: 'selection' } | { kind: 'problems' };

/** The words the view completes after `@`. */
export const MENTION_WORDS = ['file', 'file:', 'selection', 'problems'] as const;

const MENTION = /(^|\s)@(file(?::(?:"([^"]+)"|(\S+)))?|selection|problems)(?=$|[\s,.;:!?)])/g;

/** The mentions of `text`, in order, without duplicates. */
export function parseMentions(text: string): Mention[] {
  const found: Mention[] = [];
  const seen = new Set<string>();
  for (const match of text.matchAll(MENTION)) {
    const word = match[2] ?? '';
    let mention: Mention;
    if (word.startsWith('file')) {
      const path = match[3] ?? match[4];
      mention = path === undefined ? { kind: 'file' } : { kind: 'file', path: trimPunctuation(path) };
    } else {
      mention = { kind: word as 'selection' | 'problems' };
    }
    const key = JSON.stringify(mention);
    if (!seen.has(key)) {
      seen.add(key);
      found.push(mention);
    }
  }
  return found;
}

function trimPunctuation(path: string): string {
  return path.replace(/[,.;:!?)]+$/, '');
}

/** How a mention reads on the user's prompt card. */
export function mentionLabel(mention: Mention): string {
  if (mention.kind === 'file') return mention.path === undefined ? '@file' : `@file:${mention.path}`;
  return `@${mention.kind}`;
}

/** The `@word` being typed at `caret` in `text`, for completion, if any. */
export function mentionAt(text: string, caret: number): { start: number; word: string } | undefined {
  const before = text.slice(0, caret);
  const match = /(^|\s)@([\w:]*)$/.exec(before);
  if (match === null) return undefined;
  return { start: caret - match[2].length - 1, word: match[2] };
}
