// What to emphasise in a view: the timelines a reply used, or a memory and its neighbours.

import type { MemoryGraph } from '../memory/graph';
import type { Edge, Id, Timeline } from '../memory/types';

export interface Highlight {
  memoryIds: Id[];
  /** Directed pairs; matched against edges by (from, to). */
  edges: { from: Id; to: Id }[];
}

/** Node and edge ids to keep vivid; everything else is drawn faded. */
export interface HighlightSets {
  nodes: ReadonlySet<Id>;
  edges: ReadonlySet<Id>;
}

const pairKey = (from: Id, to: Id): string => `${from}\u0000${to}`;

/** What to highlight for a set of timelines (e.g. the ones a reply used). */
export function timelineFocus(timelines: readonly Timeline[]): Highlight {
  const ids = new Set<Id>();
  const pairs = new Map<string, { from: Id; to: Id }>();
  for (const t of timelines) {
    for (const id of t.memoryIds) ids.add(id);
    for (let i = 0; i + 1 < t.memoryIds.length; i++) {
      const from = t.memoryIds[i];
      const to = t.memoryIds[i + 1];
      pairs.set(pairKey(from, to), { from, to });
    }
  }
  return { memoryIds: [...ids], edges: [...pairs.values()] };
}

/** Resolve a highlight to node and edge id sets for the renderers. */
export function resolveHighlight(h: Highlight | null | undefined, edges: readonly Edge[]): { nodes: Set<Id>; edges: Set<Id> } | null {
  if (!h) return null;
  const wanted = new Set(h.edges.map((p) => pairKey(p.from, p.to)));
  const edgeIds = new Set<Id>();
  for (const e of edges) if (wanted.has(pairKey(e.from, e.to))) edgeIds.add(e.id);
  return { nodes: new Set(h.memoryIds), edges: edgeIds };
}

/** Memories one link away from `id`, either direction. */
export function neighbours(graph: MemoryGraph, id: Id): Set<Id> {
  const s = new Set<Id>();
  for (const e of graph.incoming(id)) s.add(e.from);
  for (const e of graph.outgoing(id)) s.add(e.to);
  return s;
}

/** A memory, its neighbours and the links between them (hover and selection emphasis). */
export function neighbourhood(graph: MemoryGraph, id: Id): { nodes: Set<Id>; edges: Set<Id> } {
  const nodes = neighbours(graph, id);
  nodes.add(id);
  const edges = new Set<Id>();
  for (const e of graph.incoming(id)) edges.add(e.id);
  for (const e of graph.outgoing(id)) edges.add(e.id);
  return { nodes, edges };
}
