/**
 * The palette's session commands that run no model: pick a session to
 * open, undo the last turn, rewind, show a turn's changes, compact, and the
 * status in the "Rhema" channel.
 *
 * Each asks the extension (`SessionHost`) for the server and the current
 * session and says plainly when there is none yet. Undoing saves the
 * documents that were clean before the turn, so they stay clean. After a
 * rewind or an undo the chat shows the session again as the store now has
 * it (the turns taken back gone, the restored files' changes no longer
 * offered to accept), with a line saying what went back.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { rewind, saveDocuments, showChanges } from './checkpoints';
import { execute } from './client';
import {
  ServerCommand,
  statusSummary,
  type CompactResult,
  type SessionSummary,
  type StatusResult,
  type UndoResult,
  type UndoTurnArgs,
} from './protocol';
import type { RewindResult } from './contract';
import { ERROR_GLYPH } from './render';
import { mcpStatusLines } from './mcp';

/** What the session commands need of the extension. */
export interface SessionHost {
  readonly session: string | undefined;
  readonly output: vscode.OutputChannel;
  start(): Promise<LanguageClient>;
  /** Show the current session in the chat again, as the store now has it, with `notice` under it. */
  redrawChat(notice: string): Promise<void>;
}

/** A stored timestamp for a picker: local date and time to the minute. */
export function formatWhen(iso: string): string {
  const when = new Date(iso);
  if (Number.isNaN(when.getTime())) return iso;
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${when.getFullYear()}-${pad(when.getMonth() + 1)}-${pad(when.getDate())} ${pad(when.getHours())}:${pad(when.getMinutes())}`;
}

/** "Rhema: Open Session…": the session picked, if any. */
export async function pickSession(host: SessionHost, folder: string | undefined): Promise<string | undefined> {
  const client = await host.start();
  const sessions = await execute<SessionSummary[]>(client, ServerCommand.sessions, folder ? { folder } : {});
  if (sessions.length === 0) {
    void vscode.window.showInformationMessage('Rhema: no sessions yet. Ask something in the chat to start one.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    sessions.map((session) => ({
      label: session.title || session.session,
      description: `${session.turns} turn${session.turns === 1 ? '' : 's'}${session.running ? ' · running' : ''}`,
      detail: `${formatWhen(session.updatedAt)} · ${session.folder}`,
      session,
    })),
    { title: 'Rhema: Open Session', placeHolder: 'Pick a session to continue', matchOnDetail: true },
  );
  return picked?.session.session;
}

function current(host: SessionHost, what: string): string | undefined {
  if (host.session === undefined) void vscode.window.showInformationMessage(`Rhema: no session ${what}. Open one first.`);
  return host.session;
}

export async function undoLastTurn(host: SessionHost): Promise<void> {
  const session = current(host, 'to undo in');
  if (session === undefined) return;
  const args: UndoTurnArgs = { session };
  const result = await execute<UndoResult>(await host.start(), ServerCommand.undoTurn, args);
  // Documents that were clean before the turn are saved, so undoing leaves them clean.
  await saveDocuments(result.save ?? []);
  await host.redrawChat(`↶ Undid the last turn's changes: ${result.reverted.length} file(s) reverted.`);
  host.output.appendLine(
    `↶ Undo: reverted ${result.reverted.length} file(s)${result.conflicts.length ? `, ${result.conflicts.length} conflict(s)` : ''}`,
  );
  if (result.conflicts.length > 0) {
    void vscode.window.showWarningMessage(
      `Rhema: ${result.conflicts.length} file(s) changed since the turn and were left as they are: ${result.conflicts.join(', ')}`,
    );
  } else {
    void vscode.window.showInformationMessage(`Rhema: reverted ${result.reverted.length} file(s).`);
  }
}

export async function rewindTo(host: SessionHost): Promise<void> {
  const session = current(host, 'to rewind');
  if (session === undefined) return;
  await rewind(await host.start(), session, host.output, (result) => host.redrawChat(rewindNotice(result)));
}

/** The chat's line after a rewind: what went back, in words (the channel has the detail). */
export function rewindNotice(result: RewindResult): string {
  const parts: string[] = [];
  if (result.what !== 'conversation') {
    parts.push(`${result.restored.length} file${result.restored.length === 1 ? '' : 's'} restored`);
    if (result.conflicts.length > 0) parts.push(`${result.conflicts.length} changed since left as they are`);
  }
  if (result.what !== 'code') parts.push(`turn ${result.turn} and after taken out of the conversation`);
  return `↶ Rewound to before turn ${result.turn}: ${parts.join(', ')}.`;
}

export async function showSessionChanges(host: SessionHost): Promise<void> {
  const session = current(host, 'yet');
  if (session !== undefined) await showChanges(await host.start(), session);
}

export async function compactSession(host: SessionHost): Promise<void> {
  const session = current(host, 'to compact');
  if (session === undefined) return;
  const result = await execute<CompactResult>(await host.start(), ServerCommand.compact, { session });
  if (!result.compacted) {
    void vscode.window.showInformationMessage('Rhema: nothing to compact yet: only the latest round is there.');
  }
}

/** The status in the channel (a warning when no provider works); the status, for the caller (its tab). */
export async function showStatus(host: SessionHost): Promise<StatusResult> {
  const status = await execute<StatusResult>(await host.start(), ServerCommand.status, {});
  const summary = statusSummary(status);
  host.output.appendLine(`ℹ ${summary}`);
  if (status.provider.error) host.output.appendLine(`  ${ERROR_GLYPH} ${status.provider.error}`);
  if (status.provider.baseUrl) host.output.appendLine(`  base URL: ${status.provider.baseUrl}`);
  host.output.appendLine(`  folders: ${status.folders.join(', ') || '(none)'}`);
  host.output.appendLine(`  session: ${host.session ?? '(new)'}`);
  if (status.running.length > 0) host.output.appendLine(`  running: ${status.running.join(', ')}`);
  for (const line of mcpStatusLines(status)) host.output.appendLine(line);
  if (status.provider.error) {
    void vscode.window.showWarningMessage('Rhema: no model provider works yet: choose one in the chat.');
  }
  return status;
}
