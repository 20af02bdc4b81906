// Reading a chat-history export: which format it is (ChatGPT or Claude conversations.json), whether
// it is well formed and within the limits, and the records it becomes. Everything is checked before
// anything is written: a bad file changes nothing. Pure: runs in Node.
import { MAX_IMPORT_CHATS, MAX_IMPORT_MESSAGES } from '../../memory/limits';
import type { Millis } from '../../memory/types';
import type { z } from '../../memory/zod';
import { chatRecords, SOURCE_NAMES, type ChatRecords, type ExportedChat, type HistorySource } from './chat-records';
import { chatgptChat, chatgptConversationSchema, looksLikeChatgpt } from './chatgpt';
import { claudeChat, claudeConversationSchema, looksLikeClaude } from './claude';
import { checkHistorySize, HistoryImportError, NOTHING } from './errors';

export { checkHistorySize, HistoryImportError } from './errors';

export interface ParsedHistory {
  source: HistorySource;
  /** Chats with something to remember, oldest first (by their last message). */
  chats: ChatRecords[];
  /** Conversations left out: no message from the user with text. */
  empty: number;
}

const ACCEPTED =
  'Tealeaf imports conversations.json from a ChatGPT data export (Settings › Data controls › Export data) ' +
  'or from a Claude data export (Settings › Privacy › Export data).';
const count = (n: number) => n.toLocaleString('en-US');

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function detect(value: unknown): HistorySource {
  if (Array.isArray(value)) {
    const first = value.find(isRecord);
    if (first && looksLikeChatgpt(first)) return 'chatgpt';
    if (first && looksLikeClaude(first)) return 'claude';
    if (value.length === 0) throw new HistoryImportError(`The file holds an empty list: there are no chats to import. ${NOTHING}`);
  } else if (isRecord(value)) {
    if ('speaker_a' in value || isRecord(value.conversation))
      throw new HistoryImportError(`This is a LoCoMo conversation, not a chat export: use “Import LoCoMo…” for it. ${NOTHING}`);
    if (looksLikeChatgpt(value) || looksLikeClaude(value))
      throw new HistoryImportError(`This file holds a single conversation; choose the whole conversations.json of the export. ${NOTHING}`);
  }
  throw new HistoryImportError(`This file is not a ChatGPT or Claude export. ${ACCEPTED}`);
}

/** "mapping.a1.message.author.role" from zod's path. */
function pathText(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i > 0 ? '.' : ''}${String(p)}`)).join('');
}

function issueText(index: number, error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue && issue.path.length > 0 ? ` ${pathText(issue.path)}` : '';
  return `chat ${index + 1}${where}: ${issue?.message ?? 'not readable'}`;
}

type Read = { chat: ExportedChat; error?: undefined } | { chat?: undefined; error: z.ZodError };

const READERS: Record<HistorySource, (entry: unknown) => Read> = {
  chatgpt: (entry) => {
    const p = chatgptConversationSchema.safeParse(entry);
    return p.success ? { chat: chatgptChat(p.data) } : { error: p.error };
  },
  claude: (entry) => {
    const p = claudeConversationSchema.safeParse(entry);
    return p.success ? { chat: claudeChat(p.data) } : { error: p.error };
  },
};

/** Called after each chat is read: how many of how many (the parsing worker reports it). */
export type OnChatRead = (done: number, total: number) => void;

/** Every entry checked against the format's schema; up to three problems are named. */
function readChats(source: HistorySource, list: unknown[], onRead?: OnChatRead): ExportedChat[] {
  const problems: string[] = [];
  let bad = 0;
  const chats: ExportedChat[] = [];
  list.forEach((entry, i) => {
    const read = READERS[source](entry);
    if (read.chat) chats.push(read.chat);
    else if (bad++ < 3) problems.push(issueText(i, read.error));
    onRead?.(i + 1, list.length);
  });
  if (bad > 0) {
    throw new HistoryImportError(
      `This looks like a ${SOURCE_NAMES[source]} export, but ${bad === 1 ? 'one chat' : `${count(bad)} chats`} could not be read (` +
        `${problems.join('; ')}${bad > problems.length ? '; …' : ''}). ${NOTHING} ` +
        `Export your data from ${SOURCE_NAMES[source]} again and choose the conversations.json inside it, unchanged.`,
    );
  }
  return chats;
}

/**
 * Reads the text of a conversations.json into the records to write, or throws HistoryImportError.
 * `now` dates a chat that has no time at all and stamps the jobs.
 */
export function parseHistory(text: string, now: Millis, onRead?: OnChatRead): ParsedHistory {
  checkHistorySize(text.length);
  // A ZIP archive starts with "PK": the user chose the export itself, not the file inside it.
  if (text.startsWith('PK')) {
    throw new HistoryImportError(
      `This is a ZIP archive. Unzip your ChatGPT or Claude data export and choose the conversations.json inside it. ${NOTHING}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw new HistoryImportError(`This file is not JSON. ${ACCEPTED}`);
  }
  const source = detect(value);
  const list = value as unknown[];
  if (list.length > MAX_IMPORT_CHATS) {
    throw new HistoryImportError(
      `This export holds ${count(list.length)} chats; Tealeaf imports at most ${count(MAX_IMPORT_CHATS)} at once. ${NOTHING} ` +
        'conversations.json is a JSON list of chats: split it into smaller lists and import them one after another.',
    );
  }
  const seen = new Set<string>();
  const chats: ChatRecords[] = [];
  let empty = 0;
  let messages = 0;
  for (const chat of readChats(source, list, onRead)) {
    const records = chatRecords(source, chat, now);
    if (!records) {
      empty++;
      continue;
    }
    // The same conversation twice in one file: once is enough.
    if (seen.has(records.session.id)) continue;
    seen.add(records.session.id);
    messages += records.turns.length;
    chats.push(records);
  }
  if (messages > MAX_IMPORT_MESSAGES) {
    throw new HistoryImportError(
      `This export holds ${count(messages)} messages; Tealeaf imports at most ${count(MAX_IMPORT_MESSAGES)} at once. ${NOTHING} ` +
        'conversations.json is a JSON list of chats: split it into smaller lists and import them one after another.',
    );
  }
  if (chats.length === 0) throw new HistoryImportError(`The file holds no chats with messages from you. ${NOTHING}`);
  chats.sort(
    (a, b) =>
      a.session.lastActivityAt - b.session.lastActivityAt ||
      a.session.startedAt - b.session.startedAt ||
      (a.session.id < b.session.id ? -1 : 1),
  );
  return { source, chats, empty };
}
