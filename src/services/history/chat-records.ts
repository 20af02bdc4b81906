// One exported chat (from ChatGPT or Claude, already read into a neutral shape) as the records
// Tealeaf keeps: an ended session with its real dates, its turns with their own times, and the
// memorising job that will remember it. Pure: runs in Node.
import { createMemoriseJob } from '../../memory/ingest/memorise';
import { isValidTime, MAX_IMPORT_CHAT_MESSAGES, splitMessage } from '../../memory/limits';
import type { Id, Job, Millis, Session, Turn } from '../../memory/types';
import { isEmptySession, titleFrom } from '../chat/session-rules';

export type HistorySource = 'chatgpt' | 'claude';

export const SOURCE_NAMES: Record<HistorySource, string> = { chatgpt: 'ChatGPT', claude: 'Claude' };

export interface ExportedMessage {
  /** The export's own id of the message, kept as the turn's externalId. */
  id?: string;
  role: 'user' | 'assistant';
  text: string;
  time?: Millis;
}

export interface ExportedChat {
  /** The export's id of the conversation: the session id is derived from it. */
  id: string;
  title: string;
  createdAt?: Millis;
  updatedAt?: Millis;
  /** In the order they were said (for ChatGPT: the branch the user last saw). */
  messages: ExportedMessage[];
}

export interface ChatRecords {
  session: Session;
  turns: Turn[];
  job: Job;
  /** The chat had more messages than MAX_IMPORT_CHAT_MESSAGES; only the first were kept. */
  cut: boolean;
  /** Messages longer than one message may be (MAX_MESSAGE), each kept as consecutive parts. */
  split: number;
}

/** Longest title kept (as a rename in ChatService). */
const MAX_TITLE = 200;
/** Longest externalId kept: export ids are uuids; anything longer is not an id worth keeping. */
const MAX_EXTERNAL_ID = 100;

/** FNV-1a, 32 bits, from a given offset basis (not for security). */
function fnv1a(text: string, basis: number): string {
  let h = basis;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * The session id of an exported conversation: the same in every import of the same export, so a
 * second import finds it and skips it. 64 bits (two FNV-1a runs): an export of tens of thousands
 * of chats would likely have a collision at 32.
 */
export function historySessionId(source: HistorySource, conversationId: string): Id {
  const key = `${source}\u0000${conversationId}`;
  return `${source}-${fnv1a(key, 0x811c9dc5)}${fnv1a(key, 0x050c5d1f)}`;
}

/** A time worth keeping: finite, within Date's range, rounded to whole milliseconds. */
export function usableTime(t: number | null | undefined): Millis | undefined {
  return typeof t === 'number' && isValidTime(t) ? Math.round(t) : undefined;
}

function cleanTitle(title: string, firstUserText: string): string {
  const t = title.replace(/\s+/g, ' ').trim().slice(0, MAX_TITLE);
  return t || titleFrom(firstUserText);
}

/**
 * The records of one exported chat, or undefined when it has nothing to remember (no message from
 * the user with text: the rule for an empty chat in the app). Times: a message without one takes
 * the time before it, and times never go backwards (turn order is the export's order); a chat
 * with no time at all is dated `now`.
 */
export function chatRecords(source: HistorySource, chat: ExportedChat, now: Millis): ChatRecords | undefined {
  const cut = chat.messages.length > MAX_IMPORT_CHAT_MESSAGES;
  const messages = cut ? chat.messages.slice(0, MAX_IMPORT_CHAT_MESSAGES) : chat.messages;
  const sessionId = historySessionId(source, chat.id);
  const firstTime = messages.find((m) => m.time !== undefined)?.time;
  const start = Math.min(chat.createdAt ?? Infinity, firstTime ?? Infinity);
  let prev = Number.isFinite(start) ? start : (chat.updatedAt ?? now);
  let split = 0;
  const turns: Turn[] = [];
  for (const m of messages) {
    prev = Math.max(prev, m.time ?? prev);
    const externalId = m.id?.slice(0, MAX_EXTERNAL_ID);
    // Nothing of a very long message is lost: its parts follow each other, said by the same speaker.
    const parts = splitMessage(m.text);
    if (parts.length > 1) split++;
    for (const text of parts) {
      const index = turns.length;
      turns.push({
        id: `${sessionId}:t${index}`,
        sessionId,
        index,
        role: m.role,
        text,
        time: prev,
        status: 'complete',
        ...(externalId ? { externalId } : {}),
      });
    }
  }
  if (isEmptySession(turns)) return undefined;
  const startedAt = Math.min(chat.createdAt ?? turns[0].time, turns[0].time);
  const last = turns[turns.length - 1].time;
  const session: Session = {
    id: sessionId,
    title: cleanTitle(chat.title, turns.find((t) => t.role === 'user')?.text ?? ''),
    startedAt,
    lastActivityAt: last,
    endedAt: last,
    status: 'ended',
    endReason: 'import',
  };
  // Queued at the chat's own time: the job runner takes the oldest createdAt first, so history is
  // memorised in the order it happened (across imports too, and before chats newer than it).
  const job: Job = { ...createMemoriseJob(sessionId, last), updatedAt: now };
  return { session, turns, job, cut, split };
}
