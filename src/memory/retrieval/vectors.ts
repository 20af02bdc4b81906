// Dense vectors in typed arrays, removal by swap-delete. The full vectors live in fixed chunks of
// CHUNK vectors: growing never copies them, and no more than one chunk is ever allocated unused
// (one growable array at 100k x 384 carried ~30 MB of spare capacity, and a copy while growing).
//
// Three copies per vector, each for one job:
// - Float32, the exact vector: final scores are always exact dot products.
// - optionally, int8 with a per-vector scale: a scan whose error is bounded per vector, so the exact top-k
//   can be guaranteed while re-scoring only the few candidates the bound cannot rule out.
// - one sign bit per dimension: a Hamming scan about 15x cheaper than either of the above
//   (measured in V8: 100k x 384 takes ~85 ms as float or int8 multiply-adds, ~6 ms as popcounts).
//   It is approximate, so it is used only above `exactBelow` vectors, followed by exact re-scoring
//   of a generous candidate list.
import type { Id } from '../types';
import { TopSlots } from './top-k';

const CHUNK_BITS = 10;
const CHUNK = 1 << CHUNK_BITS;
const CHUNK_MASK = CHUNK - 1;

export interface VectorHit {
  id: Id;
  score: number;
}

export interface VectorStoreOptions {
  /** Below this many vectors search is exact (int8 scan + bounded Float32 re-scoring). */
  exactBelow?: number;
  /** Candidates re-scored exactly after the sign-bit scan: max(k * factor, minimum). */
  candidateFactor?: number;
  candidateMinimum?: number;
  /**
   * Keep an int8 copy for the exact path (default false). In V8 a scalar int8 multiply-add scan
   * is no faster than a Float32 one (both ~85 ms per 100k x 384 here), so by default the exact
   * path is a plain Float32 scan and the int8 copy (1 byte per dimension) is not paid for.
   */
  int8?: boolean;
  /** int8 path: candidates re-scored before the bound is applied (the bound keeps it exact anyway). */
  int8FirstPass?: (k: number) => number;
}

export interface VectorSearchOptions {
  /** Force the exact path whatever the size. */
  exact?: boolean;
  accept?: (id: Id) => boolean;
}

export class VectorStore {
  readonly dim: number;
  private readonly words: number;
  private readonly exactBelow: number;
  private readonly candidateFactor: number;
  private readonly candidateMinimum: number;
  private readonly int8FirstPass: (k: number) => number;
  private readonly useInt8: boolean;
  private count = 0;
  private capacity = 0;
  private f32: Float32Array[] = [];
  private i8: Int8Array[] = [];
  /** Per vector: int8 scale, norm of the quantisation residual, norm of the vector. */
  private scale = new Float32Array(0);
  private resid = new Float32Array(0);
  private norm = new Float32Array(0);
  private bits = new Int32Array(0);
  private ids: Id[] = [];
  private readonly slotOf = new Map<Id, number>();
  private scratch = new Float32Array(0);
  private hamming = new Uint16Array(0);

  constructor(dim: number, options: VectorStoreOptions = {}) {
    if (!Number.isInteger(dim) || dim <= 0) throw new Error(`bad vector dimension ${dim}`);
    this.dim = dim;
    this.words = Math.ceil(dim / 32);
    this.exactBelow = options.exactBelow ?? 2048;
    // 16 x k (at least 512) candidates: the fusion asks for ~50-100 dense hits per turn, and
    // 64 x k re-scored thousands of vectors for ranks that reciprocal rank fusion barely weighs.
    this.candidateFactor = options.candidateFactor ?? 16;
    this.candidateMinimum = options.candidateMinimum ?? 512;
    this.int8FirstPass = options.int8FirstPass ?? ((k) => Math.max(4 * k, 32));
    this.useInt8 = options.int8 ?? false;
  }

  get size(): number {
    return this.count;
  }

  has(id: Id): boolean {
    return this.slotOf.has(id);
  }

  /** A copy of the stored vector. */
  get(id: Id): Float32Array | undefined {
    const s = this.slotOf.get(id);
    if (s === undefined) return undefined;
    const o = (s & CHUNK_MASK) * this.dim;
    return this.f32[s >> CHUNK_BITS]!.slice(o, o + this.dim);
  }

