// "Bring your history": a ChatGPT or Claude conversations.json becomes ended chats with their
// real dates, each with a memorising job that the normal job runner works through in the
// background, oldest first. The file is read and checked completely, in a worker
// (history.worker.ts), before anything is written; the page writes what it hands over in chunks;
// chats already imported (same conversation id, so the same session id) are skipped, and so are
// chats the user deleted (a tombstone remembers them): exports are cumulative, so importing one
// again is normal, and it never undoes what the user did.
import { MAX_IMPORT_CHAT_MESSAGES, MAX_MESSAGE } from '../../memory/limits';
import type { Id, Millis } from '../../memory/types';
import type { Repository } from '../../ports';
import { SOURCE_NAMES, type HistorySource } from './chat-records';
import { checkHistorySize, HistoryImportCancelledError, HistoryImportError } from './errors';
import { defaultHistoryParser, parseInWorker, type HistoryParse, type HistoryParserPort, type ParsedHead } from './parse-client';
import type { HistoryProgress } from './progress';
import { historyProgressWords } from './progress';

export interface HistoryImportDeps {
  repo: Repository;
  /**
   * Runs the write with memorise jobs stopped in every tab and the job lock held
   * (MemoryService.exclusive): two tabs importing the same file then cannot both find a chat
   * missing and queue it twice.
   */
  exclusive: <T>(fn: () => Promise<T>) => Promise<T>;
  /** The words for where the import stands, with the state they come from. */
  onProgress?: (label: string, progress: HistoryProgress) => void;
  /** Cancel: the worker stops, and the chats saved so far are taken back. */
  signal?: AbortSignal;
  now?: () => Millis;
  /** Most chats per transaction: each commit holds whole chats with their jobs. */
  batchSize?: number;
  /** Most characters of messages per transaction (a larger chat still goes whole). */
  batchChars?: number;
  /** Starts the parser: the worker by default. */
  startParser?: () => HistoryParserPort;
}

/** What the page passes in: progress and a cancel. */
export type HistoryImportOptions = Pick<HistoryImportDeps, 'onProgress' | 'signal'>;

export interface HistoryImportResult {
  source: HistorySource;
  /** Chats written now, each queued for memorising. */
  imported: number;
  messages: number;
  /** Chats that an earlier import had already brought. */
  alreadyThere: number;
  /** Chats the user deleted since an earlier import: not brought back. */
  deleted: number;
  /** Conversations with no message from the user, left out. */
  empty: number;
  /** Chats longer than the limit, of which only the first messages were kept. */
  cut: number;
  /** Messages longer than one message may be, each kept as consecutive parts. */
  split: number;
}

/**
 * Characters of messages per transaction: cloning such a chunk from the worker and writing it
 * take the page's thread a few milliseconds of processor time (bench:history).
 */
const BATCH_CHARS = 150_000;

/**
 * Reads, checks and writes one export file. The worker reads and checks the whole file before
 * anything is written: a bad file throws HistoryImportError and writes nothing. A cancel, or a
 * write that fails, takes back the chats saved so far: the store is as it was before the import.
 */
export async function importHistory(file: Blob, deps: HistoryImportDeps): Promise<HistoryImportResult> {
  const now = deps.now ?? Date.now;
  const report = (p: HistoryProgress) => deps.onProgress?.(historyProgressWords(p), p);
  checkHistorySize(file.size);
  if (deps.signal?.aborted) throw new HistoryImportCancelledError();
  report({ phase: 'reading', done: 0, total: file.size });
  const parse = parseInWorker(file, {
    now: now(),
    chunkChats: deps.batchSize ?? 100,
    chunkChars: deps.batchChars ?? BATCH_CHARS,
    start: deps.startParser ?? defaultHistoryParser,
    onProgress: report,
    signal: deps.signal,
  });
  try {
    const head = await parse.head(); // the whole file checked before the lock is even asked for
    report({ phase: 'waiting' });
    return await deps.exclusive(() => writeHistory(head, parse, { ...deps, report }));
  } finally {
    parse.close();
  }
}

type WriteDeps = Pick<HistoryImportDeps, 'repo' | 'signal'> & { report: (p: HistoryProgress) => void };

