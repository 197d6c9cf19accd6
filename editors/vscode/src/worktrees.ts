/**
 * Worktree sessions in VS Code: sessions that run in their own git worktree,
 * on branch `rhema/<session>`, leaving the checkout as it is.
 *
 * "Rhema: Ask in a Worktree…" starts one (`rhema.turn` with `worktree: true`;
 * no editor context goes along: the turn works on the worktree's files).
 * "Rhema: Worktrees…" lists them (`rhema.sessions`, those with a `worktree`:
 * title, branch, running or done, the files changed) and then offers, for
 * the one picked: review its changes (`rhema.worktreeDiff`: one diff tab per
 * file, from the text the worktree started from, served as
 * `rhema-worktree:` documents, to the worktree's file now), apply them to
 * the checkout (`rhema.worktreeApply`: a three-way merge on the server; when
 * a file the user changed too conflicts, nothing is written and the files
 * are named), or discard the worktree and its branch
 * (`rhema.worktreeDiscard`). What each did is a line in the "Rhema" channel.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { execute } from './client';
import {
  ServerCommand,
  type SessionSummary,
  type TurnResult,
  type WorktreeApplyResult,
  type WorktreeDiffResult,
  type WorktreeDiscardResult,
} from './contract';

export const WORKTREE_SCHEME = 'rhema-worktree';

/** What the worktree commands need of the extension. */
export interface WorktreeHost {
  readonly output: vscode.OutputChannel;
  start(): Promise<LanguageClient>;
}

/** Serves the "before" side of a worktree review from the last diff asked for. */
export class WorktreeContent implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();

  keep(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** A worktree session as the picker shows it. */
export function worktreeItem(session: SessionSummary): string {
  const tree = session.worktree;
  const files = tree ? plural(tree.changed.length, 'file') : '';
  return `${tree?.branch ?? ''} · ${session.running ? 'running' : 'done'} · ${files} changed`;
}

/** "Rhema: Ask in a Worktree…". */
export async function askInWorktree(host: WorktreeHost): Promise<void> {
  const prompt = await vscode.window.showInputBox({
    title: 'Rhema: Ask in a Worktree',
    prompt: 'A new session in its own git worktree: your checkout stays as it is',
  });
  if (!prompt?.trim()) return;
  const result = await execute<TurnResult>(await host.start(), ServerCommand.turn, { prompt, worktree: true });
  const tree = result.worktree;
  if (tree) {
    host.output.appendLine(`⎇ Worktree ${tree.branch}: ${plural(tree.changed.length, 'file')} changed (${tree.path})`);
    void vscode.window.showInformationMessage(
      `Rhema: ${tree.branch} changed ${plural(tree.changed.length, 'file')}. Review it with "Rhema: Worktrees…".`,
    );
  }
}

const ACTIONS = [
  { label: 'Review Changes', action: 'review', detail: 'one diff per file' },
  { label: 'Apply to Checkout', action: 'apply', detail: 'a three-way merge; nothing is written if a file conflicts' },
  { label: 'Discard Worktree', action: 'discard', detail: 'remove the worktree and its branch' },
] as const;

/** "Rhema: Worktrees…": pick a worktree session, then what to do with it. */
export async function pickWorktree(host: WorktreeHost, content: WorktreeContent): Promise<void> {
  const client = await host.start();
  const sessions = await execute<SessionSummary[]>(client, ServerCommand.sessions, {});
  const trees = sessions.filter((session) => session.worktree);
  if (trees.length === 0) {
    void vscode.window.showInformationMessage('Rhema: no worktree sessions. Start one with "Rhema: Ask in a Worktree…".');
    return;
  }
  const picked = await vscode.window.showQuickPick(
    trees.map((session) => ({ label: session.title || session.session, description: worktreeItem(session), session })),
    { title: 'Rhema: Worktrees', placeHolder: 'Pick a worktree session' },
  );
  if (picked === undefined) return;
  const session = picked.session.session;
  const chosen = await vscode.window.showQuickPick([...ACTIONS], { title: `Rhema: ${picked.session.worktree?.branch}` });
  if (chosen === undefined) return;
  if (chosen.action === 'review') await review(client, session, host, content);
  else if (chosen.action === 'apply') await apply(client, session, host);
  else await discard(client, session, host);
}

async function review(client: LanguageClient, session: string, host: WorktreeHost, content: WorktreeContent): Promise<void> {
  const diff = await execute<WorktreeDiffResult>(client, ServerCommand.worktreeDiff, { session });
  const tree = (await execute<SessionSummary[]>(client, ServerCommand.sessions, {})).find((s) => s.session === session)?.worktree;
  host.output.appendLine(`⎇ Review ${diff.branch}: ${diff.files.map((file) => file.path).join(', ') || 'no changes'}`);
  for (const file of diff.files) {
    const before = vscode.Uri.from({ scheme: WORKTREE_SCHEME, path: `/${session}/before/${file.path}` });
    content.keep(before, file.before ?? '');
    let after = vscode.Uri.from({ scheme: WORKTREE_SCHEME, path: `/${session}/after/${file.path}` });
    if (file.after !== null && tree) after = vscode.Uri.file(path.join(tree.path, file.path));
    else content.keep(after, file.after ?? '');
    await vscode.commands.executeCommand('vscode.diff', before, after, `${file.path} (${diff.branch})`, { preview: false });
  }
}

async function apply(client: LanguageClient, session: string, host: WorktreeHost): Promise<void> {
  const result = await execute<WorktreeApplyResult>(client, ServerCommand.worktreeApply, { session });
  if (result.conflicts.length > 0) {
    host.output.appendLine(`⎇ Not applied ${result.branch}: conflicts in ${result.conflicts.join(', ')}`);
    void vscode.window.showWarningMessage(
      `Rhema: not applied: ${plural(result.conflicts.length, 'file')} conflict with your changes (nothing written): ${result.conflicts.join(', ')}`,
    );
    return;
  }
  host.output.appendLine(`⎇ Applied ${result.branch}: ${result.applied.join(', ') || 'nothing to apply'}`);
  void vscode.window.showInformationMessage(`Rhema: applied ${plural(result.applied.length, 'file')} from ${result.branch}.`);
}

async function discard(client: LanguageClient, session: string, host: WorktreeHost): Promise<void> {
  const result = await execute<WorktreeDiscardResult>(client, ServerCommand.worktreeDiscard, { session });
  host.output.appendLine(`⎇ Discarded ${result.branch}`);
}

/** Register the commands and the `rhema-worktree:` documents. */
export function registerWorktrees(
  host: WorktreeHost,
  guard: (work: () => Promise<void>) => Promise<void>,
): vscode.Disposable[] {
  const content = new WorktreeContent();
  return [
    vscode.workspace.registerTextDocumentContentProvider(WORKTREE_SCHEME, content),
    vscode.commands.registerCommand('rhema.askInWorktree', () => guard(() => askInWorktree(host))),
    vscode.commands.registerCommand('rhema.worktrees', () => guard(() => pickWorktree(host, content))),
  ];
}
