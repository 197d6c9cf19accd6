/**
 * `@` mentions in a chat prompt: `@file` (the active editor's file),
 * `@file:<path>` (a workspace-relative path; quotes for spaces:
 * `@file:"my file.py"`), `@selection` (the active editor's selection) and
 * `@problems` (the workspace's errors and warnings), and
 * `@mcp:<server>:<uri>` (a resource an MCP server lists, from
 * `rhema.mcpResources`; quotes for spaces: `@mcp:notes:"a b"`). The
 * extension turns them into `context` refs (diagnostics included; a resource
 * as `{server, uri}`, which the server reads through the MCP server); the
 * prompt text keeps them, so the model reads what the user wrote. Pure:
 * unit-tested in Node, shared by the extension and the webview.
 */
import type { McpResourceInfo } from '../contract';

export type Mention =
  | { kind: 'file'; path?: string }
  | { kind: 'selection' }
  | { kind: 'problems' }
  | { kind: 'resource'; server: string; uri: string };

/** The words the view completes after `@`. */
export const MENTION_WORDS = ['file', 'file:', 'selection', 'problems'] as const;

const MENTION =
  /(^|\s)@(file(?::(?:"([^"]+)"|(\S+)))?|selection|problems|mcp:([^\s:"]+):(?:"([^"]+)"|(\S+)))(?=$|[\s,.;:!?)])/g;

/** The mentions of `text`, in order, without duplicates. */
export function parseMentions(text: string): Mention[] {
  const found: Mention[] = [];
  const seen = new Set<string>();
  for (const match of text.matchAll(MENTION)) {
    const word = match[2] ?? '';
    let mention: Mention;
    if (word.startsWith('mcp:')) {
      const uri = match[6] ?? trimPunctuation(match[7] ?? '');
      mention = { kind: 'resource', server: match[5], uri };
    } else if (word.startsWith('file')) {
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
  if (mention.kind === 'resource') return resourceWord(mention.server, mention.uri);
  return `@${mention.kind}`;
}

/** The `@word` being typed at `caret` in `text`, for completion, if any. */
export function mentionAt(text: string, caret: number): { start: number; word: string } | undefined {
  const before = text.slice(0, caret);
  const match = /(^|\s)@([\w:]*)$/.exec(before);
  if (match === null) return undefined;
  return { start: caret - match[2].length - 1, word: match[2] };
}

/** The mention of an MCP server's resource, as typed (`@` included). */
export function resourceWord(server: string, uri: string): string {
  return /[\s"]/.test(uri) ? `@mcp:${server}:"${uri}"` : `@mcp:${server}:${uri}`;
}

/** The resources a typed `@word` may complete to: `mcp:…` prefixes, or the name or URI typed. */
export function resourceMatches(resources: readonly McpResourceInfo[], word: string): McpResourceInfo[] {
  const lower = word.toLowerCase();
  return resources.filter((resource) => {
    const typed = resourceWord(resource.server, resource.uri).slice(1).toLowerCase();
    return typed.startsWith(lower) || resource.name.toLowerCase().startsWith(lower) || (lower !== '' && typed.includes(lower));
  });
}
