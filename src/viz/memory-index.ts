// The explorer's one index of the data: the memory graph of src/memory (adjacency both ways,
// components) plus memories by id. Built once per data change and passed down to every view.

import { MemoryGraph } from '../memory/graph';
import type { Edge, Id, Memory } from '../memory/types';

export interface MemoryIndex {
  readonly graph: MemoryGraph;
  readonly memories: ReadonlyMap<Id, Memory>;
}

/** Edges with an unknown end are left out (MemoryGraph.from), as everywhere else. */
export function indexMemories(memories: readonly Memory[], edges: readonly Edge[]): MemoryIndex {
  return { graph: MemoryGraph.from(memories, edges), memories: new Map(memories.map((m) => [m.id, m] as const)) };
}

/** How many links a memory has (either way): how connected it is. */
export const degreeIn =
  (graph: MemoryGraph) =>
  (id: Id): number =>
    graph.incoming(id).length + graph.outgoing(id).length;
