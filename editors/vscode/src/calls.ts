/**
 * How a tool call reads, from the server's tool facts (`tools.ts`, generated
 * from rhema_lsp/tools/facts.py).
 *
 * Contract: a tool of the server's is shown by its own main argument (and
 * `main → target` for one that moves something); a tool not the server's (an
 * MCP server's) by the first of `FALLBACK_ARGUMENTS` it has. A successful
 * call of a tool that changes files refreshes the changed-files card. Pure:
 * no `vscode` import.
 */
import type { RhemaEvent } from './contract';
import { FALLBACK_ARGUMENTS, FILE_TOOLS, TOOLS } from './tools';

/** A call's main argument: its name, its value, and where it goes (if the tool moves something). */
export interface MainArgument {
  key: string;
  value: string;
  target?: string;
}

/** The main argument of a call of `name` with these parsed arguments, if it has one. */
export function mainArgument(name: string, args: unknown): MainArgument | undefined {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return undefined;
  const record = args as Record<string, unknown>;
  const facts = Object.prototype.hasOwnProperty.call(TOOLS, name) ? TOOLS[name] : undefined;
  const keys = facts === undefined ? FALLBACK_ARGUMENTS : facts.main === null ? [] : [facts.main];
  for (const key of keys) {
    const value = record[key];
    if (typeof value !== 'string' || value.length === 0) continue;
    const target = facts?.target ? record[facts.target] : undefined;
    return typeof target === 'string' ? { key, value, target } : { key, value };
  }
  return undefined;
}

/** Whether this event is a successful call of a tool that changes files. */
export function changedFiles(event: RhemaEvent): boolean {
  return event.type === 'tool_result' && !event.isError && FILE_TOOLS.has(event.name);
}
