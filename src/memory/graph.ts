// The memory graph G = (V, E) of METHOD.md, in memory: adjacency both ways and connected
// components (direction ignored) kept up to date on insert with a union-find, so that neither
// linking nor timeline retrieval recomputes anything per query. Deletions (rare: the user deletes
// by hand) only mark the components stale; they are rebuilt once, on the next component query.
import type { Edge, Id, Memory, Millis } from './types';
import { compareChronological, type Dated } from './order';

interface Vertex extends Dated {
  out: Edge[];
  in: Edge[];
}

function pairKey(from: Id, to: Id): string {
  return `${from}\u0000${to}`;
}

export class MemoryGraph {
  private readonly vertices = new Map<Id, Vertex>();
  private readonly edgesById = new Map<Id, Edge>();
  private readonly edgesByPair = new Map<string, Edge>();
  // Union-find over vertex ids. `members` is only kept for roots.
  private readonly parent = new Map<Id, Id>();
  private readonly members = new Map<Id, Id[]>();
  private componentsStale = false;

  static from(memories: Iterable<Pick<Memory, 'id' | 'time' | 'createdAt'>>, edges: Iterable<Edge>): MemoryGraph {
    const graph = new MemoryGraph();
    for (const m of memories) graph.addMemory(m.id, m.time, m.createdAt);
    for (const e of edges) graph.addEdge(e);
    return graph;
  }

  get size(): number {
    return this.vertices.size;
  }

  get edgeCount(): number {
    return this.edgesById.size;
  }

  has(id: Id): boolean {
    return this.vertices.has(id);
  }

  /** The id, time and createdAt of a memory in the graph. */
  dated(id: Id): Dated | undefined {
    const v = this.vertices.get(id);
    return v ? { id: v.id, time: v.time, createdAt: v.createdAt } : undefined;
  }

  ids(): IterableIterator<Id> {
    return this.vertices.keys();
  }

  edges(): IterableIterator<Edge> {
    return this.edgesById.values();
  }

  getEdge(id: Id): Edge | undefined {
    return this.edgesById.get(id);
  }

  /** Adds a memory (or updates its time when already present). */
  addMemory(id: Id, time: Millis, createdAt: Millis = 0): void {
    const existing = this.vertices.get(id);
    if (existing) {
      existing.time = time;
      existing.createdAt = createdAt;
      return;
    }
    this.vertices.set(id, { id, time, createdAt, out: [], in: [] });
    if (!this.componentsStale) {
      this.parent.set(id, id);
      this.members.set(id, [id]);
    }
  }

  /** Removes a memory and every edge touching it. */
  removeMemory(id: Id): void {
    const v = this.vertices.get(id);
    if (!v) return;
    for (const e of [...v.out, ...v.in]) this.removeEdge(e.id);
    this.vertices.delete(id);
    this.componentsStale = true;
  }

  /**
   * Adds an edge. Both ends must already be in the graph. Returns false (and changes nothing)
   * when an edge with the same id or the same (from, to) pair exists, or for a self loop.
   */
  addEdge(edge: Edge): boolean {
    const from = this.vertices.get(edge.from);
    const to = this.vertices.get(edge.to);
    if (!from || !to) throw new Error(`edge ${edge.id}: unknown end ${!from ? edge.from : edge.to}`);
    if (edge.from === edge.to) return false;
    if (this.edgesById.has(edge.id) || this.edgesByPair.has(pairKey(edge.from, edge.to))) return false;
    this.edgesById.set(edge.id, edge);
    this.edgesByPair.set(pairKey(edge.from, edge.to), edge);
    from.out.push(edge);
    to.in.push(edge);
    if (!this.componentsStale) this.union(edge.from, edge.to);
    return true;
  }

  removeEdge(id: Id): void {
    const edge = this.edgesById.get(id);
    if (!edge) return;
    this.edgesById.delete(id);
    this.edgesByPair.delete(pairKey(edge.from, edge.to));
    const from = this.vertices.get(edge.from);
    const to = this.vertices.get(edge.to);
    if (from) from.out = from.out.filter((e) => e.id !== id);
    if (to) to.in = to.in.filter((e) => e.id !== id);
    this.componentsStale = true;
  }

  hasEdge(from: Id, to: Id): boolean {
    return this.edgesByPair.has(pairKey(from, to));
  }

  edgeBetween(from: Id, to: Id): Edge | undefined {
    return this.edgesByPair.get(pairKey(from, to));
  }

  /** Edges leaving a memory (towards newer memories). */
  outgoing(id: Id): readonly Edge[] {
    return this.vertices.get(id)?.out ?? [];
  }

  /** Edges arriving at a memory (from older memories). */
  incoming(id: Id): readonly Edge[] {
    return this.vertices.get(id)?.in ?? [];
  }

  /**
   * A representative id of the memory's connected component. Two memories are in the same
   * component exactly when their ids are equal; the value may change after the next insert.
   */
  componentId(id: Id): Id | undefined {
    if (!this.vertices.has(id)) return undefined;
    this.refreshComponents();
    return this.find(id);
  }

  /** All memories of the component containing `id` (including it). */
  componentOf(id: Id): readonly Id[] {
    const root = this.componentId(id);
    return root === undefined ? [] : (this.members.get(root) ?? [id]);
  }

  /** The most recent memory among `ids` by the chronological order of order.ts. */
  mostRecent(ids: Iterable<Id>): Id | undefined {
    let best: Vertex | undefined;
    for (const id of ids) {
      const v = this.vertices.get(id);
      if (v && (!best || compareChronological(v, best) > 0)) best = v;
    }
    return best?.id;
  }

  private find(id: Id): Id {
    let root = id;
    for (let p = this.parent.get(root); p !== undefined && p !== root; p = this.parent.get(root)) root = p;
    // Path compression.
    let cur = id;
    while (cur !== root) {
      const next = this.parent.get(cur)!;
      this.parent.set(cur, root);
      cur = next;
    }
    return root;
  }

  private union(a: Id, b: Id): void {
    let ra = this.find(a);
    let rb = this.find(b);
    if (ra === rb) return;
    let ma = this.members.get(ra)!;
    let mb = this.members.get(rb)!;
    if (ma.length < mb.length) {
      [ra, rb] = [rb, ra];
      [ma, mb] = [mb, ma];
    }
    this.parent.set(rb, ra);
    for (const id of mb) ma.push(id);
    this.members.delete(rb);
  }

  private refreshComponents(): void {
    if (!this.componentsStale) return;
    this.parent.clear();
    this.members.clear();
    for (const id of this.vertices.keys()) {
      this.parent.set(id, id);
      this.members.set(id, [id]);
    }
    this.componentsStale = false;
    for (const e of this.edgesById.values()) this.union(e.from, e.to);
  }
}
