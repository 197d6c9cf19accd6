/**
 * The editor contract of rhema-lsp, as TypeScript types (see docs/protocol.md).
 *
 * Commands go out as `workspace/executeCommand` with one camelCase argument
 * object; streaming comes back as `rhema/event` notifications. The types are
 * generated from the server's typed contract into `./contract` (checked by the
 * test command); this module names them for the extension and adds the
 * guards. Vocabulary only: no `vscode` import, so unit tests can load it in
 * plain Node.
 */

import type {
  ContextRef,
  Message,
  Position,
  Range,
  StatusResult,
  TurnArgs,
  TurnResult,
  UndoTurnResult,
  UsageTally,
} from './contract';

export { EVENT_METHOD, ServerCommand } from './contract';
export type {
  CancelResult,
  CompactResult,
  CommandTypes,
  EditArgs,
  EditResult,
  ImageArg,
  Message,
  OpenSessionResult,
  Position,
  ProviderStatus,
  Range,
  RhemaEvent,
  RhemaEventParams,
  ServerCommandId,
  SessionSummary,
  StatusResult,
  StepArgs,
  StepResult,
  TurnArgs,
  TurnResult,
  UndoTurnArgs,
} from './contract';

export type StopReason = TurnResult['stopReason'];
export type Mode = NonNullable<TurnArgs['mode']>;
/** The token counts the extension adds up (a `UsageTally` is one). */
export type Usage = Pick<UsageTally, 'input' | 'output'>;
export type ContextItem = ContextRef;
export type UndoResult = UndoTurnResult;
/** One part of a stored message (the engine's JSON form). */
export type MessagePart = Message['content'][number];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPosition(value: unknown): value is Position {
  return (
    isRecord(value) &&
    Number.isInteger(value.line) &&
    Number.isInteger(value.character) &&
    (value.line as number) >= 0 &&
    (value.character as number) >= 0
  );
}

function isRange(value: unknown): value is Range {
  return isRecord(value) && isPosition(value.start) && isPosition(value.end);
}

/**
 * The `{uri, range}` target of the server's "Rhema: edit selection" code
 * action (the argument of the client-side `rhema.editSelection`), or
 * `undefined` for anything else (e.g. the palette passes nothing, a context
 * menu passes the editor's uri alone).
 */
export function asEditTarget(value: unknown): { uri: string; range: Range } | undefined {
  if (!isRecord(value) || typeof value.uri !== 'string' || value.uri.length === 0 || !isRange(value.range)) {
    return undefined;
  }
  const { start, end } = value.range;
  return {
    uri: value.uri,
    range: { start: { line: start.line, character: start.character }, end: { line: end.line, character: end.character } },
  };
}

/** A `rhema.turn` argument object (as the server's "explain selection" code action sends), or `undefined`. */
export function asTurnArgs(value: unknown): TurnArgs | undefined {
  if (!isRecord(value) || typeof value.prompt !== 'string' || value.prompt.length === 0) {
    return undefined;
  }
  return value as unknown as TurnArgs;
}

/** One line for `rhema.status`: version, provider / model (how it was chosen), mode, the rules in use. */
export function statusSummary(status: StatusResult): string {
  const { provider } = status;
  const who =
    provider.name === null
      ? 'no provider'
      : `${[provider.name, provider.model].filter(Boolean).join(' / ')}${provider.source ? ` (${provider.source})` : ''}`;
  const rules = status.rules.filter((file) => file.refused === null).map((file) => file.path);
  const completion = status.completion;
  const completes =
    completion === null ||
    (completion.enabled &&
      (completion.model === null || (completion.model === provider.model && completion.provider === provider.name)))
      ? ''
      : completion.enabled
        ? ` · completes with ${[completion.provider, completion.model].filter(Boolean).join(' / ')}`
        : ' · completion off';
  return `Rhema ${status.version} · ${who} · mode ${status.mode}${completes}${rules.length > 0 ? ` · rules ${rules.join(', ')}` : ''}`;
}
