// The user's corrections to the memory graph (docs/METHOD.md, section 2: traits must be visible,
// editable and deletable). Pure: each returns the ChangeSet to apply and, for deletions, the one that undoes it.
// Changes to existing memories are patches: the store applies them to the record as it is when
// the write lands, so a correction and a running memorise job never undo each other's fields.
import type { ChangeSet, MemoryPatch } from '../ports';
import type { Edge, Id, Memory, Millis, Relation } from './types';
import type { MemoryGraph } from './graph';
import { compareChronological } from './order';
import { isPast } from './past';

const isTrait = (m: Memory) => m.kind === 'user-trait' || m.kind === 'assistant-trait';

export interface Deletion {
  change: ChangeSet;
  /** Puts back the memory, its edges and the supersession links it took away. */
  undo: ChangeSet;
}

/**
 * Deletes a memory; the store also deletes its edges and vectors and makes traits it had
 * superseded current again, in the same transaction. The undo puts back the memory, the edges it
 * had (those whose other end still exists when the undo lands) and the supersession links.
 */
export function deleteMemory(id: Id, memories: ReadonlyMap<Id, Memory>, graph: MemoryGraph): Deletion | undefined {
  const memory = memories.get(id);
  if (!memory) return undefined;
  const edges = [...graph.incoming(id), ...graph.outgoing(id)];
  const before: Id[] = [];
  for (const m of memories.values()) if (m.supersededBy === id && m.id !== id) before.push(m.id);
  return {
    change: { deleteMemories: [id] },
    undo: { memories: [memory], edges, memoryPatches: before.map((b) => ({ id: b, supersededBy: id })) },
  };
}

/** Deletes several memories in one change; the undo puts them all back (each edge once). */
export function deleteMemories(ids: readonly Id[], memories: ReadonlyMap<Id, Memory>, graph: MemoryGraph): Deletion | undefined {
  const each = ids.map((id) => deleteMemory(id, memories, graph)).filter((d): d is Deletion => d !== undefined);
  if (each.length === 0) return undefined;
  const edges = new Map(each.flatMap((d) => d.undo.edges ?? []).map((e) => [e.id, e]));
  return {
    change: { deleteMemories: each.flatMap((d) => d.change.deleteMemories ?? []) },
    undo: {
      memories: each.flatMap((d) => d.undo.memories ?? []),
      edges: [...edges.values()],
      memoryPatches: each.flatMap((d) => d.undo.memoryPatches ?? []),
    },
  };
}

/** The patch that corrects a memory's text, or undefined when nothing changes. */
export function editMemoryText(memory: Memory, text: string): MemoryPatch | undefined {
  const clean = text.replace(/\s+/g, ' ').trim();
  if (!clean || clean === memory.text) return undefined;
  return { id: memory.id, text: clean, edited: true };
}

/**
 * Changes an edge's relation (origin becomes "user") or deletes it (relation null). A "Changed"
 * edge between two traits of one kind supersedes the older; taking it away restores it.
 */
export function changeEdge(edge: Edge, relation: Relation | null, memories: ReadonlyMap<Id, Memory>, now: Millis): ChangeSet {
  const from = memories.get(edge.from);
  const to = memories.get(edge.to);
  const out: ChangeSet = {};
  const wasChange = edge.relation === 'Changed';
  const isChange = relation === 'Changed';
  if (relation === null) out.deleteEdges = [edge.id];
  else out.edges = [{ ...edge, relation, origin: 'user', createdAt: edge.createdAt ?? now }];
  if (from && to && isTrait(from) && from.kind === to.kind) {
    if (isChange && !from.supersededBy) out.memoryPatches = [{ id: from.id, supersededBy: to.id }];
    if (wasChange && !isChange && from.supersededBy === to.id) out.memoryPatches = [{ id: from.id, supersededBy: null }];
  }
  return out;
}

/**
 * "No longer true" / "Mark current" on a trait. Marking it ended records when (`endedAt`, now),
 * with or without a newer trait that replaces it; a newer trait of the same kind it links to
 * becomes its replacement (`supersededBy`). Marking current clears both.
 */
export function toggleSuperseded(
  id: Id,
  memories: ReadonlyMap<Id, Memory>,
  graph: MemoryGraph,
  now: Millis = Date.now(),
): { change?: ChangeSet; error?: string } {
  const m = memories.get(id);
  if (!m) return { error: 'That memory no longer exists.' };
  if (isPast(m)) return { change: { memoryPatches: [{ id, supersededBy: null, endedAt: null }] } };
  if (!isTrait(m)) return { error: 'Only traits can be marked as no longer true.' };
  const newer = (x: Memory) => x.id !== id && x.kind === m.kind && compareChronological(m, x) < 0;
  const linked = [...graph.outgoing(id)].map((e) => memories.get(e.to)).filter((x): x is Memory => !!x && newer(x));
  const target = linked.sort(compareChronological).at(-1);
  return { change: { memoryPatches: [{ id, endedAt: Math.max(now, m.time), ...(target ? { supersededBy: target.id } : {}) }] } };
}
