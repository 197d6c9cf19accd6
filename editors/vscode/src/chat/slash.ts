/**
 * Slash commands in a chat prompt: the MCP servers' prompts
 * (`rhema.mcpPrompts`), typed as `/mcp__<server>__<prompt> words…` at the
 * start of the prompt. The words fill the prompt's arguments: `name=value`
 * names one, the others go to the arguments not named, in order, the last
 * taking the rest of the line. The extension asks for a required argument
 * still missing, then sends the prompt's text (`rhema.mcpPrompt`) as the
 * turn. Pure (types only from the contract): unit-tested in Node, shared by
 * the extension and the webview.
 */
import type { McpPromptArgument, McpPromptInfo } from '../contract';

/** A slash command of the prompt, read against the known prompts. */
export interface SlashCommand {
  prompt: McpPromptInfo;
  /** The arguments the words gave. */
  values: Record<string, string>;
  /** The required arguments the words did not give. */
  missing: McpPromptArgument[];
}

const COMMAND = /^\/(\S+)(?:\s+([\s\S]*))?$/;

/** The `/command` being typed at `caret`: only in the prompt's first word. */
export function slashAt(text: string, caret: number): { word: string } | undefined {
  const before = text.slice(0, caret);
  const match = /^\/(\S*)$/.exec(before);
  return match === null ? undefined : { word: match[1] };
}

/** The prompts whose command starts with `word` (the command's name or its prompt's). */
export function slashMatches(prompts: readonly McpPromptInfo[], word: string): McpPromptInfo[] {
  const lower = word.toLowerCase();
  return prompts.filter(
    (prompt) => prompt.command.toLowerCase().startsWith(lower) || prompt.name.toLowerCase().startsWith(lower),
  );
}

/** Whether `text` starts with what looks like a slash command. */
export function isSlash(text: string): boolean {
  return COMMAND.test(text.trim());
}

/** `text` as a slash command of one of `prompts`; none when its command names none. */
export function parseSlash(text: string, prompts: readonly McpPromptInfo[]): SlashCommand | undefined {
  const match = COMMAND.exec(text.trim());
  if (match === null) return undefined;
  const prompt = prompts.find((candidate) => candidate.command === match[1]);
  if (prompt === undefined) return undefined;
  const values: Record<string, string> = {};
  const names = new Set(prompt.arguments.map((argument) => argument.name));
  const loose: string[] = [];
  for (const word of (match[2] ?? '').trim().split(/\s+/).filter(Boolean)) {
    const named = /^([^=\s]+)=(.*)$/.exec(word);
    if (named !== null && names.has(named[1])) values[named[1]] = named[2];
    else loose.push(word);
  }
  const open = prompt.arguments.filter((argument) => !(argument.name in values));
  open.forEach((argument, index) => {
    const words = index === open.length - 1 ? loose.splice(0) : loose.splice(0, 1);
    if (words.length > 0) values[argument.name] = words.join(' ');
  });
  const missing = prompt.arguments.filter((argument) => argument.required && !values[argument.name]);
  return { prompt, values, missing };
}

/** How a prompt reads in the completion list: its arguments and description. */
export function slashDetail(prompt: McpPromptInfo): string {
  const args = prompt.arguments.map((argument) => (argument.required ? argument.name : `[${argument.name}]`));
  const about = prompt.title || prompt.description;
  return [args.join(' '), about].filter(Boolean).join(' — ');
}
