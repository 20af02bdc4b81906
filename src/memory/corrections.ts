// The user's corrections to the memory graph (METHOD.md: traits must be visible, editable and
// deletable). Pure: each returns the ChangeSet to apply and, for deletions, the one that undoes it.
import type { ChangeSet } from '../ports';
import type { Edge, Id, Memory, Millis, Relation } from './types';
import type { MemoryGraph } from './graph';
import { compareChronological } from './order';

const isTrait = (m: Memory) => m.kind === 'user-trait' || m.kind === 'assistant-trait';

export interface Deletion {
  change: ChangeSet;
  /** Puts back the memory, its edges and the supersession links it took away. */
  undo: ChangeSet;
}

/** Deletes a memory with its edges and vectors; traits it had superseded become current again. */
export function deleteMemory(id: Id, memories: ReadonlyMap<Id, Memory>, graph: MemoryGraph, vectorModelIds: readonly string[]): Deletion | undefined {
  const memory = memories.get(id);
  if (!memory) return undefined;
  const edges = [...graph.incoming(id), ...graph.outgoing(id)];
  const restored: Memory[] = [];
  const before: Memory[] = [];
  for (const m of memories.values()) {
    if (m.supersededBy === id && m.id !== id) {
      before.push(m);
      const copy = { ...m };
      delete copy.supersededBy;
      restored.push(copy);
    }
  }
  return {
    change: {
      deleteMemories: [id],
      deleteEdges: edges.map((e) => e.id),
      deleteVectors: vectorModelIds.map((model) => [id, model] as [Id, string]),
      memories: restored,
    },
    undo: { memories: [memory, ...before], edges },
  };
}

export function editMemoryText(memory: Memory, text: string): Memory | undefined {
  const clean = text.replace(/\s+/g, ' ').trim();
  if (!clean || clean === memory.text) return undefined;
  return { ...memory, text: clean, edited: true };
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
    if (isChange && !from.supersededBy) out.memories = [{ ...from, supersededBy: to.id }];
    if (wasChange && !isChange && from.supersededBy === to.id) {
      const copy = { ...from };
      delete copy.supersededBy;
      out.memories = [copy];
    }
  }
  return out;
}

/**
 * Marks a trait current (clears supersededBy) or superseded: it must point to a newer trait of the
 * same kind, preferably one it is linked to, else the newest such trait about the same subject.
 */
export function toggleSuperseded(id: Id, memories: ReadonlyMap<Id, Memory>, graph: MemoryGraph): { change?: ChangeSet; error?: string } {
  const m = memories.get(id);
  if (!m) return { error: 'That memory no longer exists.' };
  if (m.supersededBy) {
    const copy = { ...m };
    delete copy.supersededBy;
    return { change: { memories: [copy] } };
  }
  if (!isTrait(m)) return { error: 'Only traits can be marked as no longer true.' };
  const newer = (x: Memory) => x.id !== id && x.kind === m.kind && compareChronological(m, x) < 0;
  const linked = [...graph.outgoing(id)].map((e) => memories.get(e.to)).filter((x): x is Memory => !!x && newer(x));
  const sameSubject = [...memories.values()].filter((x) => newer(x) && (x.subject ?? '') === (m.subject ?? ''));
  const pick = (xs: Memory[]) => xs.sort(compareChronological).at(-1);
  const target = pick(linked) ?? pick(sameSubject);
  if (!target) return { error: 'There is no newer trait that replaces this one, so it stays current.' };
  return { change: { memories: [{ ...m, supersededBy: target.id }] } };
}