  /** Adds or replaces. The vector should be unit length (scores are plain dot products). */
  set(id: Id, vector: Float32Array): void {
    if (vector.length !== this.dim) throw new Error(`vector has ${vector.length} dimensions, index has ${this.dim}`);
    let slot = this.slotOf.get(id);
    if (slot === undefined) {
      if (this.count === this.capacity) this.grow();
      slot = this.count++;
      this.ids[slot] = id;
      this.slotOf.set(id, slot);
    }
    this.write(slot, vector);
  }

  remove(id: Id): boolean {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return false;
    const last = this.count - 1;
    if (slot !== last) {
      // Move the last vector into the hole so the arrays stay dense.
      const d = this.dim;
      const to = (slot & CHUNK_MASK) * d;
      const from = (last & CHUNK_MASK) * d;
      this.f32[slot >> CHUNK_BITS]!.set(this.f32[last >> CHUNK_BITS]!.subarray(from, from + d), to);
      if (this.useInt8) this.i8[slot >> CHUNK_BITS]!.set(this.i8[last >> CHUNK_BITS]!.subarray(from, from + d), to);
      this.bits.copyWithin(slot * this.words, last * this.words, (last + 1) * this.words);
      this.scale[slot] = this.scale[last]!;
      this.resid[slot] = this.resid[last]!;
      this.norm[slot] = this.norm[last]!;
      const moved = this.ids[last]!;
      this.ids[slot] = moved;
      this.slotOf.set(moved, slot);
    }
    this.ids.length = last;
    this.slotOf.delete(id);
    this.count = last;
    // Free a chunk as soon as it is empty.
    while (this.f32.length > 0 && (this.f32.length - 1) * CHUNK >= this.count) {
      this.f32.pop();
      if (this.useInt8) this.i8.pop();
    }
    return true;
  }

  /** Exact dot products of every stored vector with q, best first (reference for tests). */
  bruteForce(q: Float32Array, k: number, accept?: (id: Id) => boolean): VectorHit[] {
    const top = new TopK(k);
    for (let s = 0; s < this.count; s++) {
      if (accept && !accept(this.ids[s]!)) continue;
      top.offer(this.ids[s]!, this.exactDot(s, q));
    }
    return top.sorted();
  }

  search(q: Float32Array, k: number, options: VectorSearchOptions = {}): VectorHit[] {
    if (q.length !== this.dim) throw new Error(`query has ${q.length} dimensions, index has ${this.dim}`);
    if (k <= 0 || this.count === 0) return [];
    if (options.exact || this.count < this.exactBelow) {
      return this.useInt8 ? this.searchInt8(q, k, options.accept) : this.bruteForce(q, k, options.accept);
    }
    return this.searchBits(q, k, options.accept);
  }

