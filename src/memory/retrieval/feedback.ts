// Pseudo-relevance feedback (Rocchio; RM3 in the BM25 literature). Many questions share no word with
// the turns that answer them ("What activities does Melanie partake in?" vs "I signed up for a
// pottery class"), but they share words with a few units that rank high, and those units share
// words with the rest of the answer: a second query made of the top units' most telling terms
// reaches them. It is fused with the first ranking by rank (RRF), not substituted for it, so a
// feedback query that drifts off topic can only add candidates, never bury the first ones.
import { reciprocalRankFusion } from './hybrid';
import type { HybridIndex, SearchFilter, SearchHit } from './types';

export interface FeedbackOptions {
  /** Top units of the first ranking that the feedback terms are drawn from. */
  docs: number;
  /** Terms added to the query. */
  terms: number;
}

/** Small enough for memories of one or two sentences (RM3 uses 10 and 10 over whole documents). */
export const DEFAULT_FEEDBACK: Readonly<FeedbackOptions> = Object.freeze({ docs: 3, terms: 10 });

/** Lists fused by reciprocal rank, each hit kept with the score it had where it ranked best. */
export function fuseRankings(lists: readonly (readonly SearchHit[])[], k: number): SearchHit[] {
  const fused = reciprocalRankFusion(lists.map((l) => ({ ids: l.map((h) => h.unit.id) })));
  const hitOf = new Map<string, SearchHit>();
  for (const list of lists) for (const h of list) if (!hitOf.has(h.unit.id)) hitOf.set(h.unit.id, h);
  const firstRank = new Map<string, number>();
  lists.forEach((l) => l.forEach((h, i) => firstRank.set(h.unit.id, Math.min(firstRank.get(h.unit.id) ?? Infinity, i))));
  return [...fused.entries()]
    .sort((a, b) => b[1] - a[1] || firstRank.get(a[0])! - firstRank.get(b[0])! || (a[0] < b[0] ? -1 : 1))
    .slice(0, k)
    .map(([id]) => hitOf.get(id)!);
}

/**
 * The first ranking fused with a feedback query's ranking (the query plus the top units' terms).
 * Returns the first ranking unchanged when the index cannot give feedback terms or finds none.
 */
export function withFeedback(
  index: HybridIndex,
  query: string,
  queryVector: Float32Array | undefined,
  first: readonly SearchHit[],
  k: number,
  filter: SearchFilter,
  options: FeedbackOptions = DEFAULT_FEEDBACK,
): SearchHit[] {
  if (!index.feedbackTerms || first.length === 0 || options.docs <= 0 || options.terms <= 0) return [...first];
  const terms = index.feedbackTerms(
    first.slice(0, options.docs).map((h) => h.unit.id),
    query,
    options.terms,
  );
  if (terms.length === 0) return [...first];
  const second = index.search(query, queryVector, k, { ...filter, expand: terms });
  return fuseRankings([first, second], k);
}
