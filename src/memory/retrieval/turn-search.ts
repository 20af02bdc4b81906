// The reply turn's search (docs/METHOD.md, section 5): one fused ranking over memories and
// segments, shaped by the retrieval signals, each behind its own switch so the benchmark can
// measure it on and off.
import { allowedSubjects } from './speakers';
import { DEFAULT_FEEDBACK, withFeedback, type FeedbackOptions } from './feedback';
import { queryType } from './query-type';
import type { HybridIndex, SearchFilter, SearchHit, UnitKind } from './types';

export interface RetrievalSignals {
  /** A query naming some of the people memories are about leaves out memories of the others. */
  speakerAware: boolean;
  /** Pseudo-relevance feedback: a second query from the top units' terms, fused by rank. */
  feedback: boolean;
  /** Query routing: a hypothetical question ranks memories before segments (query-type.ts). */
  routing: boolean;
  /** LD-Agent's topic overlap fused as a third ranking, where the index keeps topic nouns (topics.ts). */
  topics?: boolean;
}

export interface TurnSearchInput {
  index: HybridIndex;
  query: string;
  queryVector?: Float32Array;
  k: number;
  kinds: UnitKind[];
  signals: RetrievalSignals;
  feedbackOptions?: FeedbackOptions;
}

export function searchForTurn(input: TurnSearchInput): SearchHit[] {
  const { index, query, queryVector, k, signals } = input;
  const filter: SearchFilter = { kinds: input.kinds };
  if (signals.topics && index.hasTopics) filter.topics = true;
  if (signals.speakerAware && index.subjects) {
    const subjects = allowedSubjects(query, index.subjects());
    if (subjects) filter.subjects = subjects;
  }
  let ranked = index.search(query, queryVector, k, filter);
  if (signals.feedback) ranked = withFeedback(index, query, queryVector, ranked, k, filter, input.feedbackOptions ?? DEFAULT_FEEDBACK);
  if (signals.routing && queryType(query) === 'hypothetical') ranked = memoriesFirst(ranked);
  return ranked;
}

/** Memories in their order, then the other units in theirs (a stable partition). */
export function memoriesFirst(hits: readonly SearchHit[]): SearchHit[] {
  return [...hits.filter((h) => h.unit.kind === 'memory'), ...hits.filter((h) => h.unit.kind !== 'memory')];
}
