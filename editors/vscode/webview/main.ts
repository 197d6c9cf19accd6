/**
 * The chat view's script: applies the extension's actions to its copy of the
 * transcript and renders them (once per frame), follows new output while the
 * user is at the bottom (a resize, e.g. maximising and restoring the panel,
 * keeps following; sending a prompt follows again), shows the mode picker
 * and the setup card
 * while no provider works, and runs the input: Enter sends, Shift+Enter is a
 * new line, ↑/↓ walk the history (kept in the webview's state across
 * reloads), `@` completes mentions (↑/↓ pick one; the MCP servers'
 * resources too, `resources.ts`), `/` at the start the
 * MCP servers' prompts (`slash.ts`, listed by the extension when `/` is
 * first typed), Stop while running. A
 * prompt the extension could not send comes back into the input with the
 * error and a Retry. Code blocks' Copy and Insert go through the extension
 * (clipboard, active editor).
 *
 * For the editor tests' figures: `#input`'s `data-key-latency` holds the
 * latest keypress latencies (ms from the key event to the frame after it,
 * what a user feels) and `data-key-log` when each key came (epoch ms);
 * `body`'s `data-long-tasks` the count and total ms of main-thread tasks
 * over 50 ms, and `data-task-log` each one's start (epoch ms) and length.
 */
import { InputHistory } from '../src/chat/history';
import type { FromView, Mode, ToView, TranscriptState } from '../src/chat/messages';
import { MENTION_WORDS, mentionAt } from '../src/chat/mentions';
import { apply, emptyState } from '../src/chat/transcript';
import { Attachments } from './attachments';
import { button, el } from './cards';
import { renderMarkdown } from './markdown';
import { TranscriptView } from './render';
import { showSetup } from './setup';
import { ResourceList } from './resources';
import { SlashList } from './slash';

