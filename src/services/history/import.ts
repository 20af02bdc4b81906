// "Bring your history": a ChatGPT or Claude conversations.json becomes ended chats with their
// real dates, each with a memorising job that the normal job runner works through in the
// background, oldest first. The file is read and checked completely before anything is written;
// chats already imported (same conversation id, so the same session id) are skipped, and so are
// chats the user deleted (a tombstone remembers them): exports are cumulative, so importing one
// again is normal, and it never undoes what the user did.
import { MAX_IMPORT_CHAT_MESSAGES, MAX_MESSAGE } from '../../memory/limits';
import type { Millis } from '../../memory/types';
import type { Repository } from '../../ports';
import { SOURCE_NAMES, type ChatRecords, type HistorySource } from './chat-records';
import { checkHistorySize, parseHistory, type ParsedHistory } from './parse';

export interface HistoryImportDeps {
  repo: Repository;
  /**
   * Runs the write with memorise jobs stopped in every tab and the job lock held
   * (MemoryService.exclusive): two tabs importing the same file then cannot both find a chat
   * missing and queue it twice.
   */
  exclusive: <T>(fn: () => Promise<T>) => Promise<T>;
  onProgress?: (label: string) => void;
  now?: () => Millis;
  /** Chats per transaction: each commit holds whole chats with their jobs. */
  batchSize?: number;
}

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

const pause = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** Reads, checks and writes one export file. Throws HistoryImportError (nothing written) on a bad file. */
export async function importHistory(file: Blob, deps: HistoryImportDeps): Promise<HistoryImportResult> {
  const now = deps.now ?? Date.now;
  checkHistorySize(file.size);
  deps.onProgress?.('Reading the file…');
  const text = await file.text();
  deps.onProgress?.('Checking the chats…');
  await pause(); // let the page show it before the parse holds the thread
  const parsed = parseHistory(text, now());
  return deps.exclusive(() => writeHistory(parsed, deps));
}

/** Writes the chats not already stored, a batch per transaction (a cut-off import resumes on the next). */
export async function writeHistory(
  parsed: ParsedHistory,
  deps: Pick<HistoryImportDeps, 'repo' | 'onProgress' | 'batchSize'>,
): Promise<HistoryImportResult> {
  const [sessions, tombstones] = await Promise.all([deps.repo.listSessions(), deps.repo.listTombstones('session')]);
  const stored = new Set(sessions.map((s) => s.id));
  const deleted = new Set(tombstones.map((t) => t.id));
  const there = parsed.chats.filter((c) => stored.has(c.session.id)).length;
  const fresh = parsed.chats.filter((c) => !stored.has(c.session.id) && !deleted.has(c.session.id));
  const result: HistoryImportResult = {
    source: parsed.source,
    imported: 0,
    messages: 0,
    alreadyThere: there,
    deleted: parsed.chats.length - there - fresh.length,
    empty: parsed.empty,
    cut: 0,
    split: 0,
  };
  const size = deps.batchSize ?? 100;
  for (let i = 0; i < fresh.length; i += size) {
    const batch: ChatRecords[] = fresh.slice(i, i + size);
    deps.onProgress?.(`Saving chats: ${i} of ${fresh.length}…`);
    // Session, turns and job in one commit: a job step writes only while its job record is there.
    await deps.repo.apply({
      sessions: batch.map((c) => c.session),
      turns: batch.flatMap((c) => c.turns),
      jobs: batch.map((c) => c.job),
    });
    result.imported += batch.length;
    result.messages += batch.reduce((n, c) => n + c.turns.length, 0);
    result.cut += batch.filter((c) => c.cut).length;
    result.split += batch.reduce((n, c) => n + c.split, 0);
  }
  deps.onProgress?.(`Saved ${fresh.length} of ${fresh.length} chats.`);
  return result;
}

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
