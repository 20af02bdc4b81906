// The memory graph G = (V, E) of docs/METHOD.md (section 1.1), in memory: adjacency both ways and connected
// components (direction ignored) kept up to date on insert with a union-find, so that neither
// linking nor timeline retrieval recomputes anything per query. Deletions (rare: the user deletes
// by hand) only mark the components stale; they are rebuilt once, on the next component query.
//
// Internally vertices and edges are small integers and the structure lives in typed arrays
// (adjacency as linked lists of edge numbers, union-find with a member ring per component): one
// object per memory and per edge, plus the string keys of two maps, cost ~90 MB at 100k memories;
// this layout keeps only the Edge records themselves and the two id maps.
import type { Edge, Id, Memory, Millis } from './types';
import { compareChronological, type Dated } from './order';

const NONE = -1;
/** Pair keys are a * PAIR_SPAN + b, exact in a double while both vertex numbers stay below it. */
const PAIR_SPAN = 2 ** 26;

function growI32(a: Int32Array, cap: number, fill = 0): Int32Array<ArrayBuffer> {
  const next = new Int32Array(cap);
  next.set(a);
  if (fill !== 0) next.fill(fill, a.length);
  return next;
}

function growF64(a: Float64Array, cap: number): Float64Array<ArrayBuffer> {
  const next = new Float64Array(cap);
  next.set(a);
  return next;
}

export class MemoryGraph {
  // Vertices: id <-> number.
  private readonly vertexOf = new Map<Id, number>();
  private vertexId: (Id | undefined)[] = [];
  private time = new Float64Array(0);
  private created = new Float64Array(0);
  // Adjacency: per vertex the first and last edge of its outgoing / incoming list (insertion order).
  private headOut = new Int32Array(0);
  private tailOut = new Int32Array(0);
  private headIn = new Int32Array(0);
  private tailIn = new Int32Array(0);
  // Edges: id <-> number, the records, their ends and the next edge in each list.
  private readonly edgeOf = new Map<Id, number>();
  private edgeRec: (Edge | undefined)[] = [];
  private from = new Int32Array(0);
  private to = new Int32Array(0);
  private nextOut = new Int32Array(0);
  private nextIn = new Int32Array(0);
  // The edge of each (from, to) pair: looked up on every insert, so one memory with 100,000 links
  // must not make that a walk of its list (which made building the graph quadratic in its degree).
  private readonly pairOf = new Map<number, number>();
  // Union-find over vertex numbers; `ring` links the members of each component in a cycle.
  private parent = new Int32Array(0);
  private compSize = new Int32Array(0);
  private ring = new Int32Array(0);
  private componentsStale = false;

  /**
   * Builds a graph. An edge whose end is missing is left out (and pushed to `dangling` when given)
   * rather than thrown: one bad record must never stop the app from starting.
   */
  static from(memories: Iterable<Pick<Memory, 'id' | 'time' | 'createdAt'>>, edges: Iterable<Edge>, dangling?: Edge[]): MemoryGraph {
    const graph = new MemoryGraph();
    for (const m of memories) graph.addMemory(m.id, m.time, m.createdAt);
    for (const e of edges) {
      if (graph.has(e.from) && graph.has(e.to)) graph.addEdge(e);
      else dangling?.push(e);
    }
    return graph;
  }

  get size(): number {
    return this.vertexOf.size;
  }

  get edgeCount(): number {
    return this.edgeOf.size;
  }

  has(id: Id): boolean {
    return this.vertexOf.has(id);
  }

  /** The id, time and createdAt of a memory in the graph. */
  dated(id: Id): Dated | undefined {
    const v = this.vertexOf.get(id);
    return v === undefined ? undefined : { id, time: this.time[v]!, createdAt: this.created[v]! };
  }

  ids(): IterableIterator<Id> {
    return this.vertexOf.keys();
  }

  *edges(): IterableIterator<Edge> {
    for (const e of this.edgeOf.values()) yield this.edgeRec[e]!;
  }

  getEdge(id: Id): Edge | undefined {
    const e = this.edgeOf.get(id);
    return e === undefined ? undefined : this.edgeRec[e];
  }

