import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type InlineState, inlineView, toggledValue } from '../src/inlineStatus';

const ON: InlineState = { enabled: true, general: true, editor: true, language: 'python' };

describe('the inline suggestions status item', () => {
  it('shows on, and a click turns the user setting off', () => {
    const view = inlineView(ON);
    assert.equal(view.text, '$(sparkle) Suggestions');
    assert.equal(view.on, true);
    assert.match(view.tooltip, /on\. Click to turn them off/);
    assert.equal(toggledValue(ON), false);
  });

  it('shows off (crossed out), and a click turns it back on', () => {
    const off = { ...ON, enabled: false, general: false };
    assert.equal(inlineView(off).text, '$(circle-slash) Suggestions');
    assert.match(inlineView(off).tooltip, /off\. Click to turn them on/);
    assert.equal(toggledValue(off), true);
  });

  it('says why when a language override or the editor turns them off', () => {
    const language = { ...ON, enabled: false, language: 'markdown' };
    assert.match(inlineView(language).tooltip, /off \(off for markdown\)/);
    const editor = { ...ON, editor: false };
    assert.equal(inlineView(editor).on, false);
    assert.match(inlineView(editor).tooltip, /editor\.inlineSuggest\.enabled/);
    assert.equal(toggledValue(editor), false); // rhema's own setting is what a click flips
  });
});
