/**
 * The chat's setup card, from `rhema.status`'s `setup` (docs/protocol.md,
 * First run): the choices a user has when no provider works, most ready
 * first, each with the settings it writes.
 *
 * A choice writes the whole provider group (`provider`, and `model`,
 * `baseUrl`, `protocol` cleared unless given) to the user settings, so no
 * leftover of an earlier setting mixes in. A hosted preset's button asks
 * for its API key (kept in VS Code's secret storage, `keys.ts`, and given to
 * the server in its environment), never written to a setting. The demo model is offered last, labelled for what it is, and
 * only when installed (else with the command that installs it). Pure:
 * unit-tested in Node, rendered by the webview.
 */
import type { ProviderSetup } from '../contract';
import { explainError } from './errors';

/** The provider settings a choice writes (absent keys are cleared). */
export interface ProviderChoice {
  provider: string;
  model?: string;
}

/** A button of a row: its label and what it writes (none: it opens the settings); `keyVar`: ask for that key first. */
export interface SetupButton {
  label: string;
  choice?: ProviderChoice;
  keyVar?: string;
}

/** Why `name` is not a provider's key variable (the only variables a key may be stored as). */
export function keyVariableProblem(name: string): string | undefined {
  return /^[A-Z][A-Z0-9_]{0,40}_API_KEY$/.test(name) ? undefined : `${name} is not a provider's API key variable`;
}

/** Why `value` cannot be a key (empty, or more than one line). */
export function keyValueProblem(value: string): string | undefined {
  const key = value.trim();
  if (key === '') return 'Paste the key';
  if (key.length > 4096 || /\s/.test(key) || key.includes(String.fromCharCode(0))) return 'A key is one word, with no spaces or line breaks';
  return undefined;
}

export interface SetupRow {
  /** A stable id for the row (tests and keyboard focus). */
  id: string;
  title: string;
  detail: string;
  /** Its buttons; none: a row that only says what to do. */
  buttons: SetupButton[];
}

export interface SetupCard {
  heading: string;
  intro: string;
  rows: SetupRow[];
}

const NAMES: Record<string, string> = {
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  gemini: 'Google Gemini',
  openrouter: 'OpenRouter',
  groq: 'Groq',
  ollama: 'Ollama',
  lmstudio: 'LM Studio',
  llamacpp: 'llama.cpp',
  vllm: 'vLLM',
  embedded: 'the demo model',
};

function title(preset: string): string {
  return NAMES[preset] ?? preset;
}

function port(url: string): string {
  return /:(\d+)(?:\/|$)/.exec(url)?.[1] ?? url;
}

/** The card for `setup`, given the provider's error (none: the provider works). */
export function setupCard(setup: ProviderSetup, error: string): SetupCard {
  const rows: SetupRow[] = [];
  for (const server of setup.servers) {
    if (server.models.length > 0) {
      const shown = server.models.slice(0, 3).join(', ') + (server.models.length > 3 ? ', …' : '');
      rows.push({
        id: `server-${server.preset}-${port(server.baseUrl)}`,
        title: `${server.label || title(server.preset)} is running on this machine`,
        detail: `${server.baseUrl} lists ${shown}.`,
        buttons: [{ label: `Use ${title(server.preset)}`, choice: { provider: server.preset } }],
      });
    } else {
      rows.push({
        id: `server-${server.preset}-${port(server.baseUrl)}`,
        title: `${server.label || title(server.preset)} is running but has no model`,
        detail: `${server.baseUrl} lists no model: load or pull one into it, then Check again.`,
        buttons: [],
      });
    }
  }
  const hosted = setup.presets.filter((preset) => preset.kind === 'hosted');
  for (const preset of hosted.filter((p) => p.keyPresent)) {
    rows.push({
      id: `key-${preset.name}`,
      title: `${title(preset.name)}: its key is set`,
      detail: `${preset.keyVar ?? ''} is in the server's environment; the default model is ${preset.model}.`,
      buttons: [{ label: `Use ${title(preset.name)}`, choice: { provider: preset.name } }],
    });
  }
  if (setup.servers.length === 0) {
    const local = setup.presets.filter((preset) => preset.kind === 'local');
    rows.push({
      id: 'local',
      title: 'A model server on this machine',
      detail: `Start ${local.map((p) => `${title(p.name)} (port ${port(p.baseUrl)})`).join(', ')}: it is found by itself. Then Check again.`,
      buttons: [],
    });
  }
  const waiting = hosted.filter((p) => !p.keyPresent);
  if (waiting.length > 0) {
    rows.push({
      id: 'hosted',
      title: 'A hosted provider',
      detail:
        "Pick one and paste its API key: it is kept in VS Code's secret storage (never in settings) and given to the server, which restarts. Or set it in the environment VS Code starts the server with: " +
        waiting.map((p) => `${title(p.name)} ${p.keyVar ?? ''}`).join(', ') +
        '.',
      buttons: waiting.map((p) => ({
        label: title(p.name),
        choice: { provider: p.name },
        ...(p.keyVar ? { keyVar: p.keyVar } : {}),
      })),
    });
  }
  rows.push({
    id: 'custom',
    title: 'Another endpoint',
    detail: 'Any OpenAI-, Anthropic- or Gemini-compatible server: set rhema.baseUrl and rhema.protocol.',
    buttons: [{ label: 'Open Settings' }],
  });
  const demo = setup.demo;
  rows.push({
    id: 'demo',
    title: `Try the tiny demo model (${demo.model})`,
    detail: demo.available
      ? `${capitalise(demo.note)}. It runs inside the server, with no network.`
      : `${capitalise(demo.note)}. Not installed: ${demo.install} in rhema-lsp's environment.`,
    buttons: demo.available ? [{ label: 'Try the demo model', choice: { provider: demo.name } }] : [],
  });
  const explained = explainError(error);
  return {
    heading: setup.configured ? 'The model provider setting does not work' : 'Choose a model provider',
    intro: setup.configured
      ? `${explained.headline} ${explained.fix} Or pick another below (saved as your user setting rhema.provider).`
      : 'Rhema needs a model to talk to, and none is set up. Pick one; it is saved as your user setting rhema.provider.',
    rows,
  };
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
