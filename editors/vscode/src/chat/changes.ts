/**
 * The chat's changed-files card: the files a turn changed (`rhema.changes`
 * of that turn, asked again after each file tool while the turn runs, so
 * the card grows live), each with its +/− line counts (its checkpoint
 * against its text now), a diff (VS Code's diff editor from the checkpoint
 * to the live file), and accept or reject, one file or all of them.
 *
 * Accepting marks the file in the view (nothing to undo). Rejecting rewinds
 * the files (`rhema.rewind` with `paths`), saves those that were clean
 * before the turn, and reports a conflict for a file the user changed since.
 * A reject can be undone: the text the agent left is kept (in memory, per
 * file and turn) before the rewind, and Undo puts it back as one edit,
 * unless the file changed after the reject (then it says so and leaves it).
 * The store still calls such a file restored; the workspace remembers it was
 * re-applied, so a reopened session lists it undecided again.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { saveDocuments } from '../checkpoints';
import { execute } from '../client';
import {
  ServerCommand,
  type ChangedFile,
  type ChangesResult,
  type CheckpointContentResult,
  type RewindArgs,
  type RewindResult,
  type TurnChanges,
} from '../contract';
import { diffCounts } from './diff';
import type { Action, ChangedFileView } from './messages';

/** Files past this many are listed without counts. */
const COUNTED_FILES = 50;
const REAPPLIED_KEY = 'rhema.chat.reapplied';

export class ChangesCard {
  /** Checkpoint texts by `rhema-checkpoint:` URI (they never change). */
  private readonly checkpoints = new Map<string, string>();
  /** What the agent left in a rejected file, by `turn|uri`, for Undo. */
  private readonly rejected = new Map<string, { text: string | undefined; restored: string | undefined; saved: boolean }>();

  constructor(
    private readonly client: () => Promise<LanguageClient>,
    private readonly memory: vscode.Memento,
  ) {}

  /** The files `turn` changed, counted, as the action that lists them (`live`: the turn still runs). */
  async turn(session: string, turn: number, live = false): Promise<Action> {
    const client = await this.client();
    const result = await execute<ChangesResult>(client, ServerCommand.changes, { session, turn });
    const files = result.turns.find((t) => t.turn === turn)?.files ?? [];
    return { kind: 'changes', session, turn, files: await this.counted(client, session, turn, files), live };
  }

  /** Every turn of a session, counted: for a reopened session's cards. */
  async session(session: string): Promise<{ turns: TurnChanges[]; views: ChangedFileView[][] }> {
    const client = await this.client();
    const result = await execute<ChangesResult>(client, ServerCommand.changes, { session });
    const views: ChangedFileView[][] = [];
    for (const turn of result.turns) views.push(await this.counted(client, session, turn.turn, turn.files));
    return { turns: result.turns, views };
  }

  private reapplied(): Record<string, boolean> {
    return this.memory.get<Record<string, boolean>>(REAPPLIED_KEY) ?? {};
  }

  private async remember(key: string, reapplied: boolean): Promise<void> {
    const all = this.reapplied();
    if (reapplied) all[key] = true;
    else delete all[key];
    await this.memory.update(REAPPLIED_KEY, all);
  }

  private async counted(
    client: LanguageClient,
    session: string,
    turn: number,
    listed: ChangedFile[],
  ): Promise<ChangedFileView[]> {
    const reapplied = this.reapplied();
    const files = listed.map((file) =>
      file.state === 'restored' && reapplied[`${session}|${turn}|${file.uri}`] ? { ...file, state: 'asLeft' as const } : file,
    );
    const out: ChangedFileView[] = [];
    for (const [index, file] of files.entries()) {
      if (index >= COUNTED_FILES || file.state === 'restored') {
        out.push(file);
        continue;
      }
      try {
        const before = file.before === null ? '' : await this.checkpoint(client, file.before);
        const now = (await currentText(file.uri)) ?? '';
        out.push({ ...file, ...diffCounts(before, now) });
      } catch {
        out.push(file); // unreadable now: listed without counts
      }
    }
    return out;
  }

  private async checkpoint(client: LanguageClient, uri: string): Promise<string> {
    let text = this.checkpoints.get(uri);
    if (text === undefined) {
      text = (await execute<CheckpointContentResult>(client, ServerCommand.checkpointContent, { uri })).text;
      this.checkpoints.set(uri, text);
    }
    return text;
  }

  /** Reject files of a turn: rewind their code; the decisions to show. */
  async reject(session: string, turn: number, uris: string[]): Promise<Action[]> {
    const kept = new Map<string, string | undefined>();
    for (const uri of uris) kept.set(uri, await currentText(uri));
    const args: RewindArgs = { session, turn, what: 'code', force: false, paths: uris };
    const result = await execute<RewindResult>(await this.client(), ServerCommand.rewind, args);
    await saveDocuments(result.save);
    const actions: Action[] = [];
    for (const uri of uris) {
      const conflict = result.conflicts.find((c) => c.uri === uri);
      if (conflict !== undefined) {
        actions.push({ kind: 'decision', turn, uri, decision: 'conflict', detail: conflict.reason });
        continue;
      }
      await this.remember(`${session}|${turn}|${uri}`, false);
      this.rejected.set(`${turn}|${uri}`, {
        text: kept.get(uri),
        restored: await currentText(uri),
        saved: result.save.includes(uri),
      });
      actions.push({ kind: 'decision', turn, uri, decision: 'rejected', undoable: true });
    }
    return actions;
  }

  /** Undo a reject: put back what the agent left, unless the file changed since the reject. */
  async undoReject(session: string, turn: number, uri: string): Promise<Action> {
    const kept = this.rejected.get(`${turn}|${uri}`);
    if (kept === undefined) {
      return { kind: 'notice', text: 'This reject can no longer be undone (the window reloaded since).' };
    }
    if ((await currentText(uri)) !== kept.restored) {
      return { kind: 'decision', turn, uri, decision: 'conflict', detail: 'changed since the reject; left as it is' };
    }
    const target = vscode.Uri.parse(uri);
    const edit = new vscode.WorkspaceEdit();
    if (kept.text === undefined) {
      edit.deleteFile(target, { ignoreIfNotExists: true });
    } else if (kept.restored === undefined) {
      edit.createFile(target, { overwrite: false, ignoreIfExists: true });
      edit.insert(target, new vscode.Position(0, 0), kept.text);
    } else {
      const document = await vscode.workspace.openTextDocument(target);
      edit.replace(target, new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length)), kept.text);
    }
    if (!(await vscode.workspace.applyEdit(edit))) {
      return { kind: 'decision', turn, uri, decision: 'conflict', detail: 'the editor refused to re-apply it' };
    }
    // Saved as the reject left it saved (a file the reject deleted is created with its text).
    if (kept.text !== undefined && (kept.saved || kept.restored === undefined)) {
      await (await vscode.workspace.openTextDocument(target)).save();
    }
    this.rejected.delete(`${turn}|${uri}`);
    await this.remember(`${session}|${turn}|${uri}`, true);
    return { kind: 'decision', turn, uri, decision: 'undecided' };
  }
}

/** A file's text now: its open document's (unsaved changes included), else the disk's; none when absent. */
async function currentText(uri: string): Promise<string | undefined> {
  const open = vscode.workspace.textDocuments.find((document) => document.uri.toString() === uri);
  if (open !== undefined) return open.getText();
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.parse(uri)));
  } catch {
    return undefined;
  }
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
