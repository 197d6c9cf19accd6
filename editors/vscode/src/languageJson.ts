/**
 * VS Code's language-feature results as LSP JSON, for `rhema/language`
 * (docs/protocol.md, "The editor's language servers").
 *
 * Pure functions over the shapes of VS Code's objects (no `vscode` import,
 * so they are unit-tested under node): positions stay as VS Code counts them,
 * UTF-16 code units, which is the encoding this client negotiates. Rules:
 * locations are always `Location` (a `LocationLink` becomes its target's
 * selection range, so a list never mixes the two); VS Code's 0-based
 * `SymbolKind` and `DiagnosticSeverity` become LSP's 1-based ones; a
 * `WorkspaceEdit` is `{changes}` by URI.
 */

/** A zero-based line and UTF-16 column. */
export interface PositionLike {
  line: number;
  character: number;
}

export interface RangeLike {
  start: PositionLike;
  end: PositionLike;
}

/** A `vscode.Uri`: only its string form is used. */
export interface UriLike {
  toString(): string;
}

export interface LocationLike {
  uri: UriLike;
  range: RangeLike;
}

export interface LocationLinkLike {
  targetUri: UriLike;
  targetRange: RangeLike;
  targetSelectionRange?: RangeLike;
}

export interface DocumentSymbolLike {
  name: string;
  detail?: string;
  kind: number;
  tags?: readonly number[];
  range: RangeLike;
  selectionRange: RangeLike;
  children: readonly DocumentSymbolLike[];
}

export interface SymbolInformationLike {
  name: string;
  kind: number;
  tags?: readonly number[];
  containerName?: string;
  location: LocationLike;
}

export interface TextEditLike {
  range: RangeLike;
  newText: string;
}

export interface DiagnosticLike {
  range: RangeLike;
  message: string;
  severity: number;
  source?: string;
  code?: string | number | { value: string | number };
  tags?: readonly number[];
  relatedInformation?: readonly { location: LocationLike; message: string }[];
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function position(value: PositionLike): { line: number; character: number } {
  return { line: value.line, character: value.character };
}

export function range(value: RangeLike): { start: Json; end: Json } {
  return { start: position(value.start), end: position(value.end) };
}

function isLink(value: LocationLike | LocationLinkLike): value is LocationLinkLike {
  return (value as LocationLinkLike).targetUri !== undefined;
}

/** A `Location` or `LocationLink` as an LSP `Location`. */
export function location(value: LocationLike | LocationLinkLike): { [key: string]: Json } {
  if (isLink(value)) {
    return { uri: value.targetUri.toString(), range: range(value.targetSelectionRange ?? value.targetRange) };
  }
  return { uri: value.uri.toString(), range: range(value.range) };
}

/** The answer of `vscode.executeDefinitionProvider` / `executeReferenceProvider`. */
export function locations(values: readonly (LocationLike | LocationLinkLike)[] | undefined | null): Json {
  return (values ?? []).map(location);
}

function tagged(out: { [key: string]: Json }, tags: readonly number[] | undefined): { [key: string]: Json } {
  if (tags !== undefined && tags.length > 0) out.tags = [...tags];
  return out;
}

function documentSymbol(value: DocumentSymbolLike): { [key: string]: Json } {
  const out: { [key: string]: Json } = {
    name: value.name,
    kind: value.kind + 1,
    range: range(value.range),
    selectionRange: range(value.selectionRange),
    children: value.children.map(documentSymbol),
  };
  if (value.detail) out.detail = value.detail;
  return tagged(out, value.tags);
}

export function symbolInformation(value: SymbolInformationLike): { [key: string]: Json } {
  const out: { [key: string]: Json } = { name: value.name, kind: value.kind + 1, location: location(value.location) };
  if (value.containerName) out.containerName = value.containerName;
  return tagged(out, value.tags);
}

/**
 * The answer of `vscode.executeDocumentSymbolProvider`: `DocumentSymbol[]`
 * when the provider gave a tree (VS Code's objects then carry `children`),
 * else `SymbolInformation[]`.
 */
export function documentSymbols(values: readonly (DocumentSymbolLike | SymbolInformationLike)[] | undefined | null): Json {
  const list = values ?? [];
  if (list.every((value) => Array.isArray((value as DocumentSymbolLike).children))) {
    return list.map((value) => documentSymbol(value as DocumentSymbolLike));
  }
  return list.map((value) => symbolInformation(value as SymbolInformationLike));
}

/** The answer of `vscode.executeWorkspaceSymbolProvider`. */
export function workspaceSymbols(values: readonly SymbolInformationLike[] | undefined | null): Json {
  return (values ?? []).map(symbolInformation);
}

/** A `vscode.WorkspaceEdit`'s text edits (its `entries()`), as `{changes}`; `null` for no edit. */
export function workspaceEdit(entries: readonly [UriLike, readonly TextEditLike[]][] | undefined | null): Json {
  if (entries === undefined || entries === null) return null;
  const changes: { [uri: string]: Json } = {};
  for (const [uri, edits] of entries) {
    const key = uri.toString();
    const list = (changes[key] as Json[] | undefined) ?? [];
    for (const edit of edits) list.push({ range: range(edit.range), newText: edit.newText });
    changes[key] = list;
  }
  return { changes };
}

export function diagnostic(value: DiagnosticLike): { [key: string]: Json } {
  const out: { [key: string]: Json } = { range: range(value.range), message: value.message, severity: value.severity + 1 };
  if (value.source) out.source = value.source;
  const code = typeof value.code === 'object' && value.code !== null ? value.code.value : value.code;
  if (code !== undefined) out.code = code;
  if (value.relatedInformation && value.relatedInformation.length > 0) {
    out.relatedInformation = value.relatedInformation.map((info) => ({ location: location(info.location), message: info.message }));
  }
  return tagged(out, value.tags);
}

/** What `vscode.languages.getDiagnostics(uri)` holds, as LSP `Diagnostic[]`. */
export function diagnostics(values: readonly DiagnosticLike[]): { [key: string]: Json }[] {
  return values.map(diagnostic);
}
