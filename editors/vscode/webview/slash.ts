/**
 * The input's slash commands in the webview: the MCP servers' prompts, asked
 * of the extension the first time `/` starts the input (and again after each
 * send, since servers come and go), offered while the first word is typed.
 * A command completes to `/command ` and the user types its arguments after
 * it; the extension fills the prompt in when it is sent.
 */
import type { McpPromptInfo } from '../src/contract';
import type { FromView } from '../src/chat/messages';
import { slashAt, slashDetail, slashMatches } from '../src/chat/slash';

export interface SlashItem {
  command: string;
  detail: string;
}

export class SlashList {
  private prompts: McpPromptInfo[] | undefined;
  private asked = false;
  private error: string | undefined;

  constructor(private readonly post: (message: FromView) => void) {}

  /** The extension's answer to `listPrompts`. */
  listed(prompts: McpPromptInfo[], error?: string): void {
    this.prompts = prompts;
    this.error = error;
  }

  /** List them again when next asked (after a send). */
  stale(): void {
    this.asked = false;
  }

  /**
   * What to offer for the input now: none when no command is being typed;
   * items, or a note while they load or when none matches.
   */
  suggestions(value: string, caret: number): { items: SlashItem[]; note: string } | undefined {
    const at = slashAt(value, caret);
    if (at === undefined) return undefined;
    if (!this.asked) {
      this.asked = true;
      this.post({ type: 'listPrompts' });
    }
    if (this.prompts === undefined) return { items: [], note: 'Listing the MCP servers’ prompts…' };
    if (this.prompts.some((prompt) => prompt.command === at.word)) return undefined; // typed in full
    const items = slashMatches(this.prompts, at.word).map((prompt) => ({ command: prompt.command, detail: slashDetail(prompt) }));
    if (items.length > 0) return { items, note: '' };
    if (this.error !== undefined) return { items, note: `No MCP prompts: ${this.error}` };
    if (this.prompts.length === 0) return { items, note: 'No MCP server offers prompts (agent mode starts them).' };
    return { items, note: `No MCP prompt starts with /${at.word}` };
  }

  /** The input with its first word replaced by `word` (a `/command`) and a space. */
  complete(value: string, caret: number, word: string): string {
    return `${word} ${value.slice(caret).replace(/^\S*\s?/, '')}`;
  }
}
