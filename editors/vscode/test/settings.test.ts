import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  LOG_LEVELS,
  MAX_STEPS_RANGE,
  MAX_TOKENS_RANGE,
  MODES,
  PROTOCOLS,
  PROVIDERS,
  readServerSettings,
  serverLaunch,
  SESSION_STORES,
  THINKING,
  USER_ONLY,
  userInterpreter,
  userOnly,
  type SettingGetter,
  type SettingInspection,
} from '../src/settings';
import { compactCount, statusText } from '../src/status';

function getter(values: Record<string, unknown>): SettingGetter {
  return (key) => values[key];
}

describe('readServerSettings', () => {
  it('maps every rhema.* setting to the contract key', () => {
    const { settings, problems } = readServerSettings(
      getter({
        provider: 'custom',
        model: 'gpt-test',
        baseUrl: 'http://127.0.0.1:8080/v1',
        protocol: 'anthropic',
        thinking: 'high',
        maxTokens: 4096,
        maxSteps: 12,
        toolOutputCap: 50000,
        mode: 'agent',
        review: true,
        sessionStore: 'user',
        commandAllowlist: ['pytest -q', 'ls '],
        logLevel: 'debug',
        contextWindow: 32768,
        compactThreshold: 0.7,
        'server.command': ['ignored'],
      }),
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(settings, {
      provider: 'custom',
      model: 'gpt-test',
      baseUrl: 'http://127.0.0.1:8080/v1',
      protocol: 'anthropic',
      thinking: 'high',
      maxTokens: 4096,
      maxSteps: 12,
      toolOutputCap: 50000,
      mode: 'agent',
      review: true,
      sessionStore: 'user',
      commandAllowlist: ['pytest -q', 'ls '],
      logLevel: 'debug',
      contextWindow: 32768,
      compactThreshold: 0.7,
    });
  });

  it('refuses a context window or threshold outside the server bounds', () => {
    const { settings, problems } = readServerSettings(getter({ contextWindow: 100, compactThreshold: 1.5 }));
    assert.equal(settings.contextWindow, undefined);
    assert.equal(settings.compactThreshold, undefined);
    assert.equal(problems.length, 2);
    assert.match(problems[0] ?? '', /rhema\.contextWindow/);
    assert.match(problems[1] ?? '', /rhema\.compactThreshold/);
  });

  it('leaves unset values out so the server defaults apply', () => {
    const { settings, problems } = readServerSettings(
      getter({ provider: '', model: '  ', baseUrl: '', protocol: '', maxTokens: null, maxSteps: null }),
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(settings, {
      thinking: 'default',
      mode: 'edit',
      review: false,
      sessionStore: 'workspace',
      commandAllowlist: [],
      logLevel: 'warning',
    });
    assert.deepEqual(Object.keys(JSON.parse(JSON.stringify(settings)) as object).sort(), [
      'commandAllowlist',
      'logLevel',
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
        toolOutputCap: 100,
        review: 'yes',
        sessionStore: 'cloud',
        commandAllowlist: 'rm -rf /',
        model: 42,
        provider: 'local',
        protocol: 'grpc',
        logLevel: 'trace',
        vision: 'yes',
      }),
    );
    assert.equal(settings.thinking, 'default');
    assert.equal(settings.mode, 'edit');
    assert.equal(settings.maxTokens, undefined);
    assert.equal(settings.maxSteps, undefined);
    assert.equal(settings.toolOutputCap, undefined);
    assert.equal(settings.review, false);
    assert.equal(settings.sessionStore, 'workspace');
    assert.deepEqual(settings.commandAllowlist, []);
    assert.equal(settings.model, undefined);
    assert.equal(settings.provider, undefined);
    assert.equal(settings.protocol, undefined);
    assert.equal(settings.logLevel, 'warning');
    const named = problems.map((problem) => problem.split(' ')[0]).sort();
    assert.deepEqual(named, [
      'rhema.commandAllowlist',
      'rhema.logLevel',
      'rhema.maxSteps',
      'rhema.maxTokens',
      'rhema.mode',
      'rhema.model',
      'rhema.protocol',
      'rhema.provider',
      'rhema.review',
      'rhema.sessionStore',
      'rhema.thinking',
      'rhema.toolOutputCap',
      'rhema.vision',
    ]);
    assert.equal(settings.vision, undefined);
  });

  it('takes every provider preset of the server, and the server bounds', () => {
    for (const provider of PROVIDERS) {
      const { settings, problems } = readServerSettings(getter({ provider }));
      assert.deepEqual(problems, []);
      assert.equal(settings.provider, provider);
    }
    const at = (maxTokens: number, maxSteps: number) => readServerSettings(getter({ maxTokens, maxSteps })).settings;
    assert.deepEqual([at(16, 500).maxTokens, at(16, 500).maxSteps], [16, 500]);
    assert.deepEqual([at(15, 501).maxTokens, at(15, 501).maxSteps], [undefined, undefined]);
  });
});

/** The `rhema.*` settings package.json contributes (the ones the user sees). */
function contributed(): Record<string, { enum?: unknown[]; enumDescriptions?: unknown[]; minimum?: number; maximum?: number }> {
  const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    contributes: { configuration: { properties: Record<string, never> } };
  };
  return manifest.contributes.configuration.properties;
}

