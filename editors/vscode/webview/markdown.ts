/**
 * Markdown for the chat view: markdown-it without raw HTML (HTML in a
 * message is shown as text), links checked by markdown-it's own validator,
 * and fenced code highlighted by highlight.js (a fixed set of languages,
 * bundled; a long block after it shows, `highlightLater`), each block with
 * Copy and Insert buttons the view wires up.
 */
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import dockerfile from 'highlight.js/lib/languages/dockerfile';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import lua from 'highlight.js/lib/languages/lua';
import makefile from 'highlight.js/lib/languages/makefile';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import MarkdownIt from 'markdown-it';

const LANGUAGES = {
  bash,
  c,
  cpp,
  css,
  diff,
  dockerfile,
  go,
  ini,
  java,
  javascript,
  json,
  lua,
  makefile,
  markdown,
  python,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml,
};
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

const md: MarkdownIt = new MarkdownIt({ html: false, linkify: true, typographer: false });

function escape(text: string): string {
  return md.utils.escapeHtml(text);
}

/** Highlighted HTML of `code` in `lang` (escaped plain text for an unknown language). */
export function highlight(code: string, lang: string): string {
  const name = lang.toLowerCase();
  if (name && hljs.getLanguage(name)) return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
  return escape(code);
}

/** Code longer than this shows at once as plain text and is highlighted after, `SLICE` lines per idle moment. */
const HIGHLIGHT_NOW = 4000;
const SLICE = 60;

/** A code block's frame (its bar with the language, Copy and Insert) around `code`, already HTML. */
export function codeBlock(lang: string, code: string, later = false): string {
  const label = lang ? `<span class="lang">${escape(lang)}</span>` : '';
  return (
    `<div class="code"><div class="code-bar">${label}<div class="code-actions">` +
    '<button class="copy" data-action="copy" title="Copy">Copy</button>' +
    '<button class="insert" data-action="insert" title="Insert at the cursor">Insert</button></div></div>' +
    `<pre><code class="hljs${lang ? ` language-${escape(lang)}` : ''}"${later ? ` data-highlight="${escape(lang)}"` : ''}>${code}</code></pre></div>\n`
  );
}

md.renderer.rules.fence = (tokens, index) => {
  const token = tokens[index];
  const lang = (token.info.trim().split(/\s+/, 1)[0] ?? '').replace(/[^\w+#-]/g, '');
  const later = token.content.length > HIGHLIGHT_NOW && hljs.getLanguage(lang.toLowerCase()) !== undefined;
  return codeBlock(lang, later ? escape(token.content) : highlight(token.content, lang), later);
};

const waiting: { slice: HTMLElement; lang: string }[] = [];
let idle = false;

/**
 * Highlight the long code blocks under `root` rendered as plain text: each is cut into slices
 * of `SLICE` lines, highlighted one after another while the view is idle (a construct that
 * spans two slices, a long string, may be coloured as two), so no update holds the input up.
 */
export function highlightLater(root: HTMLElement): void {
  for (const code of root.querySelectorAll<HTMLElement>('code[data-highlight]')) {
    const lang = code.dataset.highlight ?? '';
    delete code.dataset.highlight;
    const lines = (code.textContent ?? '').split(/(?<=\n)/);
    const slices: HTMLElement[] = [];
    for (let at = 0; at < lines.length; at += SLICE) {
      const slice = document.createElement('span');
      slice.textContent = lines.slice(at, at + SLICE).join('');
      slices.push(slice);
      waiting.push({ slice, lang });
    }
    code.replaceChildren(...slices);
  }
  if (waiting.length > 0 && !idle) {
    idle = true;
    requestIdleCallback(highlightSome, { timeout: 1000 });
  }
}

function highlightSome(deadline: IdleDeadline): void {
  do {
    const next = waiting.shift();
    if (next === undefined) break;
    if (next.slice.isConnected) next.slice.innerHTML = highlight(next.slice.textContent ?? '', next.lang);
  } while (deadline.timeRemaining() > 4);
  if (waiting.length > 0) requestIdleCallback(highlightSome, { timeout: 1000 });
  else idle = false;
}

/** Markdown to HTML (no raw HTML passes through). */
export function renderMarkdown(text: string): string {
  return md.render(text);
}
