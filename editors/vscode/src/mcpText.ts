/**
 * How an MCP server's state reads in VS Code (the servers' picker, the
 * status in the channel): a failed server with its reason, one waiting for
 * the user's sign-in with the page to open. Pure: unit-tested in Node.
 */
import type { McpServerStatus } from './contract';

/** What a state means to the user. */
const STATES: Record<McpServerStatus['state'], string> = {
  idle: 'not started yet (starts with the first agent turn)',
  starting: 'starting',
  ready: 'ready',
  restarting: 'restarting',
  authorizing: 'waiting for you to sign in',
  failed: 'failed',
  stopped: 'stopped',
  disabled: 'disabled',
};

/** One server's state, on one line: `name: ready (stdio, 3 tools)`, `name: failed — reason`. */
export function mcpServerLine(server: McpServerStatus): string {
  return `${server.name}: ${mcpServerState(server)}`;
}

/** A server's state without its name; `reason`: with the reason when it failed or waits. */
export function mcpServerState(server: McpServerStatus, reason = true): string {
  const facts: string[] = [server.transport];
  if (server.state === 'ready') facts.push(`${server.tools} tool${server.tools === 1 ? '' : 's'}`);
  if (server.restarts > 0) facts.push(`${server.restarts} restart${server.restarts === 1 ? '' : 's'}`);
  if (server.deferred) facts.push('tools behind find_tools');
  if (server.source !== 'settings') facts.push(server.source);
  const why = reason && server.error && server.state !== 'ready' ? ` — ${server.error}` : '';
  return `${STATES[server.state]} (${facts.join(', ')})${why}`;
}

/** Whether a server needs the user: it failed, or waits for a sign-in. */
export function mcpNeedsYou(server: McpServerStatus): boolean {
  return server.state === 'failed' || server.state === 'authorizing';
}
