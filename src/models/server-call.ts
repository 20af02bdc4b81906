// One HTTP call to a model server, bounded in time and size: the wait for the answer to start,
// each pause within it, the whole call, and how much of the body is read. A server that keeps the
// connection open and trickles bytes (or sends endless whitespace) is cut off, not waited for.

/** Which limit stopped a call. */
export type CallLimit = 'wait' | 'pause' | 'total';

export interface CallGuardOptions {
  /** The caller's cancel. */
  signal?: AbortSignal;
  /** Longest wait for the first byte, and for the next one once the answer has started. */
  waitMs: number;
  /** Longest whole call. */
  totalMs: number;
  /** The error a limit stops the call with. */
  onLimit: (limit: CallLimit) => Error;
}

/** Aborts the call's fetch (and so its body) at a limit or at the caller's cancel. */
export class CallGuard {
  readonly controller = new AbortController();
  /** Why the guard stopped the call, when a limit (not the caller) did. */
  stopped?: Error;
  private started = false;
  private waitTimer?: ReturnType<typeof setTimeout>;
  private readonly totalTimer: ReturnType<typeof setTimeout>;
  private readonly onAbort = () => this.controller.abort();

  constructor(private readonly opts: CallGuardOptions) {
    opts.signal?.addEventListener('abort', this.onAbort, { once: true });
    this.totalTimer = setTimeout(() => this.stop(opts.onLimit('total')), opts.totalMs);
    this.arm();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Bytes arrived: the wait for the next ones starts again. */
  alive(): void {
    this.started = true;
    this.arm();
  }

  /** Stops the call with `reason` (a limit was passed). */
  stop(reason: Error): void {
    if (this.controller.signal.aborted) return;
    this.stopped = reason;
    this.controller.abort();
  }

  end(): void {
    clearTimeout(this.waitTimer);
    clearTimeout(this.totalTimer);
    this.opts.signal?.removeEventListener('abort', this.onAbort);
  }

  private arm(): void {
    clearTimeout(this.waitTimer);
    this.waitTimer = setTimeout(() => this.stop(this.opts.onLimit(this.started ? 'pause' : 'wait')), this.opts.waitMs);
  }
}

/** Reads a stream's chunks, telling the guard each time bytes arrive. */
async function* chunks(body: ReadableStream<Uint8Array>, guard?: CallGuard): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      guard?.alive();
      yield value;
    }
  } finally {
    // Stopping early (a limit, a break) cancels the body, so the connection is let go.
    reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** Splits a server-sent-events stream into the JSON payloads of its `data:` lines. */
export async function* sseData(body: ReadableStream<Uint8Array>, guard?: CallGuard): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  const lines = function* (): Generator<string> {
    // Events end with a blank line; lines may end in \r\n. A chunk may stop anywhere.
    let end: number;
    while ((end = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, end).replace(/\r$/, '');
      buffer = buffer.slice(end + 1);
      if (line.startsWith('data:')) yield line.slice(5).trimStart();
    }
  };
  for await (const value of chunks(body, guard)) {
    buffer += decoder.decode(value, { stream: true });
    yield* lines();
  }
  buffer += decoder.decode();
  yield* lines();
  const last = buffer.replace(/\r$/, '');
  if (last.startsWith('data:')) yield last.slice(5).trimStart();
}

/** The lines of a newline-delimited JSON stream (Ollama's own routes), blank lines skipped. */
export async function* jsonLines(body: ReadableStream<Uint8Array>, guard?: CallGuard): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const value of chunks(body, guard)) {
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 1);
      if (line) yield line;
    }
  }
  const last = (buffer + decoder.decode()).trim();
  if (last) yield last;
}

/** The whole body as text, or `tooLong()` thrown once it passes `maxChars`. */
export async function readText(
  body: ReadableStream<Uint8Array> | null,
  maxChars: number,
  tooLong: () => Error,
  guard?: CallGuard,
): Promise<string> {
  if (!body) return '';
  const decoder = new TextDecoder();
  let text = '';
  for await (const value of chunks(body, guard)) {
    text += decoder.decode(value, { stream: true });
    if (text.length > maxChars) throw tooLong();
  }
  return text + decoder.decode();
}
