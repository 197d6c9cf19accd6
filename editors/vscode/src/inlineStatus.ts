/**
 * What the inline-suggestions status-bar item shows (pure: `inlineToggle.ts`
 * owns the item and the command).
 *
 * Contract: on, the item reads "$(sparkle) Suggestions"; off, "$(circle-slash)
 * Suggestions", with a tooltip saying why (the user's setting, a language
 * override, or `editor.inlineSuggest.enabled`) and that a click toggles
 * `rhema.inlineCompletion` in the user's settings; a click writes the
 * opposite of that setting as it applies to the active document.
 */

/** The settings that decide whether ghost text shows in the active document. */
export interface InlineState {
  /** `rhema.inlineCompletion` as it applies to the active document (its language included). */
  enabled: boolean;
  /** `rhema.inlineCompletion` without the language override (the user's, or the workspace's). */
  general: boolean;
  /** `editor.inlineSuggest.enabled` for the active document. */
  editor: boolean;
  /** The active document's language id. */
  language: string;
}

export interface InlineView {
  text: string;
  tooltip: string;
  /** Whether the suggestions show (the item's state). */
  on: boolean;
}

/** The item's text and tooltip for `state`. */
export function inlineView(state: InlineState): InlineView {
  const on = state.enabled && state.editor;
  let why = '';
  if (!state.editor) why = ' (`editor.inlineSuggest.enabled` is off)';
  else if (!state.enabled && state.general) why = ` (off for ${state.language})`;
  const click = on ? 'turn them off' : 'turn them on';
  return {
    text: `$(${on ? 'sparkle' : 'circle-slash'}) Suggestions`,
    tooltip: `Rhema inline suggestions: ${on ? 'on' : 'off'}${why}. Click to ${click} (user settings).`,
    on,
  };
}

/** The user-level `rhema.inlineCompletion` a click writes: the opposite of rhema's own setting. */
export function toggledValue(state: InlineState): boolean {
  return !state.enabled;
}