  /**
   * int8 scan, then exact re-scoring of every vector whose bounded int8 error could put it in
   * the top k. With x = s*q + r and y = t*p + u: x.y - s*t*(q.p) = x.u + r.(t*p), so the error is
   * at most |x| * |u| + |r| * |t*p|. Result: exactly the brute-force top k.
   */
  searchInt8(y: Float32Array, k: number, accept?: (id: Id) => boolean): VectorHit[] {
    if (!this.useInt8) throw new Error('VectorStore: created without the int8 copy');
    const d = this.dim;
    const { p, t, uNorm, tpNorm } = quantise(y);
    const approx = this.scratchFor(this.count);
    for (let s = 0; s < this.count; s++) {
      const i8 = this.i8[s >> CHUNK_BITS]!;
      const o = (s & CHUNK_MASK) * d;
      let a0 = 0,
        a1 = 0,
        a2 = 0,
        a3 = 0;
      let j = 0;
      for (; j + 3 < d; j += 4) {
        a0 += i8[o + j]! * p[j]!;
        a1 += i8[o + j + 1]! * p[j + 1]!;
        a2 += i8[o + j + 2]! * p[j + 2]!;
        a3 += i8[o + j + 3]! * p[j + 3]!;
      }
      for (; j < d; j++) a0 += i8[o + j]! * p[j]!;
      approx[s] = this.scale[s]! * t * (a0 + a1 + (a2 + a3));
    }
    // Pass 1: re-score the best candidates by approximate score.
    const order = topSlots(approx, this.count, Math.min(this.count, Math.max(k, this.int8FirstPass(k))));
    const top = new TopK(k);
    const done = new Uint8Array(this.count);
    for (const s of order) {
      done[s] = 1;
      if (accept && !accept(this.ids[s]!)) continue;
      top.offer(this.ids[s]!, this.exactDot(s, y));
    }
    // Pass 2: anything the bound cannot exclude.
    for (let s = 0; s < this.count; s++) {
      if (done[s]) continue;
      // Slack of 1e-5 covers float rounding in the bound itself.
      const bound = uNorm * this.norm[s]! + this.resid[s]! * tpNorm + 1e-5;
      if (top.full && approx[s]! + bound < top.threshold) continue;
      if (accept && !accept(this.ids[s]!)) continue;
      top.offer(this.ids[s]!, this.exactDot(s, y));
    }
    return top.sorted();
  }

  /**
   * Sign-bit Hamming scan, then exact re-scoring of the closest candidates (approximate). The
   * candidates are picked by a histogram of the integer distances built during the scan (one
   * linear pass, no heap): every slot below the cut-off distance, then slots at the cut-off in
   * slot order until `want` are taken.
   */
  searchBits(y: Float32Array, k: number, accept?: (id: Id) => boolean): VectorHit[] {
    const w = this.words;
    const qb = signBits(y, w);
    const n = this.count;
    if (this.hamming.length < n) this.hamming = new Uint16Array(Math.max(n, this.capacity));
    const dist = this.hamming;
    const hist = new Int32Array(w * 32 + 1);
    const bits = this.bits;
    for (let s = 0, o = 0; s < n; s++, o += w) {
      let h = 0;
      for (let j = 0; j < w; j++) {
        let x = bits[o + j]! ^ qb[j]!;
        x = x - ((x >>> 1) & 0x55555555);
        x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
        h += Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
      }
      dist[s] = h;
      hist[h]!++;
    }
    const want = Math.min(n, Math.max(k * this.candidateFactor, this.candidateMinimum));
    let cut = 0;
    let below = 0;
    while (below + hist[cut]! < want) below += hist[cut++]!;
    let atCut = want - below;
    const top = new TopK(k);
    for (let s = 0; s < n; s++) {
      const h = dist[s]!;
      if (h > cut || (h === cut && atCut-- <= 0)) continue;
      if (accept && !accept(this.ids[s]!)) continue;
      top.offer(this.ids[s]!, this.exactDot(s, y));
    }
    return top.sorted();
  }

  private exactDot(slot: number, y: Float32Array): number {
    const d = this.dim;
    const f = this.f32[slot >> CHUNK_BITS]!;
    const o = (slot & CHUNK_MASK) * d;
    let a0 = 0,
      a1 = 0,
      a2 = 0,
      a3 = 0;
    let j = 0;
    for (; j + 3 < d; j += 4) {
      a0 += f[o + j]! * y[j]!;
      a1 += f[o + j + 1]! * y[j + 1]!;
      a2 += f[o + j + 2]! * y[j + 2]!;
      a3 += f[o + j + 3]! * y[j + 3]!;
    }
    for (; j < d; j++) a0 += f[o + j]! * y[j]!;
    return a0 + a1 + (a2 + a3);
  }

