/**
 * Answers `rhema/language` (docs/protocol.md, "The editor's language
 * servers") from VS Code's own language features: every extension's
 * providers, the built-in TypeScript/JavaScript ones included.
 *
 * Contract: LSP methods go through `vscode.execute*Provider`, results as LSP
 * JSON (`./languageJson`), `source: "VS Code"`; `diagnostics` reads
 * `vscode.languages.getDiagnostics` at once when they changed since the
 * document reached the asked version (each change is remembered with the
 * document's version then), else once they change (settled for a moment, as
 * TypeScript reports syntax, semantic and suggestion problems one after the
 * other), else when `waitMs` is spent (`complete` then says whether the
 * document reached the version at all: a set that did not change is not
 * reported again). A provider's failure is an error reply with its
 * message; nothing here throws anything else.
 *
 * Which documents are served (`served`): a document whose language VS Code
 * is known to give language features and diagnostics, else `null`, so the
 * server's own language servers answer (basedpyright on its `PATH` for
 * Python in a VS Code with no Python extension) and no wait is spent on
 * problems nobody reports. Known: the languages of VS Code's built-in
 * language features (`BUILT_IN`: TypeScript, JavaScript, JSON, CSS), and
 * every language VS Code has had diagnostics for, for some open document of
 * it, in this window (some extension reports on it: Pylance, a linter). A
 * language whose extension has reported nothing yet is answered by the
 * server's own servers until it does.
 */
import * as vscode from 'vscode';
import { type LanguageClient, LSPErrorCodes, ErrorCodes, ResponseError } from 'vscode-languageclient/node';
import { LANGUAGE_REQUEST, type DiagnosticsParams, type DiagnosticsResult, type LanguageParams, type LanguageResult } from './contract';
import {
  diagnostics,
  documentSymbols,
  type Json,
  locations,
  type LocationLike,
  type LocationLinkLike,
  workspaceEdit,
  workspaceSymbols,
  type DocumentSymbolLike,
  type SymbolInformationLike,
} from './languageJson';

const SOURCE = 'VS Code';

/** Milliseconds without a further diagnostics change after the first one for the asked version. */
const SETTLE_MS = 250;

/** Each document's version when its diagnostics last changed, by URI. */
const reported = new Map<string, number>();

/** The languages VS Code's built-in extensions give language features and diagnostics. */
const BUILT_IN = new Set(['typescript', 'typescriptreact', 'javascript', 'javascriptreact', 'json', 'jsonc', 'css', 'scss', 'less']);

/** The languages VS Code has had diagnostics for in this window (some extension reports on them). */
const diagnosed = new Set<string>();

function remember(event: vscode.DiagnosticChangeEvent): void {
  for (const uri of event.uris) {
    const key = uri.toString();
    const document = vscode.workspace.textDocuments.find((open) => open.uri.toString() === key);
    if (document === undefined) continue;
    reported.set(key, document.version);
    if (vscode.languages.getDiagnostics(uri).length > 0) diagnosed.add(document.languageId);
  }
}

/** The listeners keeping `reported`: one set for the extension's life, whichever client asks. */
let tracking: vscode.Disposable | undefined;

/** Answer `rhema/language` on `client` (register before it starts). */
export function answerLanguage(client: LanguageClient): vscode.Disposable {
  tracking ??= vscode.Disposable.from(
    vscode.languages.onDidChangeDiagnostics(remember),
    vscode.workspace.onDidCloseTextDocument((document) => reported.delete(document.uri.toString())),
  );
  return client.onRequest(LANGUAGE_REQUEST, async (params: LanguageParams): Promise<LanguageResult | DiagnosticsResult | null> => {
    try {
      if (params.method === 'diagnostics') {
        return await diagnosticsOf(params.params as unknown as DiagnosticsParams);
      }
      return await lspAnswer(params.method, params.params);
    } catch (error) {
      if (error instanceof ResponseError) throw error;
      const message = error instanceof Error ? error.message : String(error);
      throw new ResponseError(LSPErrorCodes.RequestFailed, message || `${params.method} failed`);
    }
  });
}

function invalid(message: string): ResponseError<void> {
  return new ResponseError(ErrorCodes.InvalidParams, message);
}

