/**
 * Checkpoints in VS Code: "Rhema: Rewind…", "Rhema: Show Changes…", and the
 * `rhema-checkpoint:` documents their diffs open.
 *
 * The server keeps a pre-image of every file a turn changed. Rewind picks a
 * turn (with the files it changed) and what to take back (code, the
 * conversation, or both), runs `rhema.rewind`, saves the documents the server
 * lists in `save` (they were clean before the turn, so they stay clean), and
 * offers to force files the user changed since. Show Changes opens a diff from
 * a checkpoint to the live file; the diff editor's "Revert Block" rejects one
 * hunk (rewinds it), leaving it accepts it.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { execute } from './client';
import {
  ServerCommand,
  type ChangedFile,
  type ChangesResult,
  type CheckpointContentResult,
  type RewindArgs,
  type RewindResult,
  type TurnChanges,
} from './contract';

export const CHECKPOINT_SCHEME = 'rhema-checkpoint';

type RewindWhat = RewindArgs['what'];

/** Serves `rhema-checkpoint:` documents from the server. */
export class CheckpointContent implements vscode.TextDocumentContentProvider {
  constructor(private readonly client: () => Promise<LanguageClient>) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const result = await execute<CheckpointContentResult>(await this.client(), ServerCommand.checkpointContent, {
      uri: uri.toString(true),
    });
    return result.text;
  }
}

/** Save the documents at `uris` (a rewind restored them to the text they had when clean). */
export async function saveDocuments(uris: string[]): Promise<number> {
  let saved = 0;
  for (const raw of uris) {
    // The document a rewind edited, loaded in the background if no editor shows it.
    const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(raw));
    if (await document.save()) saved += 1;
  }
  return saved;
}

function turnLabel(turn: TurnChanges): string {
  return `Turn ${turn.turn}: ${turn.title || '(untitled)'}`;
}

/** How a changed file stands now, in words. */
const STATE_WORDS: Record<ChangedFile['state'], string> = {
  asLeft: 'as the agent left it',
  changed: 'changed since',
  restored: 'rejected (restored)',
};

function turnDetail(turn: TurnChanges): string {
  if (turn.files.length === 0) return 'no files changed';
  return turn.files
    .map((file) => `${file.path} (${file.status}${file.state === 'asLeft' ? '' : `, ${STATE_WORDS[file.state]}`})`)
    .join(', ');
}

async function pickTurn(client: LanguageClient, session: string, title: string): Promise<TurnChanges | undefined> {
  const changes = await execute<ChangesResult>(client, ServerCommand.changes, { session });
  if (changes.turns.length === 0) {
    void vscode.window.showInformationMessage('Rhema: this session has no turns yet.');
    return undefined;
  }
  const items = [...changes.turns].reverse().map((turn) => ({
    label: turnLabel(turn),
    description:
      `${turn.files.length} file(s)` +
      (turn.inConversation ? '' : ' · rewound') +
      (turn.interrupted ? ' · interrupted (the server stopped mid-turn)' : ''),
    detail: turnDetail(turn),
    turn,
  }));
  const picked = await vscode.window.showQuickPick(items, { title, placeHolder: 'Rewind to before which turn?' });
  return picked?.turn;
}

const WHAT: { label: string; what: RewindWhat; detail: string }[] = [
  { label: 'Code and conversation', what: 'both', detail: 'restore the files and continue the session from before the turn' },
  { label: 'Code only', what: 'code', detail: 'restore the files the turns changed; keep the conversation' },
  { label: 'Conversation only', what: 'conversation', detail: 'continue the session from before the turn; keep the files' },
];

/** The lines a rewind result adds to the channel. */
export function rewindSummary(result: RewindResult, saved: number): string {
  const parts = [`${result.restored.length} file(s) restored (${saved} saved)`];
  if (result.conflicts.length > 0) parts.push(`${result.conflicts.length} left alone`);
  if (result.messages !== null) parts.push(`conversation kept to ${result.messages} message(s)`);
  return `↶ Rewind to before turn ${result.turn}: ${parts.join(', ')}`;
}

/**
 * "Rhema: Rewind…": pick a turn and what to take back; returns the result, or undefined if dismissed.
 * `done` is told each result as it comes (before the question about files changed since, which may wait long).
 */
export async function rewind(
  client: LanguageClient,
  session: string,
  output: vscode.OutputChannel,
  done: (result: RewindResult) => Promise<void>,
): Promise<RewindResult | undefined> {
  const turn = await pickTurn(client, session, 'Rhema: Rewind');
  if (turn === undefined) return undefined;
  const choice = await vscode.window.showQuickPick(WHAT, { title: `Rhema: Take Back Turn ${turn.turn} and After` });
  if (choice === undefined) return undefined;
  const args: RewindArgs = { session, turn: turn.turn, what: choice.what, force: false };
  let result = await execute<RewindResult>(client, ServerCommand.rewind, args);
  output.appendLine(rewindSummary(result, await saveDocuments(result.save)));
  await done(result);
  for (const conflict of result.conflicts) {
    output.appendLine(`  ${vscode.workspace.asRelativePath(vscode.Uri.parse(conflict.uri))}: ${conflict.reason}`);
  }
  if (result.conflicts.length > 0) {
    const force = 'Overwrite Them';
    const answer = await vscode.window.showWarningMessage(
      `Rhema: ${result.conflicts.length} file(s) changed since the turn were left as they are.`,
      force,
    );
    if (answer === force) {
      result = await execute<RewindResult>(client, ServerCommand.rewind, { ...args, what: 'code', force: true });
      output.appendLine(rewindSummary(result, await saveDocuments(result.save)));
      await done(result);
    }
  }
  return result;
}

/** "Rhema: Show Changes…": pick a turn, then a file; open the diff from its checkpoint. */
export async function showChanges(client: LanguageClient, session: string): Promise<void> {
  const turn = await pickTurn(client, session, 'Rhema: Show Changes');
  if (turn === undefined) return;
  const file = await vscode.window.showQuickPick(
    turn.files.map((item) => ({ label: item.path, description: `${item.status}, ${STATE_WORDS[item.state]}`, item })),
    { title: `Rhema: files changed by turn ${turn.turn}` },
  );
  if (file === undefined) return;
  const empty = vscode.Uri.from({ scheme: 'untitled', path: `${file.item.path} (new)` });
  const before = file.item.before === null ? empty : vscode.Uri.parse(file.item.before);
  await vscode.commands.executeCommand(
    'vscode.diff',
    before,
    vscode.Uri.parse(file.item.uri),
    `${file.item.path} (before turn ${turn.turn}) ↔ now`,
  );
}
