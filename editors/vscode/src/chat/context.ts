/**
 * The chat prompt's mentions as `context` refs, from the editor's state:
 * `@file` the active editor's document (or a workspace path), `@selection`
 * its selection, `@problems` every document with errors or warnings, each
 * with its diagnostics, `@mcp:<server>:<uri>` that server's resource (read by
 * the server through the MCP server). Without a mention, the active editor and its
 * selection go along, as with "Rhema: Ask".
 */
import * as vscode from 'vscode';
import type { ContextDiagnostic, ContextRef, Range } from '../contract';
import type { Mention } from './mentions';

const MAX_PROBLEM_FILES = 20;
const SEVERITY: Record<vscode.DiagnosticSeverity, ContextDiagnostic['severity']> = {
  [vscode.DiagnosticSeverity.Error]: 'error',
  [vscode.DiagnosticSeverity.Warning]: 'warning',
  [vscode.DiagnosticSeverity.Information]: 'information',
  [vscode.DiagnosticSeverity.Hint]: 'hint',
};

export function toRange(range: vscode.Range): Range {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

function toDiagnostic(diagnostic: vscode.Diagnostic): ContextDiagnostic {
  const code = typeof diagnostic.code === 'object' ? diagnostic.code.value : diagnostic.code;
  return {
    range: toRange(diagnostic.range),
    message: diagnostic.message,
    severity: SEVERITY[diagnostic.severity],
    source: diagnostic.source ?? null,
    code: code ?? null,
  };
}

/** The `context` for a prompt with these mentions; throws on a path that is not in the workspace. */
export async function mentionContext(mentions: Mention[]): Promise<ContextRef[]> {
  const editor = vscode.window.activeTextEditor;
  if (mentions.length === 0) {
    if (editor === undefined) return [];
    const item: ContextRef = { uri: editor.document.uri.toString() };
    if (!editor.selection.isEmpty) item.range = toRange(editor.selection);
    return [item];
  }
  const refs: ContextRef[] = [];
  for (const mention of mentions) {
    if (mention.kind === 'resource') {
      refs.push({ uri: mention.uri, server: mention.server });
    } else if (mention.kind === 'file' && mention.path !== undefined) {
      refs.push({ uri: (await resolvePath(mention.path)).toString() });
    } else if (mention.kind === 'file' || mention.kind === 'selection') {
      if (editor === undefined) throw new Error(`@${mention.kind} needs an active editor.`);
      const ref: ContextRef = { uri: editor.document.uri.toString() };
      if (mention.kind === 'selection') {
        if (editor.selection.isEmpty) throw new Error('@selection: nothing is selected.');
        ref.range = toRange(editor.selection);
      }
      refs.push(ref);
    } else {
      refs.push(...problems());
    }
  }
  return merge(refs);
}

/** Documents with errors or warnings, each with those diagnostics (errors first). */
function problems(): ContextRef[] {
  const refs: ContextRef[] = [];
  for (const [uri, diagnostics] of vscode.languages.getDiagnostics()) {
    const serious = diagnostics
      .filter((d) => d.severity <= vscode.DiagnosticSeverity.Warning)
      .sort((a, b) => a.severity - b.severity);
    if (serious.length === 0 || vscode.workspace.getWorkspaceFolder(uri) === undefined) continue;
    refs.push({ uri: uri.toString(), diagnostics: serious.map(toDiagnostic) });
    if (refs.length >= MAX_PROBLEM_FILES) break;
  }
  return refs;
}

/** One ref per document and range: a plain file ref absorbs nothing, diagnostics are joined. */
function merge(refs: ContextRef[]): ContextRef[] {
  const out: ContextRef[] = [];
  for (const ref of refs) {
    const same = out.find(
      (r) => r.uri === ref.uri && r.server === ref.server && JSON.stringify(r.range) === JSON.stringify(ref.range),
    );
    if (same === undefined) out.push(ref);
    else if (ref.diagnostics) same.diagnostics = [...(same.diagnostics ?? []), ...ref.diagnostics];
  }
  return out;
}

/** A workspace-relative (or absolute) path as a URI in a workspace folder. */
export async function resolvePath(path: string, folder?: vscode.Uri): Promise<vscode.Uri> {
  const candidates: vscode.Uri[] = [];
  if (path.startsWith('/')) candidates.push(vscode.Uri.file(path));
  const folders = folder ? [folder] : (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri);
  for (const root of folders) candidates.push(vscode.Uri.joinPath(root, path));
  for (const uri of candidates) {
    try {
      await vscode.workspace.fs.stat(uri);
      return uri;
    } catch {
      // Not in this folder.
    }
  }
  throw new Error(`no file ${path} in the workspace.`);
}