function uriOf(params: Record<string, unknown>): vscode.Uri {
  const document = params.textDocument as { uri?: unknown } | undefined;
  if (typeof document?.uri !== 'string') throw invalid('params.textDocument.uri is missing');
  return vscode.Uri.parse(document.uri);
}

function positionOf(params: Record<string, unknown>): vscode.Position {
  const position = params.position as { line?: unknown; character?: unknown } | undefined;
  if (typeof position?.line !== 'number' || typeof position.character !== 'number') {
    throw invalid('params.position is missing');
  }
  return new vscode.Position(position.line, position.character);
}

/** The document at `uri`, loaded (not shown); `undefined` when VS Code is not known to serve its language (see the module comment). */
async function served(uri: vscode.Uri): Promise<vscode.TextDocument | undefined> {
  const document = await vscode.workspace.openTextDocument(uri);
  const known = BUILT_IN.has(document.languageId) || diagnosed.has(document.languageId);
  return known ? document : undefined;
}

async function lspAnswer(method: LanguageParams['method'], params: Record<string, unknown>): Promise<LanguageResult | null> {
  if (method === 'workspace/symbol') {
    if (typeof params.query !== 'string') throw invalid('params.query is missing');
    const found = await vscode.commands.executeCommand<SymbolInformationLike[]>('vscode.executeWorkspaceSymbolProvider', params.query);
    return { result: workspaceSymbols(found), source: SOURCE };
  }
  const uri = uriOf(params);
  if ((await served(uri)) === undefined) return null;
  let result: Json;
  switch (method) {
    case 'textDocument/definition':
      result = locations(
        await vscode.commands.executeCommand<(LocationLike | LocationLinkLike)[]>('vscode.executeDefinitionProvider', uri, positionOf(params)),
      );
      break;
    case 'textDocument/references':
      result = locations(
        await vscode.commands.executeCommand<LocationLike[]>('vscode.executeReferenceProvider', uri, positionOf(params)),
      );
      break;
    case 'textDocument/documentSymbol':
      result = documentSymbols(
        await vscode.commands.executeCommand<(DocumentSymbolLike | SymbolInformationLike)[]>('vscode.executeDocumentSymbolProvider', uri),
      );
      break;
    case 'textDocument/rename': {
      if (typeof params.newName !== 'string') throw invalid('params.newName is missing');
      const edit = await vscode.commands.executeCommand<vscode.WorkspaceEdit | undefined>(
        'vscode.executeDocumentRenameProvider',
        uri,
        positionOf(params),
        params.newName,
      );
      result = workspaceEdit(edit?.entries());
      break;
    }
    default:
      throw invalid(`${String(method)} is not a language method this client answers`);
  }
  return { result, source: SOURCE };
}

async function diagnosticsOf(params: DiagnosticsParams): Promise<DiagnosticsResult | null> {
  if (typeof params?.uri !== 'string' || typeof params.waitMs !== 'number') throw invalid('diagnostics needs {uri, version, waitMs}');
  const uri = vscode.Uri.parse(params.uri);
  const document = await served(uri);
  if (document === undefined) return null;
  const now = (complete: boolean): DiagnosticsResult => ({
    diagnostics: diagnostics(vscode.languages.getDiagnostics(uri)),
    source: SOURCE,
    complete,
  });
  const wanted = params.version;
  const atVersion = (): boolean => wanted === null || document.version >= wanted;
  const key = uri.toString();
  if (wanted === null || (reported.get(key) ?? -1) >= wanted) return now(true);
  return new Promise((resolve) => {
    const subscriptions: vscode.Disposable[] = [];
    let settle: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (complete: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      clearTimeout(settle);
      for (const subscription of subscriptions) subscription.dispose();
      resolve(now(complete));
    };
    // The wait spent with the document at the version: its diagnostics did not change (settled).
    const deadline = setTimeout(() => finish(atVersion()), Math.max(0, params.waitMs));
    subscriptions.push(
      vscode.languages.onDidChangeDiagnostics((event) => {
        if (!atVersion() || !event.uris.some((changed) => changed.toString() === key)) return;
        clearTimeout(settle);
        settle = setTimeout(() => finish(true), SETTLE_MS);
      }),
    );
  });
}
