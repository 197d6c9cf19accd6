/**
 * The palette's run commands: "Rhema: Ask" and the server's "explain
 * selection" code action (both stream into the chat), "Rhema: Step" (one
 * exchange, in the output channel) and "Rhema: Edit Selection" (a rewrite in
 * place, from the palette, the context menu or the code action). Each runs
 * through `Rhema.runs`, with its own cancellation and progress.
 */
import * as vscode from 'vscode';
import { execute } from './client';
import { dropUndefined, editorContext, toRange } from './editorContext';
import type { Rhema } from './extension';
import {
  asEditTarget,
  asTurnArgs,
  ServerCommand,
  type EditArgs,
  type EditResult,
  type StepResult,
  type TurnResult,
} from './protocol';

/** Ask from the palette: the question goes to the chat, which shows the answer (and takes follow-ups). */
export async function ask(rhema: Rhema): Promise<void> {
  const prompt = await vscode.window.showInputBox({
    title: 'Rhema: Ask',
    prompt: 'What should Rhema do? The active editor and selection go along as context; the answer shows in the chat.',
    ignoreFocusOut: true,
  });
  if (!prompt) return;
  const { context, folder } = editorContext();
  await rhema.chat.view.focus();
  await rhema.runs.inChat('Ask', prompt, [], (client, token, workDone) =>
    execute<TurnResult>(
      client,
      ServerCommand.turn,
      dropUndefined({ prompt, folder, session: rhema.status.session, context }),
      token,
      workDone,
    ),
  );
}

export async function step(rhema: Rhema): Promise<void> {
  const prompt = await vscode.window.showInputBox({
    title: 'Rhema: Step',
    prompt: 'Optional message for one exchange (empty: continue the session).',
    ignoreFocusOut: true,
  });
  if (prompt === undefined) return;
  const { context, folder } = editorContext();
  await rhema.runs.run('Step', prompt || '(continue)', (client, token, workDone) =>
    execute<StepResult>(
      client,
      ServerCommand.step,
      dropUndefined({ prompt: prompt || undefined, folder, session: rhema.status.session, context }),
      token,
      workDone,
    ),
  );
}

export async function turnFromCodeAction(rhema: Rhema, arg: unknown): Promise<void> {
  const args = asTurnArgs(arg);
  if (args === undefined) {
    throw new Error('rhema.turn needs one argument object with a `prompt`.');
  }
  const folder = args.folder ?? editorContext().folder;
  await rhema.chat.view.focus();
  await rhema.runs.inChat('Ask', args.prompt, [], (client, token, workDone) =>
    execute<TurnResult>(
      client,
      ServerCommand.turn,
      dropUndefined({ ...args, folder, session: args.session ?? rhema.status.session }),
      token,
      workDone,
    ),
  );
}

/**
 * Rewrite a selection: `target` is the code action's `{uri, range}`; without
 * it (palette, context menu) the active editor's selection.
 */
export async function editSelection(rhema: Rhema, target?: unknown): Promise<void> {
  let where = asEditTarget(target);
  if (where === undefined) {
    const editor = vscode.window.activeTextEditor;
    if (editor === undefined || editor.selection.isEmpty) {
      void vscode.window.showInformationMessage('Rhema: select the text to rewrite first.');
      return;
    }
    where = { uri: editor.document.uri.toString(), range: toRange(editor.selection) };
  }
  const instruction = await vscode.window.showInputBox({
    title: 'Rhema: Edit Selection',
    prompt: 'How should the selection change?',
    ignoreFocusOut: true,
  });
  if (!instruction) return;
  const args: EditArgs = dropUndefined({ ...where, instruction, session: rhema.status.session });
  await rhema.runs.run('Edit selection', instruction, async (client, token, workDone) => {
    const result = await execute<EditResult>(client, ServerCommand.edit, args, token, workDone);
    if (!result.applied && result.stopReason !== 'cancelled') {
      void vscode.window.showWarningMessage(
        result.stopReason === 'end_turn'
          ? 'Rhema: the edit was not applied (the document changed meanwhile).'
          : `Rhema: the edit was not applied (${result.stopReason}).`,
      );
    }
    return result;
  });
}
