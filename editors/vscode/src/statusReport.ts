/**
 * "Rhema: Show Status" as a document: the whole `rhema.status` in Markdown,
 * shown read-only in an editor tab (a virtual `rhema-status:` document) so
 * nothing is cut off: the server, the provider (or why none works and what
 * to do), which model completes as you type, whether commands run in a
 * sandbox, the folders, the session, the project rules in use (and any
 * refused, with why), the skills and custom commands, who answers the
 * language tools and the MCP servers.
 *
 * Pure: unit-tested in Node; `statusDocument.ts` shows it.
 */
import type { StatusResult } from './contract';
import { mcpServerLine } from './mcpText';

/** The status as Markdown; `session`: the session the window shows. */
export function statusReport(status: StatusResult, session: string | undefined): string {
  const { provider } = status;
  const lines = ['# Rhema status', '', `- **Server**: rhema-lsp ${status.version}`];
  if (provider.error) {
    lines.push(`- **Provider**: none works: ${provider.error}`);
  } else {
    const who = [provider.name, provider.model].filter(Boolean).join(' / ');
    lines.push(`- **Provider**: ${who}${provider.source ? ` (${provider.source})` : ''}`);
  }
  if (provider.baseUrl) lines.push(`- **Base URL**: ${provider.baseUrl}`);
  const completion = status.completion;
  if (completion) {
    const who = [completion.provider, completion.model].filter(Boolean).join(' / ') || 'the chat model';
    lines.push(`- **Completes as you type**: ${completion.enabled ? who : 'off'}`);
  }
  if (status.sandbox) lines.push(`- **Commands**: ${status.sandbox}`);
  lines.push(
    `- **Mode**: ${status.mode}`,
    `- **Folders**: ${status.folders.join(', ') || '(none)'}`,
    `- **Session**: ${session ?? '(new)'}`,
    `- **Running**: ${status.running.join(', ') || 'nothing'}`,
    '',
    '## Project rules',
    '',
  );
  if (status.rules.length === 0) lines.push('None (no AGENTS.md or CLAUDE.md found).');
  for (const rules of status.rules) {
    if (rules.refused !== null) {
      lines.push(`- ${rules.path}: not read (${rules.refused})`);
    } else {
      lines.push(`- ${rules.path} (${rules.scope}, ${rules.bytes.toLocaleString('en')} bytes${rules.truncated ? ', cut' : ''})`);
    }
  }
  lines.push('', '## Skills and commands', '');
  if (status.extensions.length === 0) lines.push('None (no SKILL.md or command files found).');
  for (const item of status.extensions) {
    const what = `${item.kind} /${item.name}`;
    if (item.problem !== null) lines.push(`- ${what} (${item.path}): not used (${item.problem})`);
    else lines.push(`- ${what}${item.description ? `: ${item.description}` : ''} (${item.path})`);
  }
  lines.push('', '## Language tools', '');
  lines.push(
    status.languageAnswers === 'editor'
      ? "Answered by the editor's language features, then by the agent's own servers:"
      : "Answered by the agent's own servers:",
  );
  if (status.languageServers.length === 0) lines.push('', 'No language server found.');
  else lines.push('');
  for (const server of status.languageServers) {
    const where = server.folder ? ` in ${server.folder}` : '';
    const pid = server.pid ? ` (pid ${server.pid})` : '';
    lines.push(`- ${server.language}: ${server.name}, ${server.state}${where}${pid}`);
  }
  lines.push('', '## MCP servers', '');
  if (status.mcpServers.length === 0) lines.push('None configured.');
  for (const server of status.mcpServers) lines.push(`- ${mcpServerLine(server)}`);
  return `${lines.join('\n')}\n`;
}
