// Incremental BM25 (Okapi, Robertson/Sparck Jones idf with +1 so it stays positive).
//
// Written here rather than on minisearch because minisearch (7.2) multiplies every score by the
// number of matched query terms (not BM25, and not switchable), builds a result object with match
// maps for every matching document (heavy at 100k documents), and its cheap `discard` leaves stale
// postings that skew idf until a vacuum. This index keeps exact statistics on every add/remove.
//
// Search is pruned but exact (term-at-a-time with score upper bounds, in the spirit of MaxScore):
// query terms are scored rarest-bound first; once the k-th best partial score exceeds the most
// that the remaining (common) terms could still add, no document they alone reach can enter the
// top k, so their long posting lists are not scanned: the few surviving candidates get the rest of
// their score from their own (short) term lists. Final scores are summed in query-term order, the
// same order as the exhaustive search, so both return identical hits (tests/unit/retrieval).
//
// Terms are interned to small integers: per-document term lists and postings hold numbers, not a
// string per token (the difference is tens of MB at 100k documents).
import type { Id } from '../types';
import { tokenize, type TokenizeOptions } from './tokenize';
import { TopSlots } from './top-k';

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

interface QueryTerm {
  term: number;
  qf: number;
  idf: number;
  /** Upper bound of the term's contribution to any document's score. */
  ub: number;
  /** The term's postings, [slot, tf, ...], valid up to `len`. */
  postings: Int32Array;
  len: number;
}

const EMPTY = new Int32Array(0);