  /** Adds a memory (or updates its time when already present). */
  addMemory(id: Id, time: Millis, createdAt: Millis = 0): void {
    const existing = this.vertexOf.get(id);
    if (existing !== undefined) {
      this.time[existing] = time;
      this.created[existing] = createdAt;
      return;
    }
    const v = this.vertexId.length;
    if (v >= this.time.length) {
      const cap = Math.max(64, Math.ceil(this.time.length * 1.5));
      this.time = growF64(this.time, cap);
      this.created = growF64(this.created, cap);
      this.headOut = growI32(this.headOut, cap, NONE);
      this.tailOut = growI32(this.tailOut, cap, NONE);
      this.headIn = growI32(this.headIn, cap, NONE);
      this.tailIn = growI32(this.tailIn, cap, NONE);
      this.parent = growI32(this.parent, cap);
      this.compSize = growI32(this.compSize, cap);
      this.ring = growI32(this.ring, cap);
    }
    this.vertexId.push(id);
    this.vertexOf.set(id, v);
    this.time[v] = time;
    this.created[v] = createdAt;
    this.parent[v] = v;
    this.compSize[v] = 1;
    this.ring[v] = v;
  }

  /** Removes a memory and every edge touching it. */
  removeMemory(id: Id): void {
    const v = this.vertexOf.get(id);
    if (v === undefined) return;
    for (const e of [...this.outgoing(id), ...this.incoming(id)]) this.removeEdge(e.id);
    // The number is not reused: a hole in the arrays until the next start.
    this.vertexOf.delete(id);
    this.vertexId[v] = undefined;
    this.componentsStale = true;
  }

  /**
   * Adds an edge. Both ends must already be in the graph. Returns false (and changes nothing)
   * when an edge with the same id or the same (from, to) pair exists, or for a self loop.
   */
  addEdge(edge: Edge): boolean {
    const a = this.vertexOf.get(edge.from);
    const b = this.vertexOf.get(edge.to);
    if (a === undefined || b === undefined) throw new Error(`edge ${edge.id}: unknown end ${a === undefined ? edge.from : edge.to}`);
    if (edge.from === edge.to) return false;
    if (this.edgeOf.has(edge.id) || this.pairEdge(a, b) !== NONE) return false;
    const e = this.edgeRec.length;
    if (e >= this.from.length) {
      const cap = Math.max(64, Math.ceil(this.from.length * 1.5));
      this.from = growI32(this.from, cap);
      this.to = growI32(this.to, cap);
      this.nextOut = growI32(this.nextOut, cap);
      this.nextIn = growI32(this.nextIn, cap);
    }
    this.edgeRec.push(edge);
    this.edgeOf.set(edge.id, e);
    if (a < PAIR_SPAN && b < PAIR_SPAN) this.pairOf.set(a * PAIR_SPAN + b, e);
    this.from[e] = a;
    this.to[e] = b;
    this.nextOut[e] = NONE;
    this.nextIn[e] = NONE;
    if (this.tailOut[a] === NONE) this.headOut[a] = e;
    else this.nextOut[this.tailOut[a]!] = e;
    this.tailOut[a] = e;
    if (this.tailIn[b] === NONE) this.headIn[b] = e;
    else this.nextIn[this.tailIn[b]!] = e;
    this.tailIn[b] = e;
    if (!this.componentsStale) this.union(a, b);
    return true;
  }

  removeEdge(id: Id): void {
    const e = this.edgeOf.get(id);
    if (e === undefined) return;
    this.unlink(e, this.from[e]!, this.headOut, this.tailOut, this.nextOut);
    this.unlink(e, this.to[e]!, this.headIn, this.tailIn, this.nextIn);
    this.forgetEdge(e);
  }

  /** Drops edge number e from the id and pair maps (its list links are the caller's). */
  private forgetEdge(e: number): void {
    const a = this.from[e]!;
    const b = this.to[e]!;
    if (a < PAIR_SPAN && b < PAIR_SPAN && this.pairOf.get(a * PAIR_SPAN + b) === e) this.pairOf.delete(a * PAIR_SPAN + b);
    this.edgeOf.delete(this.edgeRec[e]!.id);
    this.edgeRec[e] = undefined;
    this.componentsStale = true;
  }

