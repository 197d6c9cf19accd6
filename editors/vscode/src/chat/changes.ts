/**
 * The chat's changed-files list: after each turn the files it changed
 * (`rhema.changes` of that turn), a diff per file (VS Code's diff editor
 * from the checkpoint to the live file), and per-file accept or reject.
 * Accepting marks the file in the view (nothing to undo); rejecting rewinds
 * that file alone (`rhema.rewind` with `paths`), saves it when it was clean
 * before the turn, and reports a conflict when the user changed it since.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { saveDocuments } from '../checkpoints';
import { execute } from '../client';
import { ServerCommand, type ChangedFile, type ChangesResult, type RewindArgs, type RewindResult } from '../contract';
import type { Action } from './messages';

/** The files `turn` changed, as the action that lists them. */
export async function turnChanges(client: LanguageClient, session: string, turn: number): Promise<Action> {
  const result = await execute<ChangesResult>(client, ServerCommand.changes, { session, turn });
  const files = result.turns.find((t) => t.turn === turn)?.files ?? [];
  return { kind: 'changes', session, turn, files };
}

/** Open the diff from a file's checkpoint before `turn` to the file now. */
export async function openDiff(file: ChangedFile, turn: number): Promise<void> {
  const empty = vscode.Uri.from({ scheme: 'untitled', path: `${file.path} (new)` });
  const before = file.before === null ? empty : vscode.Uri.parse(file.before);
  await vscode.commands.executeCommand(
    'vscode.diff',
    before,
    vscode.Uri.parse(file.uri),
    `${file.path} (before turn ${turn}) ↔ now`,
  );
}

/** Reject one file of a turn: rewind its code alone; the decision to show. */
export async function rejectFile(
  client: LanguageClient,
  session: string,
  turn: number,
  uri: string,
): Promise<Action> {
  const args: RewindArgs = { session, turn, what: 'code', force: false, paths: [uri] };
  const result = await execute<RewindResult>(client, ServerCommand.rewind, args);
  await saveDocuments(result.save);
  const conflict = result.conflicts.find((c) => c.uri === uri);
  if (conflict !== undefined) {
    return { kind: 'decision', turn, uri, decision: 'conflict', detail: conflict.reason };
  }
  return { kind: 'decision', turn, uri, decision: 'rejected' };
}