export class LexicalIndex {
  readonly params: Bm25Params;
  private readonly tok: TokenizeOptions;
  private readonly termIdOf = new Map<string, number>();
  /** Term number -> the term (feedback terms are returned as text). */
  private readonly termText: string[] = [];
  /**
   * Per term: [slot, tf, slot, tf, ...] in a typed array (4 bytes a number; a plain array costs 8
   * in Node without pointer compression), used up to postingLen[term].
   */
  private postings: Int32Array[] = [];
  private postingLen: number[] = [];
  /** Per term: the largest tf and the shortest document length ever posted (bounds stay valid on removal). */
  private maxTf: number[] = [];
  private minLen: number[] = [];
  /** Per term: the last document (stamp) that counted it, and where in the pool. */
  private markStamp: number[] = [];
  private markAt: number[] = [];
  private stampNow = 0;
  private readonly slotOf = new Map<Id, number>();
  private ids: (Id | undefined)[] = [];
  /**
   * Per slot: [term, tf, term, tf, ...] at pool[docStart[slot] .. + docCount[slot]], for removal
   * without the text and for scoring candidates. One pool for all documents instead of an array
   * each; removal leaves a hole, compacted once holes are half the pool.
   */
  private pool = new Int32Array(1024);
  private poolUsed = 0;
  private poolHoles = 0;
  private docStart = new Int32Array(16);
  private docCount = new Int32Array(16);
  private lengths = new Float64Array(16);
  private free: number[] = [];
  private totalLength = 0;
  private acc = new Float64Array(16);
  /** Postings scanned by the last searchTokens call (diagnostics: how much the pruning saved). */
  lastScanned = 0;

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
    const slot = this.free.length > 0 ? this.free.pop()! : this.ids.length;
    if (slot >= this.lengths.length) this.grow(slot + 1);
    // Term frequencies written straight into the pool: `mark` says where in this document's run a
    // term already is (no Map per document; start-up indexes every memory and segment at once).
    this.reservePool(2 * tokens.length);
    const start = this.poolUsed;
    let end = start;
    const stamp = ++this.stampNow;
    for (const t of tokens) {
      let term = this.termIdOf.get(t);
      if (term === undefined) {
        term = this.postings.length;
        this.termIdOf.set(t, term);
        this.termText.push(t);
        this.postings.push(EMPTY);
        this.postingLen.push(0);
        this.maxTf.push(0);
        this.minLen.push(Infinity);
        this.markStamp.push(0);
        this.markAt.push(0);
      }
      if (this.markStamp[term] === stamp) this.pool[this.markAt[term]! + 1]!++;
      else {
        this.markStamp[term] = stamp;
        this.markAt[term] = end;
        this.pool[end] = term;
        this.pool[end + 1] = 1;
        end += 2;
      }
    }
    this.poolUsed = end;
    this.ids[slot] = id;
    this.lengths[slot] = tokens.length;
    this.totalLength += tokens.length;
    this.slotOf.set(id, slot);
    this.docStart[slot] = start;
    this.docCount[slot] = end - start;
    for (let i = start; i < end; i += 2) {
      const term = this.pool[i]!;
      const f = this.pool[i + 1]!;
      this.post(term, slot, f);
      if (f > this.maxTf[term]!) this.maxTf[term] = f;
      if (tokens.length < this.minLen[term]!) this.minLen[term] = tokens.length;
    }
  }

  private post(term: number, slot: number, f: number): void {
    let p = this.postings[term]!;
    const len = this.postingLen[term]!;
    if (len + 2 > p.length) {
      // Grow by half: at 100k documents doubling would leave a quarter of the postings unused on average.
      const bigger = new Int32Array(Math.max(4, Math.ceil((p.length * 1.5) / 2) * 2));
      bigger.set(p.subarray(0, len));
      this.postings[term] = p = bigger;
    }
    p[len] = slot;
    p[len + 1] = f;
    this.postingLen[term] = len + 2;
  }

  private reservePool(n: number): void {
    if (this.poolUsed + n <= this.pool.length) return;
    if (this.poolHoles * 2 > this.poolUsed) this.compactPool();
    if (this.poolUsed + n <= this.pool.length) return;
    const bigger = new Int32Array(Math.max(this.poolUsed + n, Math.ceil(this.pool.length * 1.5)));
    bigger.set(this.pool.subarray(0, this.poolUsed));
    this.pool = bigger;
  }

  private compactPool(): void {
    const live = this.poolUsed - this.poolHoles;
    const next = new Int32Array(Math.max(1024, Math.ceil(live * 1.5)));
    let at = 0;
    for (let slot = 0; slot < this.ids.length; slot++) {
      if (this.ids[slot] === undefined) continue;
      const start = this.docStart[slot]!;
      const count = this.docCount[slot]!;
      next.set(this.pool.subarray(start, start + count), at);
      this.docStart[slot] = at;
      at += count;
    }
    this.pool = next;
    this.poolUsed = at;
    this.poolHoles = 0;
  }

  remove(id: Id): boolean {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return false;
    const start = this.docStart[slot]!;
    const end = start + this.docCount[slot]!;
    for (let i = start; i < end; i += 2) {
      const term = this.pool[i]!;
      const p = this.postings[term]!;
      let len = this.postingLen[term]!;
      // Swap-delete the (slot, tf) pair: order inside a posting list does not matter.
      for (let j = 0; j < len; j += 2) {
        if (p[j] === slot) {
          p[j] = p[len - 2]!;
          p[j + 1] = p[len - 1]!;
          len -= 2;
          break;
        }
      }
      this.postingLen[term] = len;
      if (len === 0) {
        this.postings[term] = EMPTY;
        this.maxTf[term] = 0;
        this.minLen[term] = Infinity;
      }
    }
    this.poolHoles += this.docCount[slot]!;
    this.docCount[slot] = 0;
    this.totalLength -= this.lengths[slot]!;
    this.lengths[slot] = 0;
    this.ids[slot] = undefined;
    this.slotOf.delete(id);
    this.free.push(slot);
    return true;
  }

  /** Number of documents containing the (already processed) term. */
  docFreq(term: string): number {
    const t = this.termIdOf.get(term);
    return t === undefined ? 0 : this.postingLen[t]! / 2;
  }

  /**
   * Pseudo-relevance feedback (in the spirit of RM3): the n terms with the most weight in these
   * documents, weight = sum over documents of (tf / length) x idf, leaving out `exclude` and terms
   * no other document has (they cannot lead anywhere new). Ties by term, for determinism.
   */
  feedbackTerms(ids: readonly Id[], exclude: ReadonlySet<string>, n: number): string[] {
    const size = this.slotOf.size;
    const weight = new Map<number, number>();
    for (const id of ids) {
      const slot = this.slotOf.get(id);
      if (slot === undefined || this.lengths[slot]! === 0) continue;
      const start = this.docStart[slot]!;
      const end = start + this.docCount[slot]!;
      for (let i = start; i < end; i += 2) {
        const term = this.pool[i]!;
        const df = this.postingLen[term]! / 2;
        if (df < 2 || exclude.has(this.termText[term]!)) continue;
        const idf = Math.log(1 + (size - df + 0.5) / (df + 0.5));
        weight.set(term, (weight.get(term) ?? 0) + (this.pool[i + 1]! / this.lengths[slot]!) * idf);
      }
    }
    return [...weight.entries()]
      .sort((a, b) => b[1] - a[1] || (this.termText[a[0]]! < this.termText[b[0]]! ? -1 : 1))
      .slice(0, Math.max(0, n))
      .map(([term]) => this.termText[term]!);
  }

  /**
   * Top-k documents by BM25 for the query, best first; ties broken by id for determinism.
   * `accept` filters documents before selection (so k hits survive a filter).
   */
  search(query: string, k: number, accept?: (id: Id) => boolean): LexicalHit[] {
    return this.searchTokens(this.tokens(query), k, accept);
  }

  /** Query terms in query order (the order final scores are summed in), with their bounds. */
  private queryTerms(queryTokens: readonly string[]): QueryTerm[] {
    const n = this.slotOf.size;
    const { k1, b } = this.params;
    const avg = this.totalLength / n || 1;
    const qtf = new Map<number, number>();
    for (const t of queryTokens) {
      const term = this.termIdOf.get(t);
      if (term !== undefined && this.postingLen[term]! > 0) qtf.set(term, (qtf.get(term) ?? 0) + 1);
    }
    const out: QueryTerm[] = [];
    for (const [term, qf] of qtf) {
      const postings = this.postings[term]!;
      const len = this.postingLen[term]!;
      const df = len / 2;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      const f = this.maxTf[term]!;
      // The term weight grows with tf and shrinks with length: bound it with the largest tf and the shortest document.
      const ub = qf * idf * ((f * (k1 + 1)) / (f + k1 * (1 - b + (b * this.minLen[term]!) / avg)));
      out.push({ term, qf, idf, ub, postings, len });
    }
    return out;
  }

  /** The exhaustive search (every posting scanned): the reference the pruned search must equal. */
  searchExhaustive(queryTokens: readonly string[], k: number, accept?: (id: Id) => boolean): LexicalHit[] {
    if (this.slotOf.size === 0 || k <= 0) return [];
    const acc = this.acc;
    const touched: number[] = [];
    for (const q of this.queryTerms(queryTokens)) this.scan(q, touched);
    const hits: LexicalHit[] = [];
    for (const slot of touched) {
      offer(hits, k, acc[slot]!, this.ids[slot]!, accept);
      acc[slot] = 0;
    }
    return hits;
  }

  searchTokens(queryTokens: readonly string[], k: number, accept?: (id: Id) => boolean): LexicalHit[] {
    if (this.slotOf.size === 0 || k <= 0) return [];
    const terms = this.queryTerms(queryTokens);
    if (terms.length === 0) return [];
    const order = [...terms].sort((a, b) => b.ub - a.ub);
    // rest[i]: the most that terms order[i..] can add to any score (with a little slack for rounding).
    const rest = new Float64Array(order.length + 1);
    for (let i = order.length - 1; i >= 0; i--) rest[i] = rest[i + 1]! + order[i]!.ub * (1 + 1e-9);
    const acc = this.acc;
    const touched: number[] = [];
    this.lastScanned = 0;
    let stop = order.length;
    let theta = -Infinity;
    for (let i = 0; i < order.length; i++) {
      // Checking costs a pass over the candidates: only worth it before a longer posting list.
      if (i > 0 && touched.length >= k && order[i]!.len / 2 > touched.length) {
        theta = this.kthBest(touched, k, accept);
        if (theta > rest[i]!) {
          stop = i;
          break;
        }
      }
      this.scan(order[i]!, touched);
      this.lastScanned += order[i]!.len / 2;
    }
    if (touched.length >= k) theta = this.kthBest(touched, k, accept);
    // Candidates: those whose partial score plus what the unscanned terms could add reaches the k-th
    // best partial score (partial scores only grow, so the true k-th best is at least that).
    const cut = theta - rest[stop]! - Math.abs(theta) * 1e-9;
    const candidates: number[] = [];
    for (const slot of touched) {
      if (acc[slot]! >= cut) candidates.push(slot);
      acc[slot] = 0;
    }
    const hits: LexicalHit[] = [];
    for (const slot of candidates) offer(hits, k, this.exactScore(slot, terms), this.ids[slot]!, accept);
    return hits;
  }

  /** Adds a term's contributions to the accumulators. */
  private scan(q: QueryTerm, touched: number[]): void {
    const { k1, b } = this.params;
    const avg = this.totalLength / this.slotOf.size || 1;
    const acc = this.acc;
    const p = q.postings;
    const w = q.qf * q.idf;
    for (let i = 0; i < q.len; i += 2) {
      const slot = p[i]!;
      const f = p[i + 1]!;
      const norm = k1 * (1 - b + (b * this.lengths[slot]!) / avg);
      if (acc[slot] === 0) touched.push(slot);
      acc[slot] += w * ((f * (k1 + 1)) / (f + norm));
    }
  }

  /** A document's full score, summed in query-term order exactly as scan() does. */
  private exactScore(slot: number, terms: readonly QueryTerm[]): number {
    const { k1, b } = this.params;
    const avg = this.totalLength / this.slotOf.size || 1;
    const pool = this.pool;
    const start = this.docStart[slot]!;
    const end = start + this.docCount[slot]!;
    let score = 0;
    for (const q of terms) {
      for (let i = start; i < end; i += 2) {
        if (pool[i] !== q.term) continue;
        const f = pool[i + 1]!;
        const norm = k1 * (1 - b + (b * this.lengths[slot]!) / avg);
        score += q.qf * q.idf * ((f * (k1 + 1)) / (f + norm));
        break;
      }
    }
    return score;
  }

  /** The k-th largest accumulated score among accepted touched documents (-Infinity if fewer). */
  private kthBest(touched: readonly number[], k: number, accept?: (id: Id) => boolean): number {
    const top = new TopSlots(k, (slot) => this.acc[slot]!);
    for (const slot of touched) {
      // The score test first: the filter runs only for documents that would enter.
      if (!top.admits(this.acc[slot]!)) continue;
      if (accept && !accept(this.ids[slot]!)) continue;
      top.offer(slot);
    }
    return top.floor;
  }

  private grow(min: number): void {
    let cap = this.lengths.length;
    while (cap < min) cap *= 2;
    const lengths = new Float64Array(cap);
    lengths.set(this.lengths);
    this.lengths = lengths;
    const docStart = new Int32Array(cap);
    docStart.set(this.docStart);
    this.docStart = docStart;
    const docCount = new Int32Array(cap);
    docCount.set(this.docCount);
    this.docCount = docCount;
    this.acc = new Float64Array(cap);
  }
}

/** Keeps `hits` as the best k, best first: cheap score test first, the filter only for entrants. */
function offer(hits: LexicalHit[], k: number, score: number, id: Id, accept?: (id: Id) => boolean): void {
  if (hits.length === k && !better(score, id, hits[k - 1]!)) return;
  if (accept && !accept(id)) return;
  let i = hits.length === k ? k - 1 : hits.length;
  if (hits.length < k) hits.push({ id, score });
  while (i > 0 && better(score, id, hits[i - 1]!)) {
    hits[i] = hits[i - 1]!;
    i--;
  }
  hits[i] = { id, score };
}

function better(score: number, id: Id, than: LexicalHit): boolean {
  return score > than.score || (score === than.score && id < than.id);
}
