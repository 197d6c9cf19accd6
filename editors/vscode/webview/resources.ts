/**
 * The input's `@mcp:` mentions in the webview: the MCP servers' resources,
 * asked of the extension the first time `@` is typed (and again after each
 * send, since servers come and go), offered beside `@file` and the others
 * while the `@word` is typed. Picking one completes to
 * `@mcp:<server>:<uri> `; the extension attaches it as a `{server, uri}`
 * context ref when the prompt is sent.
 */
import type { McpResourceInfo } from '../src/contract';
import type { FromView } from '../src/chat/messages';
import { resourceMatches, resourceWord } from '../src/chat/mentions';

/** The most resources offered at once (type more of the name to narrow them). */
const SHOWN = 30;

export interface ResourceItem {
  /** What completes after `@` (no `@`). */
  word: string;
  label: string;
  detail: string;
}

export class ResourceList {
  private resources: McpResourceInfo[] | undefined;
  private asked = false;
  private error: string | undefined;

  constructor(private readonly post: (message: FromView) => void) {}

  /** The extension's answer to `listResources`. */
  listed(resources: McpResourceInfo[], error?: string): void {
    this.resources = resources;
    this.error = error;
  }

  /** List them again when next asked (after a send). */
  stale(): void {
    this.asked = false;
  }

  /** The resources to offer for the `@word` being typed (asks for them the first time). */
  suggestions(word: string): ResourceItem[] {
    if (!this.asked) {
      this.asked = true;
      this.post({ type: 'listResources' });
    }
    return resourceMatches(this.resources ?? [], word)
      .slice(0, SHOWN)
      .map((resource) => {
        const typed = resourceWord(resource.server, resource.uri);
        const kind = resource.mimeType ? `, ${resource.mimeType}` : '';
        return { word: typed.slice(1), label: typed, detail: `${resource.name} (MCP ${resource.server}${kind})` };
      });
  }

  /** Why no resource is offered, when the servers could not be listed. */
  get note(): string | undefined {
    return this.error === undefined ? undefined : `Some MCP resources are missing: ${this.error}`;
  }
}