interface VsCodeApi {
  postMessage(message: FromView): void;
  getState(): SavedState | undefined;
  setState(state: SavedState): void;
}
interface SavedState {
  history: string[];
  draft: string;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const saved = vscode.getState() ?? { history: [], draft: '' };
const history = new InputHistory([...saved.history]);

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const transcript = $<HTMLElement>('transcript');
const input = $<HTMLTextAreaElement>('input');
const send = $<HTMLButtonElement>('send');
const stop = $<HTMLButtonElement>('stop');
const sessions = $<HTMLSelectElement>('sessions');
const modePicker = $<HTMLSelectElement>('mode');
const completions = $<HTMLElement>('completions');
const setup = $<HTMLElement>('setup');
const sendError = $<HTMLElement>('send-error');
const attachments = new Attachments(input, $<HTMLElement>('attachments'));
const post = (message: FromView): void => vscode.postMessage(message);
const view = new TranscriptView(transcript, $<HTMLElement>('meter'), $<HTMLElement>('working'), post);
let state: TranscriptState = emptyState();
const slash = new SlashList(post);
const resources = new ResourceList(post);

// ----- following the output -----
let following = true;
let lastHeight = transcript.clientHeight;
const atBottom = (): boolean => transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 24;
const follow = (): void => {
  if (following) transcript.scrollTop = transcript.scrollHeight;
};
transcript.addEventListener('scroll', () => {
  // A resize scrolls too: only the user's own scrolling changes whether we follow.
  if (transcript.clientHeight !== lastHeight) {
    lastHeight = transcript.clientHeight;
    follow();
    return;
  }
  following = atBottom();
});
new ResizeObserver(() => {
  lastHeight = transcript.clientHeight;
  follow();
}).observe(transcript);
view.onRendered = follow;

// ----- messages from the extension -----
function running(on: boolean): void {
  stop.hidden = !on;
  send.hidden = on;
  document.body.classList.toggle('running', on);
}

window.addEventListener('message', (event: MessageEvent<ToView>) => {
  const message = event.data;
  switch (message.type) {
    case 'reset':
      state = message.state;
      following = true;
      view.reset(state);
      running(state.running);
      post({ type: 'listSessions' });
      break;
    case 'action': {
      view.timing = { postedAt: message.at, receivedAt: Date.now() };
      const sessionBefore = state.session;
      if (message.action.kind === 'prompt') following = true;
      view.schedule(state, apply(state, message.action));
      running(state.running);
      // A run's end changes the session's turn count; a new session joins the picker.
      if (message.action.kind === 'end' || sessionBefore !== state.session) post({ type: 'listSessions' });
      break;
    }
    case 'sessions':
      showSessions(message.sessions, message.current);
      break;
    case 'focusInput':
      input.focus();
      break;
    case 'setup':
      showSetup(setup, message.state, post);
      $<HTMLElement>('provider').textContent = message.provider;
      break;
    case 'mode':
      showMode(message.mode, message.modes);
      break;
    case 'sendFailed':
      sendFailed(message.text, message.message);
      break;
    case 'prompts':
      slash.listed(message.prompts, message.error);
      if (document.activeElement === input) suggest();
      break;
    case 'resources':
      resources.listed(message.resources, message.error);
      if (document.activeElement === input) suggest();
      break;
  }
});

/** A prompt that could not be sent: back into the input (unless the user typed anew), with the error and a Retry. */
function sendFailed(text: string, message: string): void {
  if (!input.value.trim()) input.value = text;
  remember();
  sendError.replaceChildren(
    el('span', 'message', `Not sent: ${message}`),
    button('Retry', () => submit(), 'retry'),
  );
  sendError.hidden = false;
  input.focus();
}

function showSessions(list: { session: string; title: string; turns: number }[], current: string | undefined): void {
  const options = [new Option('New session', '')];
  for (const item of list) {
    options.push(new Option(`${item.title || item.session} (${item.turns} turn${item.turns === 1 ? '' : 's'})`, item.session));
  }
  sessions.replaceChildren(...options);
  sessions.value = current !== undefined && list.some((s) => s.session === current) ? current : '';
}

/** The bar's mode picker: its choices, `mode` selected. */
function showMode(mode: Mode, modes: readonly Mode[]): void {
  if (modePicker.options.length !== modes.length || [...modePicker.options].some((o, i) => o.value !== modes[i])) {
    modePicker.replaceChildren(
      ...modes.map((m) => {
        const option = el('option', undefined, m);
        option.value = m;
        return option;
      }),
    );
  }
  modePicker.value = mode;
  modePicker.dataset.mode = mode;
}
modePicker.addEventListener('change', () => post({ type: 'mode', mode: modePicker.value as Mode }));

sessions.addEventListener('focus', () => post({ type: 'listSessions' }));
sessions.addEventListener('change', () => {
  if (sessions.value) post({ type: 'openSession', session: sessions.value });
  else post({ type: 'newSession' });
});
$('new').addEventListener('click', () => post({ type: 'newSession' }));
$('delete').addEventListener('click', () => {
  if (sessions.value) post({ type: 'deleteSession', session: sessions.value });
});

// ----- code block buttons, and links to workspace files -----
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
transcript.addEventListener('click', (event) => {
  const target = event.target as HTMLElement;
  const href = target.closest('.markdown a')?.getAttribute('href');
  if (href && !href.startsWith('#') && !SCHEME.test(href)) {
    // A relative link in an answer names a workspace file (`path#L12` a line of it).
    event.preventDefault();
    const [path = '', fragment = ''] = href.split('#', 2);
    const line = /^L(\d+)/.exec(fragment)?.[1];
    post({ type: 'openFile', path: decodeURIComponent(path), ...(line ? { line: Number(line) } : {}) });
    return;
  }
  const action = target.closest<HTMLElement>('[data-action]')?.dataset.action;
  const code = target.closest('.code')?.querySelector('code')?.textContent;
  if (code === null || code === undefined || (action !== 'copy' && action !== 'insert')) return;
  event.preventDefault();
  post({ type: action, text: code });
  target.textContent = action === 'copy' ? 'Copied' : 'Inserted';
  setTimeout(() => (target.textContent = action === 'copy' ? 'Copy' : 'Insert'), 1200);
});

// ----- the input -----
function submit(): void {
  const typed = input.value.trim();
  if ((!typed && attachments.count === 0) || state.running) return;
  const text = typed || 'What is in this image?';
  if (typed) history.add(typed);
  input.value = '';
  sendError.hidden = true;
  following = true;
  hideCompletions();
  slash.stale();
  resources.stale();
  remember();
  const images = attachments.take();
  post(images.length > 0 ? { type: 'send', text, images } : { type: 'send', text });
}

function remember(): void {
  vscode.setState({ history: [...history.all], draft: input.value });
}

function hideCompletions(): void {
  completions.hidden = true;
  completions.replaceChildren();
}

/** The highlighted suggestion, moved by ↑/↓ (`step`), or read (no step). */
function chosen(step = 0): HTMLElement | undefined {
  const options = [...completions.querySelectorAll<HTMLElement>('.completion')];
  if (options.length === 0) return undefined;
  const at = Math.max(0, options.findIndex((option) => option.classList.contains('selected')));
  const next = (at + step + options.length) % options.length;
  options.forEach((option, index) => {
    option.classList.toggle('selected', index === next);
    option.setAttribute('aria-selected', String(index === next));
  });
  return options[next];
}

function complete(word: string): void {
  if (word.startsWith('/')) {
    input.value = slash.complete(input.value, input.selectionStart, word);
    input.selectionStart = input.selectionEnd = word.length + 1;
    hideCompletions();
    input.focus();
    return;
  }
  const at = mentionAt(input.value, input.selectionStart);
  if (at === undefined) return;
  const insert = word.endsWith(':') ? `@${word}` : `@${word} `;
  input.value = input.value.slice(0, at.start) + insert + input.value.slice(input.selectionStart);
  input.selectionStart = input.selectionEnd = at.start + insert.length;
  hideCompletions();
  input.focus();
}

function suggest(): void {
  const at = mentionAt(input.value, input.selectionStart);
  const words = at === undefined ? [] : MENTION_WORDS.filter((w) => w.startsWith(at.word) && w !== at.word);
  const found = at === undefined ? [] : resources.suggestions(at.word);
  const offered = slash.suggestions(input.value, input.selectionStart);
  if (words.length === 0 && found.length === 0 && offered === undefined) return hideCompletions();
  const option = (label: string, word: string, detail = ''): HTMLElement => {
    const element = document.createElement('div');
    element.className = 'completion';
    element.setAttribute('role', 'option');
    element.dataset.word = word;
    element.textContent = label;
    if (detail) element.append(el('span', 'completion-detail', ` ${detail}`));
    element.addEventListener('mousedown', (event) => {
      event.preventDefault();
      complete(word);
    });
    return element;
  };
  if (offered !== undefined && offered.items.length === 0) {
    const note = el('div', 'completion-note', offered.note);
    completions.replaceChildren(note);
    completions.hidden = false;
    return;
  }
  completions.replaceChildren(
    ...(offered?.items ?? []).map((item) => option(`/${item.command}`, `/${item.command}`, item.detail)),
    ...words.map((word) => option(`@${word}`, word)),
    ...found.map((item) => option(item.label, item.word, item.detail)),
  );
  const missing = at === undefined ? undefined : resources.note;
  if (missing !== undefined) completions.append(el('div', 'completion-note', missing));
  completions.hidden = false;
  chosen();
}

input.value = saved.draft;
input.addEventListener('input', () => {
  suggest();
  remember();
});
input.addEventListener('keydown', (event) => {
  measureKey(event);
  const offering = !completions.hidden && chosen() !== undefined;
  if (offering && (event.key === 'ArrowDown' || event.key === 'ArrowUp')) {
    event.preventDefault();
    chosen(event.key === 'ArrowDown' ? 1 : -1);
  } else if ((event.key === 'Enter' || event.key === 'Tab') && !event.shiftKey && !event.isComposing && offering) {
    event.preventDefault();
    const option = chosen();
    if (option?.dataset.word !== undefined) complete(option.dataset.word);
  } else if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    submit();
  } else if (event.key === 'Escape' && !completions.hidden) {
    hideCompletions();
  } else if (event.key === 'ArrowUp' && !input.value.slice(0, input.selectionStart).includes('\n')) {
    const older = history.up(input.value);
    if (older !== undefined) {
      event.preventDefault();
      input.value = older;
    }
  } else if (event.key === 'ArrowDown' && !input.value.slice(input.selectionEnd).includes('\n')) {
    const newer = history.down();
    if (newer !== undefined) {
      event.preventDefault();
      input.value = newer;
    }
  }
});
send.addEventListener('click', submit);
stop.addEventListener('click', () => post({ type: 'stop' }));
// Focus that reaches the view (its command, its keybinding, a click on its title) goes to the input.
window.addEventListener('focus', () => {
  if (document.activeElement === document.body || document.activeElement === null) input.focus();
});