  private write(slot: number, v: Float32Array): void {
    const d = this.dim;
    const o = (slot & CHUNK_MASK) * d;
    const c = slot >> CHUNK_BITS;
    while (this.f32.length <= c) {
      this.f32.push(new Float32Array(CHUNK * d));
      if (this.useInt8) this.i8.push(new Int8Array(CHUNK * d));
    }
    this.f32[c]!.set(v, o);
    // Sign bits written in place (a temporary array per vector cost more than the copy at start-up).
    const w0 = slot * this.words;
    this.bits.fill(0, w0, w0 + this.words);
    for (let j = 0; j < d; j++) if (v[j]! > 0) this.bits[w0 + (j >>> 5)]! |= 1 << (j & 31);
    if (!this.useInt8) return;
    let max = 0;
    for (let j = 0; j < d; j++) max = Math.max(max, Math.abs(v[j]!));
    const s = max > 0 ? max / 127 : 1;
    let r2 = 0;
    let x2 = 0;
    for (let j = 0; j < d; j++) {
      x2 += v[j]! * v[j]!;
      const q = Math.round(v[j]! / s);
      this.i8[c]![o + j] = q;
      const r = v[j]! - q * s;
      r2 += r * r;
    }
    this.scale[slot] = s;
    // Round the residual norm up a little so float32 storage never understates it.
    this.resid[slot] = Math.sqrt(r2) * (1 + 1e-6);
    this.norm[slot] = Math.sqrt(x2) * (1 + 1e-6);
  }

  private grow(): void {
    // The per-vector arrays here are small (under 60 bytes a vector); the vectors themselves are chunked.
    const cap = this.capacity < 4096 ? Math.max(64, this.capacity * 2) : Math.ceil(this.capacity * 1.25);
    const bits = new Int32Array(cap * this.words);
    bits.set(this.bits);
    const scale = new Float32Array(cap);
    scale.set(this.scale);
    const resid = new Float32Array(cap);
    resid.set(this.resid);
    const norm = new Float32Array(cap);
    norm.set(this.norm);
    Object.assign(this, { bits, scale, resid, norm, capacity: cap });
  }

  private scratchFor(n: number): Float32Array {
    if (this.scratch.length < n) this.scratch = new Float32Array(Math.max(n, this.capacity));
    return this.scratch;
  }
}

function quantise(y: Float32Array): { p: Int32Array; t: number; uNorm: number; tpNorm: number } {
  let max = 0;
  for (let j = 0; j < y.length; j++) max = Math.max(max, Math.abs(y[j]!));
  const t = max > 0 ? max / 127 : 1;
  const p = new Int32Array(y.length);
  let u2 = 0;
  let tp2 = 0;
  for (let j = 0; j < y.length; j++) {
    const q = Math.round(y[j]! / t);
    p[j] = q;
    const u = y[j]! - q * t;
    u2 += u * u;
    tp2 += q * t * (q * t);
  }
  return { p, t, uNorm: Math.sqrt(u2) * (1 + 1e-6), tpNorm: Math.sqrt(tp2) * (1 + 1e-6) };
}

function signBits(v: Float32Array, words: number): Int32Array {
  const out = new Int32Array(words);
  for (let j = 0; j < v.length; j++) if (v[j]! > 0) out[j >>> 5]! |= 1 << (j & 31);
  return out;
}

/** Slots of the m largest values (unordered), by a bounded selection. */
function topSlots(values: Float32Array, n: number, m: number): number[] {
  if (m >= n) return Array.from({ length: n }, (_, i) => i);
  const top = new TopSlots(m, (slot) => values[slot]!);
  for (let s = 0; s < n; s++) top.offer(s);
  return top.slots();
}

/** The k best (score, id) pairs seen so far; ties broken by id for determinism. */
class TopK {
  private items: VectorHit[] = [];
  constructor(private readonly k: number) {}
  get full(): boolean {
    return this.items.length >= this.k;
  }
  get threshold(): number {
    return this.full ? this.items[this.items.length - 1]!.score : -Infinity;
  }
  offer(id: Id, score: number): void {
    const items = this.items;
    const last = items[items.length - 1];
    if (this.full && last && !(score > last.score || (score === last.score && id < last.id))) return;
    let i = this.full ? items.length - 1 : items.length;
    if (!this.full) items.push({ id, score });
    while (i > 0) {
      const prev = items[i - 1]!;
      if (!(score > prev.score || (score === prev.score && id < prev.id))) break;
      items[i] = prev;
      i--;
    }
    items[i] = { id, score };
  }
  sorted(): VectorHit[] {
    return this.items.slice();
  }
}
