// When a chat session ends (LD-Agent: an idle gap, default one hour, or the user ending it).
import type { Id, Job, Millis, Session, Turn } from '../../memory/types';
import type { Repository } from '../../ports';
import { createMemoriseJob } from '../../memory/ingest/memorise';
import { isStorageFullError } from '../../store/errors';

export const DEFAULT_IDLE_GAP_MS = 60 * 60 * 1000;

/** An open session whose last activity is at least `gapMs` old has ended by the idle rule. */
export function isIdleExpired(session: Session, now: Millis, gapMs: Millis = DEFAULT_IDLE_GAP_MS): boolean {
  if (session.status !== 'open') return false;
  if (!(gapMs > 0)) return false;
  return now - session.lastActivityAt >= gapMs;
}

/**
 * Sessions to end when the app opens or a user writes: every open session past the idle gap,
 * and every open session other than `keepOpenId` (only one session is open at a time).
 */
export function sessionsToEnd(
  sessions: Session[],
  now: Millis,
  gapMs: Millis,
  keepOpenId?: string,
): Array<{ session: Session; reason: 'idle' | 'new-chat' }> {
  const out: Array<{ session: Session; reason: 'idle' | 'new-chat' }> = [];
  for (const s of sessions) {
    if (s.status !== 'open') continue;
    if (isIdleExpired(s, now, gapMs)) out.push({ session: s, reason: 'idle' });
    else if (keepOpenId !== undefined && s.id !== keepOpenId) out.push({ session: s, reason: 'new-chat' });
  }
  return out;
}

/** A session with no turns is not worth memorising: it is discarded instead of ended. */
export function isEmptySession(turns: Turn[]): boolean {
  return !turns.some((t) => t.role === 'user' && t.text.trim().length > 0);
}

/** The session's end time is its last activity (not the moment the rule noticed it). */
export function endSession(session: Session, reason: NonNullable<Session['endReason']>): Session {
  return { ...session, status: 'ended', endedAt: session.lastActivityAt, endReason: reason };
}

/** Longest chat title kept (a rename is cut there). */
export const MAX_TITLE = 200;

/** Writes a chat's new title (spaces folded, cut at MAX_TITLE): the renamed session, or none when nothing changes. */
export async function renameSession(repo: Repository, id: Id, title: string): Promise<Session | undefined> {
  const clean = title.replace(/\s+/g, ' ').trim().slice(0, MAX_TITLE);
  const stored = await repo.getSession(id);
  if (!clean || !stored || stored.title === clean) return undefined;
  const renamed = { ...stored, title: clean };
  await repo.apply({ sessions: [renamed] });
  return renamed;
}

const TITLE_MAX = 60;
/** A title from the first user message: first line, trimmed to a word boundary. */
export function titleFrom(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (line.length <= TITLE_MAX) return line || 'New chat';
  const cut = line.slice(0, TITLE_MAX);
  const space = cut.lastIndexOf(' ');
  return (space > 20 ? cut.slice(0, space) : cut) + '…';
}

/** What ending a session wrote: nothing kept (it was empty), kept only, or kept with its memorise job. */
export type EndWritten = { kept: false } | { kept: true; ended: Session; job?: Job };

/**
 * Ends a session in one change with its memorising job (none when memory creation is off: the
 * session is kept, not memorised); an empty session is discarded instead.
 */
export async function writeSessionEnd(
  repo: Repository,
  session: Session,
  reason: NonNullable<Session['endReason']>,
  now: Millis,
  memorise: boolean,
): Promise<EndWritten> {
  const turns = await repo.listTurns(session.id);
  if (isEmptySession(turns)) {
    await repo.apply({ deleteSessions: [session.id], deleteTurns: turns.map((t) => t.id) });
    return { kept: false };
  }
  const ended = endSession(session, reason);
  const job = memorise ? createMemoriseJob(session.id, now) : undefined;
  await repo.apply({ sessions: [ended], ...(job ? { jobs: [job] } : {}) });
  return { kept: true, ended, ...(job ? { job } : {}) };
}

/**
 * The chat's start-up writes: sessions past the idle gap end (through `finish`), and replies that
 * were streaming when the tab closed become "interrupted". Returns the open session to show. A
 * full disk refuses these writes: the app starts anyway (the repository reports the state) and
 * what could not be written is done at a later start; any other failure still stops the start.
 * Only this device's chats (`ours`): another device's open chat, synced here, is continued, ended
 * and memorised there, and its reply may be streaming there right now (docs/SYNC.md).
 */
export async function startUpChats(
  repo: Repository,
  now: Millis,
  gapMs: Millis,
  finish: (session: Session, reason: NonNullable<Session['endReason']>) => Promise<void>,
  ours: (session: Session) => boolean = () => true,
): Promise<Session | undefined> {
  const sessions = (await repo.listSessions()).filter(ours);
  const open = sessions.filter((s) => s.status === 'open').sort((a, b) => b.lastActivityAt - a.lastActivityAt);
  const keep = open.find((s) => !isIdleExpired(s, now, gapMs));
  try {
    for (const { session, reason } of sessionsToEnd(open, now, gapMs, keep?.id ?? '')) await finish(session, reason);
    // A reply can only have been streaming in one of the latest sessions: look there only.
    const recent = [...sessions].sort((a, b) => b.lastActivityAt - a.lastActivityAt).slice(0, 3);
    for (const s of recent) {
      const turns = await repo.listTurns(s.id);
      const cut = turns.filter((t) => t.status === 'streaming').map((t) => ({ ...t, status: 'interrupted' as const }));
      if (cut.length) await repo.apply({ turns: cut });
    }
  } catch (e) {
    if (!isStorageFullError(e)) throw e;
  }
  return keep;
}
