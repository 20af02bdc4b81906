// Streams generated text token by token. transformers.js's TextStreamer holds text back until a
// word is complete, which on a slow CPU (or a model that writes long runs without spaces) shows
// nothing for seconds; this emits every token, holding back only an unfinished UTF-8 character.
// Structurally a transformers.js BaseStreamer (put/end), with the decoder injected: no SDK import.

export class TokenStreamer {
  private readonly ids: bigint[] = [];
  private sentLength = 0;
  private promptSeen = false;
  /** Tokens generated so far. */
  count = 0;

  constructor(
    private readonly decode: (ids: bigint[]) => string,
    private readonly onText: (delta: string) => void,
  ) {}

  /** Called by generate(): first with the prompt (skipped), then with each new token. */
  put(value: bigint[][]): void {
    if (!this.promptSeen) {
      this.promptSeen = true;
      return;
    }
    const token = value[0]?.[0];
    if (token === undefined) return;
    this.ids.push(token);
    this.count++;
    this.flush(false);
  }

  end(): void {
    this.flush(true);
  }

  private flush(final: boolean): void {
    const text = this.decode(this.ids);
    // A byte-level token may end inside a multi-byte character: wait for the rest.
    const ready = !final && text.endsWith('\uFFFD') ? text.slice(0, -1) : text;
    if (ready.length <= this.sentLength) return;
    const delta = ready.slice(this.sentLength);
    this.sentLength = ready.length;
    this.onText(delta);
  }
}
