// The page's side of the history parsing worker (history.worker.ts): starts it, forwards its
// progress, and hands out the checked records chunk by chunk. Errors come back as the types the
// parser throws (HistoryImportError with its words), a cancel as HistoryImportCancelledError.
import type { Id, Millis } from '../../memory/types';
import type { ChatRecords, HistorySource } from './chat-records';
import { HistoryImportCancelledError, HistoryImportError } from './errors';
import type { ParserReply, ParserRequest } from './parse-messages';
import type { HistoryProgress } from './progress';

/** The part of a Worker this module uses; Node and tests run the worker's code in-process. */
export interface HistoryParserPort {
  postMessage(message: ParserRequest): void;
  terminate(): void;
  onmessage: ((event: MessageEvent<ParserReply>) => void) | null;
  onerror: ((event: ErrorEvent) => void) | null;
}

export function startHistoryWorker(): HistoryParserPort {
  return new Worker(new URL('./history.worker.ts', import.meta.url), { type: 'module', name: 'tealeaf-history' });
}

/** The worker's code on this thread, message for message (Node has no Worker: the unit tests). */
export function inProcessHistoryParser(): HistoryParserPort {
  let ended = false;
  const later = (fn: () => void) => setTimeout(() => ended || fn(), 0);
  // Loaded on first use: the parser (with zod) stays out of the page's code where a worker runs it.
  const handler = import('./parse-worker-core').then(({ createHistoryParser }) =>
    // Cloned as postMessage would: the page never shares objects with the parser.
    createHistoryParser((reply) => later(() => port.onmessage?.({ data: structuredClone(reply) } as MessageEvent<ParserReply>))),
  );
  const port: HistoryParserPort = {
    onmessage: null,
    onerror: null,
    postMessage: (message) => void handler.then((handle) => later(() => void handle(message))),
    terminate: () => (ended = true),
  };
  return port;
}

/** The worker where the platform has one, else the same code in-process. */
export function defaultHistoryParser(): HistoryParserPort {
  return typeof Worker === 'undefined' ? inProcessHistoryParser() : startHistoryWorker();
}

export interface ParsedHead {
  source: HistorySource;
  /** Session ids of the file's chats, in the order the chunks bring them. */
  ids: Id[];
  empty: number;
}

export interface HistoryParse {
  /** The file read and checked whole; rejects with HistoryImportError on a bad file. */
  head(): Promise<ParsedHead>;
  /** Asks for the next chunk (one may be asked ahead while the page writes the current one). */
  ask(): void;
  /** The chunk asked for. */
  chunk(): Promise<{ chats: ChatRecords[]; last: boolean }>;
  /** Ends the worker. */
  close(): void;
}

export interface HistoryParseOptions {
  now: Millis;
  chunkChats: number;
  chunkChars: number;
  start: () => HistoryParserPort;
  onProgress?: (p: HistoryProgress) => void;
  signal?: AbortSignal;
}

type Waiter = { resolve: (r: ParserReply) => void; reject: (e: Error) => void };

/** Starts parsing `file` in a worker. A cancel (the signal) rejects whatever is awaited. */
export function parseInWorker(file: Blob, options: HistoryParseOptions): HistoryParse {
  const port = options.start();
  const queue: ParserReply[] = [];
  let waiter: Waiter | undefined;
  let failure: Error | undefined;
  const fail = (e: Error) => {
    failure ??= e;
    waiter?.reject(failure);
    waiter = undefined;
  };
  port.onmessage = ({ data: reply }) => {
    if (reply.type === 'progress') return options.onProgress?.(reply.progress);
    if (reply.type === 'failed') return fail(reply.kind === 'history' ? new HistoryImportError(reply.message) : new Error(reply.message));
    if (waiter) {
      const w = waiter;
      waiter = undefined;
      w.resolve(reply);
    } else queue.push(reply);
  };
  port.onerror = (event) => fail(new Error(`The history could not be read: ${event.message || 'its worker did not start'}.`));
  const onAbort = () => fail(new HistoryImportCancelledError());
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const take = (): Promise<ParserReply> => {
    if (failure) return Promise.reject(failure);
    const first = queue.shift();
    if (first) return Promise.resolve(first);
    return new Promise((resolve, reject) => (waiter = { resolve, reject }));
  };
  const unexpected = () => new Error('The history worker gave an unexpected answer.');
  port.postMessage({ type: 'parse', file, now: options.now, chunkChats: options.chunkChats, chunkChars: options.chunkChars });
  return {
    async head() {
      const r = await take();
      if (r.type !== 'parsed') throw unexpected();
      return { source: r.source, ids: r.ids, empty: r.empty };
    },
    ask: () => port.postMessage({ type: 'next' }),
    async chunk() {
      const r = await take();
      if (r.type !== 'chunk') throw unexpected();
      return { chats: r.chats, last: r.last };
    },
    close() {
      options.signal?.removeEventListener('abort', onAbort);
      port.onmessage = null;
      port.onerror = null;
      port.terminate();
    },
  };
}
