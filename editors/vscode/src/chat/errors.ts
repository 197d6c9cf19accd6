/**
 * A run's error in plain words: what failed and what to do first, with the
 * server's own message kept behind as the detail.
 *
 * The server's messages (docs/protocol.md, Errors) name the provider and the
 * wire's status; the chat turns the common ones into a headline and a fix
 * the user can act on. Anything unrecognised keeps the server's message as
 * its headline. `retry` says whether trying the same thing again can help
 * (a missing key or an unset provider will fail the same way until fixed).
 * Pure: unit-tested in Node, used by the webview.
 */

export interface ExplainedError {
  /** What failed, in one short sentence. */
  headline: string;
  /** What to do about it, first. */
  fix: string;
  /** The server's message, for the details. */
  detail: string;
  /** Whether a Retry can help as things stand. */
  retry: boolean;
  /** The error means no provider is set up: show the setup choices. */
  setup?: boolean;
}

/** Where a key goes: `variable` named, or the provider's own. */
function keyFix(variable: string): string {
  return `Set ${variable} in the environment VS Code starts the server with (never in settings), then run "Rhema: Restart Server"`;
}

interface Rule {
  test: RegExp;
  explain: (match: RegExpExecArray) => Omit<ExplainedError, 'detail'>;
}

const RULES: Rule[] = [
  {
    test: /^no model provider is set up/,
    explain: () => ({
      headline: 'No model provider is set up yet.',
      fix: 'Pick one in the setup card: a local server, a hosted provider with its key, or the demo model.',
      retry: false,
      setup: true,
    }),
  },
  {
    test: /provider (\S+) needs its key: set (\w+)/,
    explain: (m) => ({
      headline: `The ${m[1] ?? ''} provider needs its API key (${m[2] ?? ''}).`,
      fix: `${keyFix(m[2] ?? "the provider's key variable")}.`,
      retry: false,
      setup: true,
    }),
  },
  {
    test: /answered HTTP (401|403)\b/,
    explain: (m) => ({
      headline: `The provider refused the request (HTTP ${m[1] ?? ''}): its API key is missing, wrong or not allowed.`,
      fix: `${keyFix("the provider's key variable")}. For a custom rhema.baseUrl, also list its origin in RHEMA_KEY_ORIGINS.`,
      retry: false,
    }),
  },
  {
    test: /answered HTTP 404\b/,
    explain: () => ({
      headline: 'The provider does not know this model or endpoint (HTTP 404).',
      fix: 'Check rhema.model (the provider lists its models) and rhema.baseUrl.',
      retry: false,
    }),
  },
  {
    test: /answered HTTP 429\b/,
    explain: () => ({
      headline: 'The provider is limiting requests (HTTP 429).',
      fix: "Wait a moment and Retry; if it keeps happening, check your plan's limits.",
      retry: true,
    }),
  },
  {
    test: /answered HTTP (5\d\d)\b/,
    explain: (m) => ({
      headline: `The provider had a problem on its side (HTTP ${m[1] ?? ''}).`,
      fix: 'Retry in a moment.',
      retry: true,
    }),
  },
  {
    test: /answered HTTP 400\b/,
    explain: () => ({
      headline: 'The provider rejected the request (HTTP 400).',
      fix: 'Check rhema.model and the details below for what it objected to; then Retry.',
      retry: true,
    }),
  },
  {
    test: /could not connect to (\S+) at (\S+): /,
    explain: (m) => ({
      headline: `Could not reach ${m[1] ?? 'the provider'} at ${m[2] ?? 'its address'}.`,
      fix: 'Start the model server (or check rhema.baseUrl), then Retry.',
      retry: true,
    }),
  },
  {
    test: /did not answer in time/,
    explain: () => ({
      headline: 'The provider did not answer in time.',
      fix: 'Check that the model server is running and reachable, then Retry.',
      retry: true,
    }),
  },
  {
    test: /stream stalled|connection dropped mid-stream|stream broke mid-answer|ended without/,
    explain: () => ({
      headline: 'The answer was cut off: the connection to the provider broke.',
      fix: 'Retry to ask again.',
      retry: true,
    }),
  },
  {
    test: /is not \S+'s own origin/,
    explain: () => ({
      headline: "The key was not sent: rhema.baseUrl is not the preset's own address.",
      fix: 'If you trust that endpoint, add its origin to RHEMA_KEY_ORIGINS in the environment; else clear rhema.baseUrl.',
      retry: false,
    }),
  },
  {
    test: /the local model (\S+) is not known to read images/,
    explain: (m) => ({
      headline: `The image was not sent: the local model ${m[1] ?? ''} is not known to read images.`,
      fix: 'Run a vision model (llava, qwen2.5vl, gemma3, ...), or, if this one reads images, set rhema.vision to "Reads images" in Settings; then Retry.',
      retry: true,
    }),
  },
  {
    test: /images are turned off \(the vision setting is false\)/,
    explain: () => ({
      headline: 'The image was not sent: images are turned off (rhema.vision is false).',
      fix: 'Set rhema.vision in Settings to "Guess" or "Reads images", or send the prompt without the image; then Retry.',
      retry: true,
    }),
  },
  {
    test: /exceed|too long|context window|context length/i,
    explain: () => ({
      headline: "The conversation no longer fits the model's context window.",
      fix: 'Run "Rhema: Compact Session", or start a new session, then Retry.',
      retry: true,
    }),
  },
];

export function explainError(message: string): ExplainedError {
  for (const rule of RULES) {
    const match = rule.test.exec(message);
    if (match !== null) return { ...rule.explain(match), detail: message };
  }
  return { headline: message, fix: '', detail: message, retry: true };
}
