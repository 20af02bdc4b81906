// The live memory a tab retrieves from and links into: the hybrid index, the graph and the
// records by id, built from the store and kept in step with each change the store wrote.
import type { AppliedChange, Embedder } from '../../ports';
import type { Edge, Id, Memory, Segment, VectorRecord } from '../../memory/types';
import { createHybridIndex } from '../../memory/retrieval/hybrid';
import { segmentUnit } from '../../memory/retrieval/units';
import { MemoryGraph } from '../../memory/graph';
import { memoryUnit } from '../../memory/ingest/memorise';
import { inSlices } from './jobs';
import { hasLines } from '../../memory/forget/lines';
import type { NounExtractor } from '../../memory/retrieval/topics';

/** The hybrid index with its lexical and dense sides. */
export type LiveIndex = ReturnType<typeof createHybridIndex>;

export interface LiveMemory {
  index: LiveIndex;
  graph: MemoryGraph;
  memories: Map<Id, Memory>;
  segments: Map<Id, Segment>;
}

/**
 * Builds the index and graph from records. Large stores are indexed in slices that give the page
 * back between them (no long freeze at start).
 */
export async function buildLiveMemory(
  memories: Memory[],
  edges: Edge[],
  segments: Segment[],
  embedder?: Embedder,
  vectors: readonly VectorRecord[] = [],
  /** With the topic-nouns switch on: every unit's nouns are kept (a few hundredths of a ms each). */
  nouns?: NounExtractor,
): Promise<LiveMemory> {
  const index = createHybridIndex({ nouns });
  const graph = new MemoryGraph();
  await inSlices(memories, (m) => graph.addMemory(m.id, m.time, m.createdAt));
  // planRepair has left out edges whose ends are missing; the check stays so a bad edge is skipped.
  await inSlices(edges, (e) => {
    if (graph.has(e.from) && graph.has(e.to)) graph.addEdge(e);
  });
  await inSlices(memories, (m) => index.upsert(memoryUnit(m)));
  // A passage whose every line was forgotten has no words to find (forget/lines.ts).
  await inSlices(segments, (s) => hasLines(s) && index.upsert(segmentUnit(s)));
  if (embedder) await attachVectors(index, embedder, vectors);
  return { index, graph, memories: new Map(memories.map((m) => [m.id, m])), segments: new Map(segments.map((s) => [s.id, s])) };
}

/** Puts stored vectors of `embedder` into the index (those of other sizes or of gone units are skipped). */
export async function attachVectors(index: LiveIndex, embedder: Embedder, vectors: readonly VectorRecord[]): Promise<void> {
  await inSlices(vectors, (v) => {
    if (index.has(v.unitId) && v.vector.length === embedder.dimension) index.setVector(v.unitId, v.vector);
  });
}

/**
 * Mirrors what the store actually wrote (cascades included, references that went away left out)
 * into the live index and graph, so retrieval respects it at once. `vectorModelId`: the model whose
 * vectors the index holds.
 */
export function mirrorChange(live: LiveMemory, change: AppliedChange, vectorModelId: string | undefined): void {
  const { graph, index, memories, segments } = live;
  for (const id of change.deleteEdges ?? []) graph.removeEdge(id);
  for (const id of change.deleteMemories ?? []) {
    graph.removeMemory(id);
    index.remove(id);
    memories.delete(id);
  }
  for (const id of change.deleteSegments ?? []) {
    segments.delete(id);
    index.remove(id);
  }
  for (const m of change.memories ?? []) {
    if (!graph.has(m.id)) graph.addMemory(m.id, m.time, m.createdAt);
    memories.set(m.id, m);
    index.upsert(memoryUnit(m));
  }
  for (const e of change.edges ?? []) {
    if (graph.getEdge(e.id)) graph.removeEdge(e.id);
    // The store checked the ends; this tab's graph may lag behind another tab's writes.
    if (graph.has(e.from) && graph.has(e.to)) graph.addEdge(e);
  }
  // Passages written (rebuilt around forgotten lines, or another device's): searched as they are now.
  for (const s of change.segments ?? []) {
    segments.set(s.id, s);
    if (hasLines(s)) index.upsert(segmentUnit(s));
    else index.remove(s.id);
  }
  // A vector the store deleted (its passage's words changed) is not searched by meaning any more.
  for (const [id, model] of change.deleteVectors ?? []) {
    const unit = model === vectorModelId ? index.get(id) : undefined;
    if (unit) {
      index.remove(id);
      index.upsert(unit);
    }
  }
  for (const v of change.vectors ?? []) if (v.modelId === vectorModelId && index.has(v.unitId)) index.setVector(v.unitId, v.vector);
}
