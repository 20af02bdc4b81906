// What the history parsing worker does, apart from the worker itself (history.worker.ts), so that
// Node tests and a page without workers run the very same code in-process. Pure of the DOM but
// for Blob and TextDecoder. One file per worker: the page starts one for each import.
import type { ChatRecords } from './chat-records';
import { HistoryImportError } from './errors';
import type { ParserReply, ParserRequest } from './parse-messages';
import { parseHistory } from './parse';
import type { HistoryProgress } from './progress';

/** Progress at most this often: each report is a message the page handles. */
const REPORT_MS = 100;

/** Returns the handler for the page's requests. */
export function createHistoryParser(post: (reply: ParserReply) => void): (request: ParserRequest) => Promise<void> {
  let chunks: Array<ChatRecords[] | undefined> = [];
  let next = 0;
  let started = false;
  let last = -Infinity;
  const report = (progress: HistoryProgress, force = false) => {
    const now = performance.now();
    if (!force && now - last < REPORT_MS) return;
    last = now;
    post({ type: 'progress', progress });
  };
  return async (request) => {
    if (request.type === 'next') {
      const chats = chunks[next] ?? [];
      chunks[next++] = undefined; // handed over: this side lets go of it
      post({ type: 'chunk', chats, last: next >= chunks.length });
      return;
    }
    if (started) return post({ type: 'failed', kind: 'other', message: 'The history worker is already busy.' });
    started = true;
    try {
      const text = await readText(request.file, report);
      report({ phase: 'opening' }, true);
      const parsed = parseHistory(text, request.now, (done, total) => report({ phase: 'checking', done, total }, done === total));
      chunks = chunked(parsed.chats, request.chunkChats, request.chunkChars);
      post({ type: 'parsed', source: parsed.source, ids: parsed.chats.map((c) => c.session.id), empty: parsed.empty });
    } catch (e) {
      post(
        e instanceof HistoryImportError
          ? { type: 'failed', kind: 'history', message: e.message }
          : { type: 'failed', kind: 'other', message: e instanceof Error ? e.message : String(e) },
      );
    }
  };
}

/** The file's text, read in pieces to report the bytes read; decoded as Blob.text() does. */
async function readText(file: Blob, report: (p: HistoryProgress, force?: boolean) => void): Promise<string> {
  const total = file.size;
  report({ phase: 'reading', done: 0, total }, true);
  const decoder = new TextDecoder();
  const reader = file.stream().getReader();
  const parts: string[] = [];
  let done = 0;
  for (;;) {
    const read = await reader.read();
    if (read.done) break;
    parts.push(decoder.decode(read.value, { stream: true }));
    done += read.value.byteLength;
    report({ phase: 'reading', done, total });
  }
  parts.push(decoder.decode());
  report({ phase: 'reading', done: total, total }, true);
  return parts.join('');
}

/** Whole chats, in order, at most `most` chats and (but for a single larger chat) `chars` characters a chunk. */
export function chunked(chats: ChatRecords[], most: number, chars: number): ChatRecords[][] {
  const out: ChatRecords[][] = [];
  let chunk: ChatRecords[] = [];
  let size = 0;
  for (const c of chats) {
    const n = c.turns.reduce((sum, t) => sum + t.text.length, 0);
    if (chunk.length > 0 && (chunk.length >= most || size + n > chars)) {
      out.push(chunk);
      chunk = [];
      size = 0;
    }
    chunk.push(c);
    size += n;
  }
  if (chunk.length > 0) out.push(chunk);
  return out;
}
