// What the page and the history parsing worker (history.worker.ts) say to each other. The worker
// reads, parses and checks the whole file first (a bad file writes nothing), then hands the
// records over in chunks, one per request: the page writes a chunk while the next one is cloned,
// and never holds more than two.
import type { Id, Millis } from '../../memory/types';
import type { ChatRecords, HistorySource } from './chat-records';
import type { HistoryProgress } from './progress';

export type ParserRequest =
  | {
      type: 'parse';
      file: Blob;
      /** Dates a chat with no time at all and stamps the jobs (the page's clock). */
      now: Millis;
      /** Most chats in one chunk. */
      chunkChats: number;
      /** Most characters of messages in one chunk (a chunk holds at least one whole chat). */
      chunkChars: number;
    }
  | { type: 'next' };

export type ParserReply =
  | { type: 'progress'; progress: HistoryProgress }
  /** The file is good: its chats' session ids, oldest first, in the order the chunks bring them. */
  | { type: 'parsed'; source: HistorySource; ids: Id[]; empty: number }
  | { type: 'chunk'; chats: ChatRecords[]; last: boolean }
  /** kind: 'history' is a HistoryImportError (the file), rebuilt with its words on the page. */
  | { type: 'failed'; kind: 'history' | 'other'; message: string };