// ----- figures for the editor tests -----
const keyLatencies: number[] = [];
const keyLog: string[] = [];
function measureKey(event: KeyboardEvent): void {
  const start = event.timeStamp;
  requestAnimationFrame(() =>
    setTimeout(() => {
      keyLatencies.push(Math.round((performance.now() - start) * 10) / 10);
      keyLog.push(`${Math.round(performance.timeOrigin + start)}`);
      if (keyLatencies.length > 1000) {
        keyLatencies.shift();
        keyLog.shift();
      }
      input.dataset.keyLatency = JSON.stringify(keyLatencies);
      input.dataset.keyLog = keyLog.join(',');
    }, 0),
  );
}
const taskLog: string[] = [];
let longTasks = 0;
let longTaskMs = 0;
try {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      longTasks += 1;
      longTaskMs += entry.duration;
      taskLog.push(`${Math.round(performance.timeOrigin + entry.startTime)}:${Math.round(entry.duration)}`);
      if (taskLog.length > 1000) taskLog.shift();
    }
    document.body.dataset.longTasks = `${longTasks}/${Math.round(longTaskMs)}`;
    document.body.dataset.taskLog = taskLog.join(',');
  }).observe({ type: 'longtask', buffered: true });
} catch {
  // No long-task timing in this browser: the figure is left out.
}

post({ type: 'ready' });

// Compile markdown-it's and highlight.js's code paths once while idle, so the first
// answer does not pay for it.
setTimeout(() => void renderMarkdown('# a\n\n**b** `c` [d](e)\n\n```python\ndef f(): return 1\n```\n\n| x |\n|---|\n| y |\n'), 0);
