// The contract between the retrieval indices and the rest of the memory core.
import type { Id, Millis, RetrievalScore } from '../types';

export type UnitKind = 'memory' | 'segment' | 'turn';

/** Anything retrievable: a memory, a raw segment of a past session, or (baseline) a single turn. */
export interface IndexedUnit {
  id: Id;
  kind: UnitKind;
  /** What goes into the prompt. */
  text: string;
  /** What the lexical index sees (a denoised copy for segments); defaults to text. */
  indexText?: string;
  time: Millis;
  sessionId: Id;
  sourceTurnIds: Id[];
  /** Who the unit is about (a memory's subject); a query naming someone else can leave it out. */
  subject?: string;
}

export interface SearchFilter {
  kinds?: UnitKind[];
  exclude?: ReadonlySet<Id>;
  /**
   * Subjects (lower case) a unit may be about: a unit with another subject is left out, one with
   * no subject (a segment) stays. Absent: every subject.
   */
  subjects?: ReadonlySet<string>;
  /** Index terms (as `feedbackTerms` returns them) added to the lexical side's query: expansion. */
  expand?: readonly string[];
  /** Fuse the topic-overlap ranking too, where the index keeps topic nouns (LD-Agent). */
  topics?: boolean;
}

export interface SearchHit {
  unit: IndexedUnit;
  score: RetrievalScore;
}

/**
 * Hybrid lexical (BM25) + dense index, updated incrementally on insert/remove (never rebuilt per
 * query). Works with no vectors at all (lexical only) before an embedding model is downloaded.
 */
export interface HybridIndex {
  readonly size: number;
  has(id: Id): boolean;
  get(id: Id): IndexedUnit | undefined;
  upsert(unit: IndexedUnit, vector?: Float32Array): void;
  /** Attach or replace a unit's vector (after a (re-)embedding). */
  setVector(id: Id, vector: Float32Array): void;
  remove(id: Id): void;
  /** Top-k by fused lexical + dense score, best first. */
  search(query: string, queryVector: Float32Array | undefined, k: number, filter?: SearchFilter): SearchHit[];
  /** Whether the index keeps topic nouns (built with a noun extractor). */
  readonly hasTopics?: boolean;
  /** Subjects of the indexed units, as written, each once (speaker-aware retrieval). */
  subjects?(): readonly string[];
  /**
   * The n index terms that best characterise these units (pseudo-relevance feedback), leaving out
   * the query's own terms.
   */
  feedbackTerms?(ids: readonly Id[], query: string, n: number): string[];
}
