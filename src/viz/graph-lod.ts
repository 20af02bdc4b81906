// Level of detail for the graph view: a force layout of 100,000 memories neither runs in time nor
// reads as anything but a hairball, so past a limit the view shows a connected part of the graph:
// first what the user asked for (pinned memories: the selection, a reply's memories, search hits)
// with their threads, then the threads of the most recent memories, until the limit. Pure and
// linear (one sort), so it runs in Node tests and in well under a frame budget at 100k.

import type { Edge, Id, Memory } from '../memory/types';

export interface GraphSubsetOptions {
  /** The most memories to show (pinned ones included). */
  limit: number;
  /**
   * Shown whatever their age, in this order of priority, and grown from first: their threads
   * come in before the recent ones. Unknown ids are ignored; past `limit` the rest are dropped.
   */
  pinned?: readonly Id[];
}

export interface GraphSubset {
  memories: Memory[];
  /** Edges whose two ends are both shown. */
  edges: Edge[];
  /** Ids of the shown memories. */
  ids: ReadonlySet<Id>;
  /** How many memories and valid edges (both ends known) there were in all. */
  total: number;
  totalEdges: number;
  /** Everything is shown (the input arrays are returned as they are). */
  complete: boolean;
  /** Pinned ids that exist and are shown. */
  pinnedShown: number;
}

/**
 * The memories to draw, at most `limit` of them: pinned first, then, from each pinned memory and
 * then from each memory newest first, a breadth-first walk over links (either direction) takes
 * its thread until the limit. So what is shown is whole threads (or, for a thread larger than
 * what is left, the part nearest its seed), the newest activity first.
 *
 * Build one per data change (the index, adjacency and time order: linear plus one sort); each
 * `pick` then costs only the walk, so pinning a memory or showing more does not redo the rest.
 */
export class GraphLod {
  readonly total: number;
  /** Edges whose two ends are known. */
  readonly totalEdges: number;
  private readonly index = new Map<Id, number>();
  /** CSR adjacency: node i's neighbours are adj[start[i]..start[i+1]). */
  private readonly start: Int32Array;
  private readonly adj: Int32Array;
  /** End points of every input edge (-1 when unknown), in input order. */
  private readonly ends: Int32Array;
  private order: Int32Array | null = null;

  constructor(
    private readonly memories: readonly Memory[],
    private readonly edges: readonly Edge[],
  ) {
    const n = memories.length;
    this.total = n;
    for (let i = 0; i < n; i++) this.index.set(memories[i].id, i);
    const start = new Int32Array(n + 1);
    const ends = new Int32Array(edges.length * 2);
    let valid = 0;
    for (let k = 0; k < edges.length; k++) {
      const a = this.index.get(edges[k].from) ?? -1;
      const b = this.index.get(edges[k].to) ?? -1;
      ends[2 * k] = a;
      ends[2 * k + 1] = b;
      if (a < 0 || b < 0) continue;
      valid++;
      start[a + 1]++;
      start[b + 1]++;
    }
    for (let i = 0; i < n; i++) start[i + 1] += start[i];
    const fill = start.slice(0, n);
    const adj = new Int32Array(valid * 2);
    for (let k = 0; k < edges.length; k++) {
      const a = ends[2 * k];
      const b = ends[2 * k + 1];
      if (a < 0 || b < 0) continue;
      adj[fill[a]++] = b;
      adj[fill[b]++] = a;
    }
    this.totalEdges = valid;
    this.start = start;
    this.adj = adj;
    this.ends = ends;
  }

  has(id: Id): boolean {
    return this.index.has(id);
  }

  /** Newest first; ties by input order so the same data always gives the same picture. */
  private newestFirst(): Int32Array {
    if (!this.order) {
      const n = this.total;
      const times = new Float64Array(n);
      for (let i = 0; i < n; i++) times[i] = this.memories[i].time;
      const order = new Int32Array(n);
      for (let i = 0; i < n; i++) order[i] = i;
      order.sort((a, b) => times[b] - times[a] || a - b);
      this.order = order;
    }
    return this.order;
  }

  pick(options: GraphSubsetOptions): GraphSubset {
    const { memories, edges, start, adj, ends, total: n } = this;
    const limit = Math.max(0, Math.floor(options.limit));
    const pinnedIdx: number[] = [];
    for (const id of options.pinned ?? []) {
      const i = this.index.get(id);
      if (i !== undefined && !pinnedIdx.includes(i)) pinnedIdx.push(i);
    }
    if (n <= limit) {
      return {
        memories: memories as Memory[],
        edges: edges as Edge[],
        ids: new Set(this.index.keys()),
        total: n,
        totalEdges: this.totalEdges,
        complete: true,
        pinnedShown: pinnedIdx.length,
      };
    }

    const taken = new Uint8Array(n);
    const queued = new Uint8Array(n);
    let count = 0;
    const take = (i: number): void => {
      if (!taken[i] && count < limit) {
        taken[i] = 1;
        count++;
      }
    };
    for (const i of pinnedIdx) take(i);
    const pinnedShown = pinnedIdx.filter((i) => taken[i]).length;

    const queue = new Int32Array(n);
    const grow = (seed: number): void => {
      if (queued[seed]) return;
      let head = 0;
      let tail = 0;
      queue[tail++] = seed;
      queued[seed] = 1;
      take(seed);
      while (head < tail && count < limit) {
        const u = queue[head++];
        for (let k = start[u]; k < start[u + 1] && count < limit; k++) {
          const v = adj[k];
          if (queued[v]) continue;
          queued[v] = 1;
          take(v);
          queue[tail++] = v;
        }
      }
    };
    for (const i of pinnedIdx) {
      if (count >= limit) break;
      if (taken[i]) grow(i);
    }
    if (count < limit) {
      const order = this.newestFirst();
      for (let k = 0; k < n && count < limit; k++) grow(order[k]);
    }

    const shown: Memory[] = [];
    const ids = new Set<Id>();
    for (let i = 0; i < n; i++) {
      if (!taken[i]) continue;
      shown.push(memories[i]);
      ids.add(memories[i].id);
    }
    const shownEdges: Edge[] = [];
    for (let k = 0; k < edges.length; k++) {
      const a = ends[2 * k];
      const b = ends[2 * k + 1];
      if (a >= 0 && b >= 0 && taken[a] && taken[b]) shownEdges.push(edges[k]);
    }
    return { memories: shown, edges: shownEdges, ids, total: n, totalEdges: this.totalEdges, complete: false, pinnedShown };
  }
}

/** One-off `new GraphLod(memories, edges).pick(options)`. */
export function pickGraphSubset(memories: readonly Memory[], edges: readonly Edge[], options: GraphSubsetOptions): GraphSubset {
  return new GraphLod(memories, edges).pick(options);
}
