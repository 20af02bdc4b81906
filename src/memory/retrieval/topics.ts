// LD-Agent's topic overlap (seed 001, eq. 1): the nouns of a memory and of the query, as sets,
// score s_top = 1/2 (|Vq ∩ Vk| / |Vq| + |Vq ∩ Vk| / |Vk|). It rewards a unit whose few topics the
// query names, where BM25 rewards rare words wherever they stand. The nouns come from a
// part-of-speech tagger behind the NounExtractor port (src/models/nouns.ts); this module only
// keeps the sets and ranks by overlap, so it runs in Node with any extractor.
import type { Id } from '../types';

/** The topic nouns of a text: lower-cased lemmas ("kids" -> "kid"), duplicates allowed. */
export type NounExtractor = (text: string) => readonly string[];

/** LD-Agent's eq. 1 over two noun sets; 0 when either is empty. */
export function topicOverlap(query: ReadonlySet<string>, unit: ReadonlySet<string>): number {
  if (query.size === 0 || unit.size === 0) return 0;
  let shared = 0;
  for (const noun of query) if (unit.has(noun)) shared++;
  return (shared / query.size + shared / unit.size) / 2;
}

const MIN_UNITS_FOR_COMMON = 8;

export interface TopicHit {
  id: Id;
  score: number;
}

/** Noun sets of the indexed units, with an inverted list so a query visits only units sharing a noun. */
export class TopicIndex {
  private readonly nounsOf = new Map<Id, ReadonlySet<string>>();
  private readonly unitsOf = new Map<string, Set<Id>>();

  get size(): number {
    return this.nounsOf.size;
  }

  add(id: Id, nouns: Iterable<string>): void {
    this.remove(id);
    const set = new Set(nouns);
    if (set.size === 0) return;
    this.nounsOf.set(id, set);
    for (const noun of set) {
      let ids = this.unitsOf.get(noun);
      if (!ids) this.unitsOf.set(noun, (ids = new Set()));
      ids.add(id);
    }
  }

  remove(id: Id): void {
    const set = this.nounsOf.get(id);
    if (!set) return;
    this.nounsOf.delete(id);
    for (const noun of set) {
      const ids = this.unitsOf.get(noun);
      ids?.delete(id);
      if (ids?.size === 0) this.unitsOf.delete(noun);
    }
  }

  nouns(id: Id): ReadonlySet<string> | undefined {
    return this.nounsOf.get(id);
  }

  /**
   * A noun that more than half of the units carry ("user" in "The user ...", a speaker's name in a
   * two-person conversation) names no topic; it is left out of both sets. Small indexes keep all.
   */
  private isCommon(noun: string): boolean {
    return this.nounsOf.size >= MIN_UNITS_FOR_COMMON && (this.unitsOf.get(noun)?.size ?? 0) > this.nounsOf.size / 2;
  }

  /** The n units with the highest overlap with the query's nouns, best first (ties by id). */
  search(queryNouns: Iterable<string>, n: number, accept?: (id: Id) => boolean): TopicHit[] {
    const query = new Set([...queryNouns].filter((noun) => !this.isCommon(noun)));
    const candidates = new Set<Id>();
    for (const noun of query) for (const id of this.unitsOf.get(noun) ?? []) candidates.add(id);
    const hits: TopicHit[] = [];
    for (const id of candidates) {
      if (accept && !accept(id)) continue;
      const unit = new Set([...this.nounsOf.get(id)!].filter((noun) => !this.isCommon(noun)));
      hits.push({ id, score: topicOverlap(query, unit) });
    }
    return hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, n);
  }
}