describe('package.json settings', () => {
  const properties = contributed();

  it('contributes exactly the server settings (plus how to start it), each reaching the server', () => {
    const keys = Object.keys(properties).map((key) => key.replace(/^rhema\./, ''));
    const serverKeys = keys.filter((key) => !key.startsWith('server.')).sort();
    assert.deepEqual(serverKeys, [
      'baseUrl',
      'commandAllowlist',
      'compactThreshold',
      'completionBaseUrl',
      'completionDebounce',
      'completionModel',
      'completionProvider',
      'contextWindow',
      'diagnosticsWait',
      'inlineCompletion',
      'logLevel',
      'maxSteps',
      'maxTokens',
      'mode',
      'model',
      'protocol',
      'provider',
      'review',
      'sessionStore',
      'thinking',
      'toolOutputCap',
      'vision',
    ]);
    const { settings, problems } = readServerSettings(
      getter({
        provider: 'custom',
        model: 'm',
        baseUrl: 'http://127.0.0.1:1/v1',
        protocol: 'gemini',
        maxTokens: 64,
        maxSteps: 2,
        commandAllowlist: ['ls'],
        contextWindow: 4096,
        compactThreshold: 0.5,
        diagnosticsWait: 3,
        vision: true,
        inlineCompletion: false,
        completionProvider: 'ollama',
        completionModel: 'qwen2.5-coder',
        completionBaseUrl: 'http://127.0.0.1:11434/v1',
        completionDebounce: 100,
        toolOutputCap: 30000,
      }),
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(Object.keys(settings).sort(), serverKeys);
  });

  it('offers the same choices and bounds the mapping accepts', () => {
    const choices = (key: string) => properties[`rhema.${key}`]?.enum;
    assert.deepEqual(choices('provider'), ['', ...PROVIDERS]);
    assert.deepEqual(choices('protocol'), ['', ...PROTOCOLS]);
    assert.deepEqual(choices('thinking'), [...THINKING]);
    assert.deepEqual(choices('mode'), [...MODES]);
    assert.deepEqual(choices('sessionStore'), [...SESSION_STORES]);
    assert.deepEqual(choices('logLevel'), [...LOG_LEVELS]);
    for (const [key, property] of Object.entries(properties)) {
      if (property.enum !== undefined) assert.equal(property.enumDescriptions?.length, property.enum.length, key);
    }
    assert.deepEqual(
      [properties['rhema.maxTokens']?.minimum, properties['rhema.maxTokens']?.maximum],
      [MAX_TOKENS_RANGE.min, MAX_TOKENS_RANGE.max],
    );
    assert.deepEqual(
      [properties['rhema.maxSteps']?.minimum, properties['rhema.maxSteps']?.maximum],
      [MAX_STEPS_RANGE.min, MAX_STEPS_RANGE.max],
    );
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

describe('settings a workspace may not set', () => {
  const hostile: Record<string, SettingInspection> = {
    'server.command': { defaultValue: [], workspaceValue: ['sh', '-c', 'touch /tmp/pwned'] },
    'server.python': { defaultValue: '', globalValue: '/venv/bin/python', workspaceFolderValue: '/repo/evil' },
    commandAllowlist: { defaultValue: [], workspaceValue: ['sh'] },
    mode: { defaultValue: 'edit', workspaceValue: 'agent' },
  };
  const merged: Record<string, unknown> = {
    'server.command': ['sh', '-c', 'touch /tmp/pwned'],
    'server.python': '/repo/evil',
    commandAllowlist: ['sh'],
    mode: 'agent',
  };
  const get = userOnly(
    (key) => merged[key],
    (key) => hostile[key],
  );

  it('reads the program-starting and allow-widening settings from user settings only', () => {
    assert.deepEqual(USER_ONLY, ['server.command', 'server.python', 'commandAllowlist']);
    assert.deepEqual(get('server.command'), []);
    assert.equal(get('server.python'), '/venv/bin/python');
    assert.deepEqual(get('commandAllowlist'), []);
    assert.equal(get('mode'), 'agent'); // any other setting: as VS Code merges it
    assert.deepEqual(serverLaunch(get), { command: '/venv/bin/python', args: ['-m', 'rhema_lsp', 'serve'] });
    assert.deepEqual(readServerSettings(get).settings.commandAllowlist, []);
  });

  it('never takes the Python interpreter from a workspace', () => {
    assert.equal(userInterpreter({ defaultValue: 'python', workspaceValue: '/repo/.venv/bin/evil' }), undefined);
    assert.equal(userInterpreter({ workspaceFolderValue: '/repo/bin/python' }), undefined);
    assert.equal(userInterpreter({ defaultValue: 'python', globalValue: 'python' }), undefined);
    assert.equal(userInterpreter({ globalValue: '/usr/bin/python3', workspaceValue: '/repo/evil' }), '/usr/bin/python3');
    assert.equal(userInterpreter(undefined), undefined);
    assert.deepEqual(serverLaunch(getter({}), userInterpreter({ workspaceValue: '/repo/evil' })), {
      command: 'rhema-lsp',
      args: ['serve'],
    });
  });

  it('gives each of them machine scope in package.json', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      contributes: { configuration: { properties: Record<string, { scope?: string }> } };
    };
    const properties = manifest.contributes.configuration.properties;
    for (const key of USER_ONLY) {
      assert.equal(properties[`rhema.${key}`]?.scope, 'machine', key);
    }
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

  it("shows the session's context fill against the window", () => {
    const base = { usage: { input: 1500, output: 230 }, serverState: 'running' as const, running: false };
    assert.equal(
      statusText({ ...base, context: { tokens: 42_000, window: 200_000 } }).text,
      '$(comment-discussion) Rhema · 1.7k tokens · ctx 42k/200k (21%)',
    );
    assert.equal(statusText({ ...base, context: { tokens: 900, window: null } }).text, '$(comment-discussion) Rhema · 1.7k tokens · ctx 900');
    assert.match(statusText({ ...base, context: { tokens: 42_000, window: 200_000 } }).tooltip, /Context: 42k\/200k \(21%\)/);
  });

  it('compacts counts', () => {
    assert.equal(compactCount(950), '950');
    assert.equal(compactCount(1234), '1.2k');
    assert.equal(compactCount(45_000), '45k');
    assert.equal(compactCount(3_400_000), '3.4M');
  });
});