  private unlink(e: number, v: number, head: Int32Array, tail: Int32Array, next: Int32Array): void {
    let prev = NONE;
    for (let cur = head[v]!; cur !== NONE; prev = cur, cur = next[cur]!) {
      if (cur !== e) continue;
      if (prev === NONE) head[v] = next[cur]!;
      else next[prev] = next[cur]!;
      if (tail[v] === cur) tail[v] = prev;
      return;
    }
  }

  /** The edge from a to b (vertex numbers). */
  private pairEdge(a: number, b: number): number {
    if (a < PAIR_SPAN && b < PAIR_SPAN) return this.pairOf.get(a * PAIR_SPAN + b) ?? NONE;
    for (let e = this.headOut[a]!; e !== NONE; e = this.nextOut[e]!) if (this.to[e] === b) return e;
    return NONE;
  }

  hasEdge(from: Id, to: Id): boolean {
    return this.edgeBetween(from, to) !== undefined;
  }

  edgeBetween(from: Id, to: Id): Edge | undefined {
    const a = this.vertexOf.get(from);
    const b = this.vertexOf.get(to);
    if (a === undefined || b === undefined) return undefined;
    const e = this.pairEdge(a, b);
    return e === NONE ? undefined : this.edgeRec[e];
  }

  /** Edges leaving a memory (towards newer memories), in insertion order. */
  outgoing(id: Id): readonly Edge[] {
    const v = this.vertexOf.get(id);
    const out: Edge[] = [];
    if (v !== undefined) for (let e = this.headOut[v]!; e !== NONE; e = this.nextOut[e]!) out.push(this.edgeRec[e]!);
    return out;
  }

  /** Edges arriving at a memory (from older memories), in insertion order. */
  incoming(id: Id): readonly Edge[] {
    const v = this.vertexOf.get(id);
    const out: Edge[] = [];
    if (v !== undefined) for (let e = this.headIn[v]!; e !== NONE; e = this.nextIn[e]!) out.push(this.edgeRec[e]!);
    return out;
  }

  /**
   * A representative id of the memory's connected component. Two memories are in the same
   * component exactly when their ids are equal; the value may change after the next insert.
   */
  componentId(id: Id): Id | undefined {
    const v = this.vertexOf.get(id);
    if (v === undefined) return undefined;
    this.refreshComponents();
    return this.vertexId[this.find(v)];
  }

  /** All memories of the component containing `id` (including it). */
  componentOf(id: Id): readonly Id[] {
    const v = this.vertexOf.get(id);
    if (v === undefined) return [];
    this.refreshComponents();
    const out: Id[] = [];
    let cur = v;
    do {
      out.push(this.vertexId[cur]!);
      cur = this.ring[cur]!;
    } while (cur !== v);
    return out;
  }

  /** The most recent memory among `ids` by the chronological order of order.ts. */
  mostRecent(ids: Iterable<Id>): Id | undefined {
    let best: Dated | undefined;
    for (const id of ids) {
      const d = this.dated(id);
      if (d && (!best || compareChronological(d, best) > 0)) best = d;
    }
    return best?.id;
  }

  private find(v: number): number {
    let root = v;
    while (this.parent[root] !== root) root = this.parent[root]!;
    // Path compression.
    for (let cur = v; cur !== root;) {
      const next = this.parent[cur]!;
      this.parent[cur] = root;
      cur = next;
    }
    return root;
  }

  private union(a: number, b: number): void {
    let ra = this.find(a);
    let rb = this.find(b);
    if (ra === rb) return;
    if (this.compSize[ra]! < this.compSize[rb]!) [ra, rb] = [rb, ra];
    this.parent[rb] = ra;
    this.compSize[ra]! += this.compSize[rb]!;
    // Splice the two member rings into one.
    const t = this.ring[ra]!;
    this.ring[ra] = this.ring[rb]!;
    this.ring[rb] = t;
  }

  private refreshComponents(): void {
    if (!this.componentsStale) return;
    for (const v of this.vertexOf.values()) {
      this.parent[v] = v;
      this.compSize[v] = 1;
      this.ring[v] = v;
    }
    this.componentsStale = false;
    for (const e of this.edgeOf.values()) this.union(this.from[e]!, this.to[e]!);
  }
}
