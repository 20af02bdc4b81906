// Threads of the memory graph: its connected components (direction ignored), as the union-find
// of MemoryGraph keeps them.

import type { MemoryGraph } from '../memory/graph';
import type { Id, Memory } from '../memory/types';

/**
 * The memories grouped by component, each group in the order of `memories`, groups in the order
 * of their first member. Memories missing from the graph are a group of one each.
 */
export function components(memories: readonly Memory[], graph: MemoryGraph): Id[][] {
  const groups = new Map<Id, Id[]>();
  for (const m of memories) {
    const root = graph.componentId(m.id) ?? m.id;
    const g = groups.get(root);
    if (g) g.push(m.id);
    else groups.set(root, [m.id]);
  }
  return [...groups.values()];
}
