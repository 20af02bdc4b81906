// Incremental BM25 (Okapi, Robertson/Sparck Jones idf with +1 so it stays positive).
//
// Written here rather than on minisearch because minisearch (7.2) multiplies every score by the
// number of matched query terms (not BM25, and not switchable), builds a result object with match
// maps for every matching document (heavy at 100k documents), and its cheap `discard` leaves stale
// postings that skew idf until a vacuum. This index keeps exact statistics on every add/remove.
import type { Id } from '../types';
import { tokenize, type TokenizeOptions } from './text';

export interface Bm25Params {
  /** Term-frequency saturation. */
  k1: number;
  /** Length normalisation (0 = none, 1 = full). */
  b: number;
}

export interface LexicalOptions extends TokenizeOptions {
  bm25?: Partial<Bm25Params>;
}

export interface LexicalHit {
  id: Id;
  score: number;
}

/** Postings of one term: [slot, tf, slot, tf, ...] as a small-integer array (compact in V8). */
type Postings = number[];

export class LexicalIndex {
  readonly params: Bm25Params;
  private readonly tok: TokenizeOptions;
  private readonly postings = new Map<string, Postings>();
  private readonly slotOf = new Map<Id, number>();
  private ids: (Id | undefined)[] = [];
  /** Distinct terms per slot, for removal without the original text. */
  private terms: (string[] | undefined)[] = [];
  private lengths = new Float64Array(16);
  private free: number[] = [];
  private totalLength = 0;
  private acc = new Float64Array(16);

  constructor(options: LexicalOptions = {}) {
    this.params = { k1: options.bm25?.k1 ?? 1.2, b: options.bm25?.b ?? 0.75 };
    this.tok = { stem: options.stem, stopwords: options.stopwords };
  }

  get size(): number {
    return this.slotOf.size;
  }

  has(id: Id): boolean {
    return this.slotOf.has(id);
  }

  tokens(text: string): string[] {
    return tokenize(text, this.tok);
  }

  /** Adds a document, replacing any previous text under the same id. */
  add(id: Id, text: string): void {
    if (this.slotOf.has(id)) this.remove(id);
    const tokens = this.tokens(text);
    const tf = new Map<string, number>();
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    const slot = this.free.length > 0 ? this.free.pop()! : this.ids.length;
    if (slot >= this.lengths.length) this.grow(slot + 1);
    this.ids[slot] = id;
    this.terms[slot] = [...tf.keys()];
    this.lengths[slot] = tokens.length;
    this.totalLength += tokens.length;
    this.slotOf.set(id, slot);
    for (const [term, f] of tf) {
      let p = this.postings.get(term);
      if (!p) this.postings.set(term, (p = []));
      p.push(slot, f);
    }
  }

  remove(id: Id): boolean {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return false;
    for (const term of this.terms[slot] ?? []) {
      const p = this.postings.get(term);
      if (!p) continue;
      // Swap-delete the (slot, tf) pair: order inside a posting list does not matter.
      for (let i = 0; i < p.length; i += 2) {
        if (p[i] === slot) {
          p[i] = p[p.length - 2]!;
          p[i + 1] = p[p.length - 1]!;
          p.length -= 2;
          break;
        }
      }
      if (p.length === 0) this.postings.delete(term);
    }
    this.totalLength -= this.lengths[slot]!;
    this.lengths[slot] = 0;
    this.ids[slot] = undefined;
    this.terms[slot] = undefined;
    this.slotOf.delete(id);
    this.free.push(slot);
    return true;
  }

  /** Number of documents containing the (already processed) term. */
  docFreq(term: string): number {
    return (this.postings.get(term)?.length ?? 0) / 2;
  }

  /**
   * Top-k documents by BM25 for the query, best first; ties broken by id for determinism.
   * `accept` filters documents before selection (so k hits survive a filter).
   */
  search(query: string, k: number, accept?: (id: Id) => boolean): LexicalHit[] {
    return this.searchTokens(this.tokens(query), k, accept);
  }

  searchTokens(queryTokens: readonly string[], k: number, accept?: (id: Id) => boolean): LexicalHit[] {
    const n = this.slotOf.size;
    if (n === 0 || k <= 0) return [];
    const { k1, b } = this.params;
    const avg = this.totalLength / n || 1;
    const qtf = new Map<string, number>();
    for (const t of queryTokens) qtf.set(t, (qtf.get(t) ?? 0) + 1);
    const acc = this.acc;
    const touched: number[] = [];
    for (const [term, qf] of qtf) {
      const p = this.postings.get(term);
      if (!p) continue;
      const df = p.length / 2;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (let i = 0; i < p.length; i += 2) {
        const slot = p[i]!;
        const f = p[i + 1]!;
        const norm = k1 * (1 - b + (b * this.lengths[slot]!) / avg);
        if (acc[slot] === 0) touched.push(slot);
        acc[slot] += qf * idf * ((f * (k1 + 1)) / (f + norm));
      }
    }
    const hits: LexicalHit[] = [];
    // Keep the best k in a sorted array: k is small, touched may be large.
    for (const slot of touched) {
      const score = acc[slot]!;
      acc[slot] = 0;
      const id = this.ids[slot]!;
      // Cheap score test first: the filter runs only for documents that would enter the top k.
      if (hits.length === k && !better(score, id, hits[k - 1]!)) continue;
      if (accept && !accept(id)) continue;
      let i = hits.length === k ? k - 1 : hits.length;
      if (hits.length < k) hits.push({ id, score });
      while (i > 0 && better(score, id, hits[i - 1]!)) {
        hits[i] = hits[i - 1]!;
        i--;
      }
      hits[i] = { id, score };
    }
    return hits;
  }

  private grow(min: number): void {
    let cap = this.lengths.length;
    while (cap < min) cap *= 2;
    const lengths = new Float64Array(cap);
    lengths.set(this.lengths);
    this.lengths = lengths;
    this.acc = new Float64Array(cap);
  }
}

function better(score: number, id: Id, than: LexicalHit): boolean {
  return score > than.score || (score === than.score && id < than.id);
}
