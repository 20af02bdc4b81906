// The hybrid index: incremental BM25 + dense vectors, fused by reciprocal rank fusion.
//
// RRF (Cormack et al. 2009) fuses by rank, not score, so BM25's unbounded scores and cosine
// similarities need no calibration against each other; a unit found by only one retriever still
// competes. fused = sum over retrievers of weight / (c + rank), rank starting at 1.
import type { Id, RetrievalScore } from '../types';
import { LexicalIndex, type LexicalOptions } from './lexical';
import type { HybridIndex, IndexedUnit, SearchFilter, SearchHit } from './types';
import { VectorStore, type VectorStoreOptions } from './vectors';
import { TopicIndex, type NounExtractor } from './topics';

export interface HybridOptions {
  /** RRF constant c: larger flattens the rank curve. 60 is the value from the RRF paper. */
  rrfK?: number;
  /** Per-retriever weights in the fusion. */
  weights?: { lexical?: number; dense?: number; topics?: number };
  /** How deep each retriever's list goes into the fusion (at least k). */
  depth?: number;
  /** Vector dimension; otherwise taken from the first vector. */
  dim?: number;
  lexical?: LexicalOptions;
  vectors?: VectorStoreOptions;
  /**
   * LD-Agent's topic nouns (topics.ts): with an extractor, every unit's nouns are kept, and a search
   * asking for topics fuses the topic-overlap ranking as a third list.
   */
  nouns?: NounExtractor;
}

export interface RankedList {
  /** Ids best first. */
  ids: readonly Id[];
  weight?: number;
}

/** Reciprocal rank fusion of ranked lists: id -> fused score. */
export function reciprocalRankFusion(lists: readonly RankedList[], c = 60): Map<Id, number> {
  const fused = new Map<Id, number>();
  for (const list of lists) {
    const w = list.weight ?? 1;
    list.ids.forEach((id, i) => fused.set(id, (fused.get(id) ?? 0) + w / (c + i + 1)));
  }
  return fused;
}

export function createHybridIndex(options: HybridOptions = {}): HybridIndex & {
  /** The BM25 side, for diagnostics and benchmarks. */
  readonly lexical: LexicalIndex;
  /** The dense side, once a vector has been set. */
  readonly vectors: VectorStore | undefined;
  subjects(): readonly string[];
  feedbackTerms(ids: readonly Id[], query: string, n: number): string[];
} {
  const c = options.rrfK ?? 60;
  const wLex = options.weights?.lexical ?? 1;
  const wDense = options.weights?.dense ?? 1;
  const wTopics = options.weights?.topics ?? 1;
  const nouns = options.nouns;
  const topics = nouns ? new TopicIndex() : undefined;
  const depth = options.depth ?? 50;
  const lexical = new LexicalIndex(options.lexical);
  const units = new Map<Id, IndexedUnit>();
  // Subjects of the units, counted, so a query can be matched against the names the index knows.
  const subjectCount = new Map<string, number>();
  const countSubject = (subject: string | undefined, by: number) => {
    if (subject === undefined || subject === '') return;
    const n = (subjectCount.get(subject) ?? 0) + by;
    if (n > 0) subjectCount.set(subject, n);
    else subjectCount.delete(subject);
  };
  // A subject's name in a question says whom it is about (speaker-aware retrieval's part), not what:
  // as a topic it would match every memory of that person.
  const topicNounsOf = (query: string, extract: NounExtractor): string[] => {
    const names = new Set([...subjectCount.keys()].map((x) => x.toLowerCase()));
    return extract(query).filter((noun) => !names.has(noun));
  };
  let vectors: VectorStore | undefined = options.dim ? new VectorStore(options.dim, options.vectors) : undefined;

  function setVector(id: Id, vector: Float32Array): void {
    if (!units.has(id)) throw new Error(`setVector: no unit ${id}`);
    vectors ??= new VectorStore(vector.length, options.vectors);
    vectors.set(id, vector);
  }

  return {
    lexical,
    get vectors() {
      return vectors;
    },
    get size() {
      return units.size;
    },
    has: (id) => units.has(id),
    get: (id) => units.get(id),
    upsert(unit, vector) {
      countSubject(units.get(unit.id)?.subject, -1);
      countSubject(unit.subject, 1);
      units.set(unit.id, unit);
      lexical.add(unit.id, unit.indexText ?? unit.text);
      if (topics && nouns) topics.add(unit.id, nouns(unit.indexText ?? unit.text));
      if (vector) setVector(unit.id, vector);
    },
    setVector,
    remove(id) {
      countSubject(units.get(id)?.subject, -1);
      units.delete(id);
      lexical.remove(id);
      topics?.remove(id);
      vectors?.remove(id);
    },
    hasTopics: topics !== undefined,
    subjects: () => [...subjectCount.keys()],
    feedbackTerms: (ids, query, n) => lexical.feedbackTerms(ids, new Set(lexical.tokens(query)), n),
    search(query, queryVector, k, filter?: SearchFilter): SearchHit[] {
      if (k <= 0 || units.size === 0) return [];
      const kinds = filter?.kinds ? new Set(filter.kinds) : undefined;
      const exclude = filter?.exclude;
      const subjects = filter?.subjects;
      const accept =
        kinds || exclude || subjects
          ? (id: Id) => {
              if (exclude?.has(id)) return false;
              const u = units.get(id);
              if (!u || (kinds && !kinds.has(u.kind))) return false;
              return !subjects || u.subject === undefined || subjects.has(u.subject.toLowerCase());
            }
          : undefined;
      const n = Math.max(depth, k);
      const tokens = lexical.tokens(query);
      const lex = lexical.searchTokens(filter?.expand ? [...tokens, ...filter.expand] : tokens, n, accept);
      const dense =
        queryVector && vectors && vectors.size > 0 && queryVector.length === vectors.dim ? vectors.search(queryVector, n, { accept }) : [];
      const topical = filter?.topics && topics && nouns ? topics.search(topicNounsOf(query, nouns), n, accept) : [];
      const scores = new Map<Id, RetrievalScore>();
      const entry = (id: Id): RetrievalScore => {
        let s = scores.get(id);
        if (!s) scores.set(id, (s = { unitId: id, unitKind: units.get(id)!.kind, fused: 0 }));
        return s;
      };
      lex.forEach((h, i) => {
        const s = entry(h.id);
        s.lexical = h.score;
        s.lexicalRank = i + 1;
        s.fused += wLex / (c + i + 1);
      });
      dense.forEach((h, i) => {
        const s = entry(h.id);
        s.dense = h.score;
        s.denseRank = i + 1;
        s.fused += wDense / (c + i + 1);
      });
      topical.forEach((h, i) => {
        const s = entry(h.id);
        s.topic = h.score;
        s.topicRank = i + 1;
        s.fused += wTopics / (c + i + 1);
      });
      return [...scores.values()]
        .sort(
          (a, b) =>
            b.fused - a.fused ||
            (b.lexical ?? -Infinity) - (a.lexical ?? -Infinity) ||
            (b.dense ?? -Infinity) - (a.dense ?? -Infinity) ||
            (a.unitId < b.unitId ? -1 : a.unitId > b.unitId ? 1 : 0),
        )
        .slice(0, k)
        .map((score) => ({ unit: units.get(score.unitId)!, score }));
    },
  };
}
