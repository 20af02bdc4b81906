// Threads of the memory graph: its connected components (direction ignored).

import type { Edge, Id, Memory } from '../memory/types';

/**
 * The memories grouped by component, each group in the order of `memories`, groups in the order
 * of their first member; edges with an end not among `memories` are left out. A union-find over
 * positions, straight from the edges: building a whole MemoryGraph for this (adjacency, id and
 * pair maps) cost most of the timeline's layout at 100,000 links.
 */
export function components(memories: readonly Memory[], edges: readonly Edge[]): Id[][] {
  const at = new Map<Id, number>();
  memories.forEach((m, i) => at.set(m.id, i));
  const parent = Int32Array.from(memories, (_, i) => i);
  const find = (v: number): number => {
    while (parent[v] !== v) v = parent[v] = parent[parent[v]];
    return v;
  };
  for (const e of edges) {
    const a = at.get(e.from);
    const b = at.get(e.to);
    if (a === undefined || b === undefined) continue;
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
  const groups = new Map<number, Id[]>();
  memories.forEach((m, i) => {
    const root = find(i);
    const g = groups.get(root);
    if (g) g.push(m.id);
    else groups.set(root, [m.id]);
  });
  return [...groups.values()];
}
