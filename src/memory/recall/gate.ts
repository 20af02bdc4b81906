// When the call before a reply is worth its wait, so replies start fast. Refinement and
// self-reflection cost a small model seconds of silence before every answer; they are asked only
// when what the first search found leaves the person's message open: fewer than half of the
// content words of their last message appear in the top-k units found (and the timelines through
// them). Otherwise the raw timelines go straight into the reply prompt. docs/METHOD.md 1.5 gives
// the measured effect (bench:fit).
import type { Id, Memory, Timeline } from '../types';
import type { SearchHit } from '../retrieval/types';
import { contentWords } from '../text';
import { tokenize } from '../retrieval/tokenize';

/** Share of the message's content words that must be found for retrieval to count as sure. */
export const SURE_COVERAGE = 0.5;

export function retrievalUnsure(
  ranked: readonly SearchHit[],
  timelines: readonly Timeline[],
  k: number,
  memoriesById: ReadonlyMap<Id, Memory>,
  lastMessage: string,
): boolean {
  const asked = new Set(contentWords(lastMessage));
  if (asked.size === 0) return false;
  if (ranked.length === 0) return true;
  const found = new Set<string>();
  const add = (text: string | undefined) => {
    for (const w of contentWords(text ?? '')) found.add(w);
  };
  for (const h of ranked.slice(0, k)) add(h.unit.text);
  for (const t of timelines) for (const id of t.memoryIds) add(memoriesById.get(id)?.text);
  let shared = 0;
  for (const w of asked) if (found.has(w)) shared++;
  return shared < SURE_COVERAGE * asked.size;
}

/**
 * Whether a unit found for a message in a continuing chat is worth its place: it shares two of the
 * message's content words, or its only one. Search always returns something; in a continuing chat
 * each message's memory stays in the prompt for the turns after it, so weak matches are not paid for.
 */
export function bearsOn(message: string, text: string): boolean {
  // Stemmed as the search stems them: "researching" bears on "research".
  const asked = new Set(tokenize(message));
  if (asked.size === 0) return false;
  let shared = 0;
  for (const w of new Set(tokenize(text))) if (asked.has(w)) shared++;
  return shared >= Math.min(2, asked.size);
}