/** Writes the chats not already stored, a chunk per transaction, as the worker hands them over. */
async function writeHistory(head: ParsedHead, parse: HistoryParse, deps: WriteDeps): Promise<HistoryImportResult> {
  const [sessions, tombstones] = await Promise.all([deps.repo.listSessions(), deps.repo.listTombstones('session')]);
  const stored = new Set(sessions.map((s) => s.id));
  const deleted = new Set(tombstones.map((t) => t.id));
  const there = head.ids.filter((id) => stored.has(id)).length;
  const total = head.ids.filter((id) => !stored.has(id) && !deleted.has(id)).length;
  const result: HistoryImportResult = {
    source: head.source,
    imported: 0,
    messages: 0,
    alreadyThere: there,
    deleted: head.ids.length - there - total,
    empty: head.empty,
    cut: 0,
    split: 0,
  };
  const written: Written[] = [];
  try {
    deps.report({ phase: 'saving', done: 0, total });
    parse.ask();
    for (;;) {
      const { chats, last } = await parse.chunk();
      if (!last) parse.ask(); // cloned while this one is written
      if (deps.signal?.aborted) throw new HistoryImportCancelledError();
      const batch = chats.filter((c) => !stored.has(c.session.id) && !deleted.has(c.session.id));
      if (batch.length > 0) {
        // Session, turns and job in one commit: a job step writes only while its job record is there.
        await deps.repo.apply({
          sessions: batch.map((c) => c.session),
          turns: batch.flatMap((c) => c.turns),
          jobs: batch.map((c) => c.job),
        });
        for (const c of batch) written.push({ session: c.session.id, turns: c.turns.map((t) => t.id), job: c.job.id });
        result.imported += batch.length;
        result.messages += batch.reduce((n, c) => n + c.turns.length, 0);
        result.cut += batch.filter((c) => c.cut).length;
        result.split += batch.reduce((n, c) => n + c.split, 0);
        deps.report({ phase: 'saving', done: result.imported, total });
      }
      if (last) break;
    }
  } catch (e) {
    if (written.length === 0) throw e;
    throw await takeBack(written, e, deps);
  }
  deps.report({ phase: 'saved', done: result.imported, total });
  return result;
}

interface Written {
  session: Id;
  turns: Id[];
  job: Id;
}

/** Chats and messages per delete when taking back. */
const UNDO_CHATS = 100;
const UNDO_TURNS = 5_000;

/**
 * Deletes what this import wrote (chats that were not there before it, whose jobs have not run:
 * the import holds the job lock), some chats per transaction. Returns the error to throw: the
 * cancel, or the failure with what became of the chats saved before it.
 */
async function takeBack(written: Written[], cause: unknown, deps: WriteDeps): Promise<Error> {
  const total = written.length;
  try {
    let i = 0;
    while (i < total) {
      deps.report({ phase: 'undoing', done: i, total });
      // Whole chats, up to UNDO_CHATS of them and UNDO_TURNS messages (but always one chat).
      const batch = [written[i++]];
      let turns = batch[0].turns.length;
      while (i < total && batch.length < UNDO_CHATS && turns + written[i].turns.length <= UNDO_TURNS) {
        turns += written[i].turns.length;
        batch.push(written[i++]);
      }
      await deps.repo.apply({
        deleteSessions: batch.map((w) => w.session),
        deleteTurns: batch.flatMap((w) => w.turns),
        deleteJobs: batch.map((w) => w.job),
      });
    }
  } catch (e) {
    const why = cause instanceof HistoryImportCancelledError ? 'The import was cancelled' : `The import stopped (${message(cause)})`;
    return new HistoryImportError(
      `${why}, and the chats saved before it could not be taken back (${message(e)}). Importing the file again adds the rest.`,
    );
  }
  if (cause instanceof HistoryImportCancelledError) return cause;
  return new HistoryImportError(
    `Saving the chats failed (${message(cause)}). The chats saved before it were taken back: nothing was imported.`,
  );
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

const count = (n: number) => n.toLocaleString('en-US');
const chats = (n: number) => `${count(n)} ${n === 1 ? 'chat' : 'chats'}`;
const was = (n: number) => (n === 1 ? 'was' : 'were');

/** Why imported chats may wait instead of being memorised now. */
export interface MemorisingState {
  /** "Make new memories from chats" is switched off in Settings. */
  creationOff: boolean;
  /** No language model is loaded: jobs wait for one. */
  noModel: boolean;
}

/** What the import did, and where memorising stands and can be paused, in one message. */
export function historyResultMessage(r: HistoryImportResult, state: MemorisingState): string {
  const from = SOURCE_NAMES[r.source];
  const extra = [
    r.alreadyThere > 0 ? `${chats(r.alreadyThere)} ${was(r.alreadyThere)} already there` : '',
    r.deleted > 0 ? `${chats(r.deleted)} you deleted ${was(r.deleted)} not brought back` : '',
    r.empty > 0 ? `${chats(r.empty)} without messages ${was(r.empty)} left out` : '',
    r.cut > 0 ? `${chats(r.cut)} kept only ${r.cut === 1 ? 'its' : 'their'} first ${count(MAX_IMPORT_CHAT_MESSAGES)} messages` : '',
    r.split > 0
      ? `${count(r.split)} ${r.split === 1 ? 'message' : 'messages'} longer than ${count(MAX_MESSAGE)} characters ${was(r.split)} kept in parts`
      : '',
  ].filter(Boolean);
  const notes = extra.length > 0 ? ` (${extra.join('; ')})` : '';
  if (r.imported === 0) return `Nothing new to import from ${from}${notes}.`;
  const head = `Imported ${chats(r.imported)} from ${from}${notes}`;
  if (state.creationOff) return `${head}. They will be memorised once “Make new memories from chats” is switched on again in Settings.`;
  if (state.noModel) return `${head}. They will be memorised in the background, oldest first, once a language model is loaded (Models).`;
  return `${head}; they are being memorised in the background, oldest first. To pause, switch off “Make new memories from chats” in Settings.`;
}
