/**
 * Text the chat derives from transcript data: a tool call's target and
 * one-line detail (from its streamed JSON arguments, which may be
 * incomplete), the usage meter's text, and a stored prompt without the
 * context the server appended. Pure: no `vscode`, no DOM.
 */
import { mainArgument } from '../calls';
import type { TranscriptState, Usage } from './messages';

/** The path (and a line or text to find) a tool call's arguments point at, if any. */
export function toolTarget(args: string): { path: string; line?: number; find?: string } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const record = parsed as Record<string, unknown>;
  const path = typeof record.path === 'string' ? record.path : typeof record.to === 'string' ? record.to : undefined;
  if (!path) return undefined;
  const target: { path: string; line?: number; find?: string } = { path };
  if (typeof record.offset === 'number') target.line = record.offset;
  const text = typeof record.new_text === 'string' ? record.new_text : undefined;
  const first = text?.split('\n').find((line) => line.trim().length > 0);
  if (first !== undefined) target.find = first;
  return target;
}

/** A tool call's one-line detail for its card: its main argument (`from → to` for a rename). */
export function toolDetail(name: string, args: string): string {
  try {
    const main = mainArgument(name, JSON.parse(args));
    if (main === undefined) return '';
    const first = main.value.split('\n', 1)[0] ?? '';
    return main.target === undefined ? first : `${first} → ${main.target}`;
  } catch {
    // Arguments still streaming: no detail yet.
  }
  return '';
}

/** Fill of the context window as `12.3k / 128k (10%)`, or the tokens alone. */
export function meterText(context: TranscriptState['context'], usage: Usage): string {
  const tokens = `${usage.input.toLocaleString('en-US')} in · ${usage.output.toLocaleString('en-US')} out`;
  if (context === undefined) return tokens;
  const k = (n: number): string => (n >= 1000 ? `${(n / 1000).toFixed(1)}k` : `${n}`);
  if (context.window === null) return `${tokens} · context ${k(context.tokens)}`;
  const share = Math.round((100 * context.tokens) / context.window);
  return `${tokens} · context ${k(context.tokens)} / ${k(context.window)} (${share}%)`;
}

/** Where the server's rendering of `context` begins in a stored prompt (docs/protocol.md, Context). */
const CONTEXT_BLOCK = /\n\n[^\n]* \(the editor's current text[^\n]*:\n/;

/** The prompt the user typed, without the context the server appended to it. */
export function promptOf(stored: string): string {
  const match = CONTEXT_BLOCK.exec(stored);
  return match === null ? stored : stored.slice(0, match.index);
}
