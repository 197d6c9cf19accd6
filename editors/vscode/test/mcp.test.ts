import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { McpPromptInfo, McpServerStatus } from '../src/contract';
import { isSlash, parseSlash, slashAt, slashDetail, slashMatches } from '../src/chat/slash';
import { mcpNeedsYou, mcpServerLine } from '../src/mcpText';

const prompt = (name: string, args: [string, boolean][]): McpPromptInfo => ({
  server: 'everything',
  name,
  title: '',
  description: `the ${name}`,
  arguments: args.map(([argument, required]) => ({ name: argument, description: '', required })),
  command: `mcp__everything__${name}`,
});
const PROMPTS = [prompt('simple-prompt', []), prompt('args-prompt', [['city', true], ['state', false]])];

describe('slash commands', () => {
  it('are completed only in the first word', () => {
    assert.deepEqual(slashAt('/mcp__ev', 8), { word: 'mcp__ev' });
    assert.equal(slashAt('/mcp__everything__args-prompt Paris', 35), undefined);
    assert.equal(slashAt('see /x', 6), undefined);
    assert.deepEqual(
      slashMatches(PROMPTS, 'args').map((p) => p.name),
      ['args-prompt'],
    );
    assert.equal(slashMatches(PROMPTS, 'mcp__everything__').length, 2);
    assert.equal(slashDetail(PROMPTS[1]), 'city [state] — the args-prompt');
  });

  it('fill the arguments: named, then in order, the last taking the rest', () => {
    const one = parseSlash('/mcp__everything__args-prompt New York', PROMPTS);
    assert.deepEqual(one?.values, { city: 'New', state: 'York' });
    const named = parseSlash('/mcp__everything__args-prompt state=NY New York', PROMPTS);
    assert.deepEqual(named?.values, { state: 'NY', city: 'New York' });
    const missing = parseSlash('/mcp__everything__args-prompt', PROMPTS);
    assert.deepEqual(missing?.missing.map((a) => a.name), ['city']);
    assert.deepEqual(parseSlash('/mcp__everything__simple-prompt', PROMPTS)?.values, {});
    assert.equal(parseSlash('/mcp__nobody__x', PROMPTS), undefined);
    assert.equal(isSlash('/etc/hosts is odd'), true);
    assert.equal(isSlash('what is /etc/hosts'), false);
  });
});

describe('MCP server lines', () => {
  const server = (state: McpServerStatus['state'], error: string | null): McpServerStatus => ({
    name: 'remote',
    source: 'user config',
    transport: 'http',
    state,
    tools: 3,
    restarts: 0,
    error,
    deferred: false,
  });

  it('say why a server failed, and that one waits for the sign-in', () => {
    assert.equal(mcpServerLine(server('ready', null)), 'remote: ready (http, 3 tools, user config)');
    assert.equal(
      mcpServerLine(server('failed', 'did not start within 10 s')),
      'remote: failed (http, user config) — did not start within 10 s',
    );
    assert.equal(
      mcpServerLine(server('authorizing', 'sign in at http://127.0.0.1:9/authorize')),
      'remote: waiting for you to sign in (http, user config) — sign in at http://127.0.0.1:9/authorize',
    );
    assert.equal(mcpNeedsYou(server('authorizing', null)), true);
    assert.equal(mcpNeedsYou(server('ready', null)), false);
  });
});
