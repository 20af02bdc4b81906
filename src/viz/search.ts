// Search over memories for the explorer's views. A query word matches a whole word of a memory's
// text (or subject, or context), or the same word with a plural or possessive ending ("cat" finds
// "cat", "cats", "cat's"), never letters inside another word ("cat" is not in "relocation").
// Every word of the query must match. Word matches come first, ranked by how exactly they matched,
// then by recency; matches by meaning (from the memory search model, when it is loaded) follow.

import type { Id, Memory } from '../memory/types';

/** A word as compared: lower case, without a possessive or plural "s" on words past three letters. */
function stem(word: string): string {
  const w = word.toLowerCase().replace(/['’]s$/, '');
  return w.length > 3 && /[^s]s$/.test(w) ? w.slice(0, -1) : w;
}

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;

/** The words of a query, lower case. */
export function queryWords(query: string): string[] {
  return (query.toLowerCase().match(WORD) ?? []).filter(Boolean);
}

/**
 * How well a text holds every query word: 0 not at all, else the number of words found exactly
 * plus half for each found only as another form of the word.
 */
export function wordScore(text: string, words: readonly string[]): number {
  if (words.length === 0) return 0;
  const tokens = text.toLowerCase().match(WORD) ?? [];
  const exact = new Set(tokens);
  const stems = new Set(tokens.map(stem));
  let score = 0;
  for (const w of words) {
    if (exact.has(w)) score += 1;
    else if (stems.has(stem(w))) score += 0.5;
    else return 0;
  }
  return score;
}

const hayOf = (m: Memory): string => `${m.text} ${m.subject ?? ''} ${m.context ?? ''}`;

/** Memory ids whose words hold every word of the query. */
export function searchMemories(memories: readonly Memory[], query: string): Set<Id> {
  return new Set(rankWordMatches(memories, query));
}

/** Word matches, best first: more exact words, then the most recent. */
export function rankWordMatches(memories: readonly Memory[], query: string): Id[] {
  const words = queryWords(query);
  if (words.length === 0) return [];
  const scored: { id: Id; score: number; time: number }[] = [];
  for (const m of memories) {
    const score = wordScore(hayOf(m), words);
    if (score > 0) scored.push({ id: m.id, score, time: m.time });
  }
  return scored.sort((a, b) => b.score - a.score || b.time - a.time).map((s) => s.id);
}

export interface MeaningHit {
  id: Id;
  /** Cosine similarity of the query and the memory. */
  score: number;
}

export interface SearchRanking {
  /** Whole-word matches, best first. */
  word: Id[];
  /** Found by meaning and not by words, best first (empty without the memory search model). */
  meaning: Id[];
  /** Word matches, then meaning matches. */
  order: Id[];
  all: Set<Id>;
}

/** Word matches first, then meaning matches (of the memories given) that are not word matches. */
export function rankSearch(memories: readonly Memory[], query: string, meaning: readonly MeaningHit[] | null = null): SearchRanking {
  const word = rankWordMatches(memories, query);
  const isWord = new Set(word);
  const known = new Set(memories.map((m) => m.id));
  const byMeaning = (meaning ?? [])
    .filter((h) => known.has(h.id) && !isWord.has(h.id))
    .sort((a, b) => b.score - a.score)
    .map((h) => h.id);
  const order = [...word, ...byMeaning];
  return { word, meaning: byMeaning, order, all: new Set(order) };
}
