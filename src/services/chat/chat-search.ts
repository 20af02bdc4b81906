// Searching chats by title and message text: every word of the query must occur somewhere in the
// chat (title or a shown message), ignoring case and accents. Pure but for the cache, which reads
// through the function it is given.
import type { Session } from '../../memory/types';

export interface SessionMatch {
  sessionId: string;
  /** Where the first word was found. */
  in: 'title' | 'text';
  /** A few words around the match in a message (empty for a title match). */
  snippet: string;
}

/** Lower case without accents, so "cafe" finds "Café". Same length as the input for Latin text. */
export function fold(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

export function queryWords(query: string): string[] {
  return fold(query)
    .split(/\s+/)
    .filter((w) => w.length > 0);
}

/** Around `at` in `text`, cut at word boundaries, with ellipses where cut. */
export function snippetAround(text: string, at: number, length: number, radius = 40): string {
  const flat = text.replace(/\s+/g, ' ');
  let from = Math.max(0, at - radius);
  let to = Math.min(flat.length, at + length + radius);
  if (from > 0) from = flat.indexOf(' ', from) + 1 || from;
  if (to < flat.length) to = flat.lastIndexOf(' ', to) > at + length ? flat.lastIndexOf(' ', to) : to;
  return `${from > 0 ? '…' : ''}${flat.slice(from, to).trim()}${to < flat.length ? '…' : ''}`;
}

export function matchSession(session: Session, texts: readonly string[], query: string): SessionMatch | undefined {
  const words = queryWords(query);
  if (words.length === 0) return undefined;
  const title = fold(session.title);
  const folded = texts.map((t) => fold(t.replace(/\s+/g, ' ')));
  const found = (w: string) => title.includes(w) || folded.some((t) => t.includes(w));
  if (!words.every(found)) return undefined;
  if (words.every((w) => title.includes(w))) return { sessionId: session.id, in: 'title', snippet: '' };
  // The message that holds most of the words, around the first of them it holds.
  let best = -1;
  let bestCount = 0;
  folded.forEach((t, i) => {
    const n = words.filter((w) => t.includes(w)).length;
    if (n > bestCount) [best, bestCount] = [i, n];
  });
  const text = texts[best].replace(/\s+/g, ' ');
  const word = words.find((w) => folded[best].includes(w))!;
  return { sessionId: session.id, in: 'text', snippet: snippetAround(text, folded[best].indexOf(word), word.length) };
}

/**
 * Chats matching a query, newest first, each with where it matched. Each session's texts are read
 * once and kept until its activity time moves (or it is dropped on a change).
 */
export class ChatSearch {
  private cache = new Map<string, { at: number; texts: string[] }>();

  constructor(private readonly readTexts: (sessionId: string) => Promise<string[]>) {}

  /** A session changed (written, renamed, deleted): read it again next time. */
  drop(sessionId: string): void {
    this.cache.delete(sessionId);
  }

  async find(sessions: readonly Session[], query: string): Promise<SessionMatch[]> {
    const out: SessionMatch[] = [];
    for (const s of sessions) {
      let cached = this.cache.get(s.id);
      if (!cached || cached.at !== s.lastActivityAt) {
        cached = { at: s.lastActivityAt, texts: await this.readTexts(s.id) };
        this.cache.set(s.id, cached);
      }
      const m = matchSession(s, cached.texts, query);
      if (m) out.push(m);
    }
    return out;
  }
}
