/**
 * The chat input's history: prompts sent, newest last, walked with ↑/↓ like
 * a shell. `up` from the draft remembers it and `down` past the newest
 * brings it back; sending resets the walk. Duplicated neighbours are kept
 * once, and the list is capped. Pure: the webview keeps it in its state.
 */
export class InputHistory {
  private position: number;
  private draft = '';

  constructor(
    private readonly entries: string[] = [],
    private readonly limit = 100,
  ) {
    this.position = entries.length;
  }

  /** The prompts, oldest first (for the webview's saved state). */
  get all(): readonly string[] {
    return this.entries;
  }

  /** Record a sent prompt and end the walk. */
  add(prompt: string): void {
    const text = prompt.trim();
    if (text && this.entries[this.entries.length - 1] !== text) this.entries.push(text);
    while (this.entries.length > this.limit) this.entries.shift();
    this.position = this.entries.length;
    this.draft = '';
  }

  /** The older prompt to show instead of `current`, or undefined at the oldest. */
  up(current: string): string | undefined {
    if (this.position === 0) return undefined;
    if (this.position === this.entries.length) this.draft = current;
    this.position -= 1;
    return this.entries[this.position];
  }

  /** The newer prompt (the draft past the newest), or undefined when not walking. */
  down(): string | undefined {
    if (this.position >= this.entries.length) return undefined;
    this.position += 1;
    return this.position === this.entries.length ? this.draft : this.entries[this.position];
  }
}
