import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readServerSettings, serverLaunch, type SettingGetter } from '../src/settings';
import { compactCount, statusText } from '../src/status';

function getter(values: Record<string, unknown>): SettingGetter {
  return (key) => values[key];
}

describe('readServerSettings', () => {
  it('maps every rhema.* setting to the contract key', () => {
    const { settings, problems } = readServerSettings(
      getter({
        provider: 'openai',
        model: 'gpt-test',
        baseUrl: 'http://127.0.0.1:8080/v1',
        thinking: 'high',
        maxTokens: 4096,
        maxSteps: 12,
        mode: 'agent',
        review: true,
        sessionStore: 'user',
        commandAllowlist: ['pytest -q', 'ls '],
        'server.command': ['ignored'],
      }),
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(settings, {
      provider: 'openai',
      model: 'gpt-test',
      baseUrl: 'http://127.0.0.1:8080/v1',
      thinking: 'high',
      maxTokens: 4096,
      maxSteps: 12,
      mode: 'agent',
      review: true,
      sessionStore: 'user',
      commandAllowlist: ['pytest -q', 'ls '],
    });
  });

  it('leaves unset values out so the server defaults apply', () => {
    const { settings, problems } = readServerSettings(
      getter({ provider: '', model: '  ', baseUrl: '', maxTokens: null, maxSteps: null }),
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(settings, {
      thinking: 'default',
      mode: 'edit',
      review: false,
      sessionStore: 'workspace',
      commandAllowlist: [],
    });
    assert.deepEqual(Object.keys(JSON.parse(JSON.stringify(settings)) as object).sort(), [
      'commandAllowlist',
      'mode',
      'review',
      'sessionStore',
      'thinking',
    ]);
  });

  it('replaces invalid values by defaults and names each setting', () => {
    const { settings, problems } = readServerSettings(
      getter({
        thinking: 'extreme',
        mode: 'yolo',
        maxTokens: 0,
        maxSteps: 2.5,
        review: 'yes',
        sessionStore: 'cloud',
        commandAllowlist: 'rm -rf /',
        model: 42,
      }),
    );
    assert.equal(settings.thinking, 'default');
    assert.equal(settings.mode, 'edit');
    assert.equal(settings.maxTokens, undefined);
    assert.equal(settings.maxSteps, undefined);
    assert.equal(settings.review, false);
    assert.equal(settings.sessionStore, 'workspace');
    assert.deepEqual(settings.commandAllowlist, []);
    assert.equal(settings.model, undefined);
    const named = problems.map((problem) => problem.split(' ')[0]).sort();
    assert.deepEqual(named, [
      'rhema.commandAllowlist',
      'rhema.maxSteps',
      'rhema.maxTokens',
      'rhema.mode',
      'rhema.model',
      'rhema.review',
      'rhema.sessionStore',
      'rhema.thinking',
    ]);
  });
});

describe('serverLaunch', () => {
  it('uses rhema.server.command when set', () => {
    assert.deepEqual(serverLaunch(getter({ 'server.command': ['/venv/bin/rhema-lsp', 'serve', '--log', 'debug'] })), {
      command: '/venv/bin/rhema-lsp',
      args: ['serve', '--log', 'debug'],
    });
  });

  it('falls back to a configured interpreter, then to rhema-lsp on PATH', () => {
    assert.deepEqual(serverLaunch(getter({ 'server.python': '/venv/bin/python' }), '/other/python'), {
      command: '/venv/bin/python',
      args: ['-m', 'rhema_lsp', 'serve'],
    });
    assert.deepEqual(serverLaunch(getter({ 'server.command': [] }), '/py/bin/python3'), {
      command: '/py/bin/python3',
      args: ['-m', 'rhema_lsp', 'serve'],
    });
    assert.deepEqual(serverLaunch(getter({ 'server.command': [''] })), { command: 'rhema-lsp', args: ['serve'] });
  });
});

describe('statusText', () => {
  it('shows the running state and the session tokens', () => {
    const base = { usage: { input: 1500, output: 230 }, serverState: 'running' as const };
    assert.equal(statusText({ ...base, running: true, activity: 'thinking' }).text, '$(sync~spin) Rhema: thinking');
    assert.equal(statusText({ ...base, running: false }).text, '$(comment-discussion) Rhema · 1.7k tokens');
    assert.match(statusText({ ...base, running: false, session: 's1' }).tooltip, /Session: s1\nTokens: 1,500 in · 230 out/);
    assert.equal(statusText({ ...base, running: false, serverState: 'stopped' }).text, '$(debug-disconnect) Rhema stopped');
  });

  it('compacts counts', () => {
    assert.equal(compactCount(950), '950');
    assert.equal(compactCount(1234), '1.2k');
    assert.equal(compactCount(45_000), '45k');
    assert.equal(compactCount(3_400_000), '3.4M');
  });
});
