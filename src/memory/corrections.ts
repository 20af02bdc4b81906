// The user's corrections to the memory graph (docs/METHOD.md, section 2: traits must be visible,
// editable and deletable). Pure: each returns the ChangeSet to apply and, for deletions, the one that undoes it.
// Changes to existing memories are patches: the store applies them to the record as it is when
// the write lands, so a correction and a running memorise job never undo each other's fields.
import type { ChangeSet, MemoryPatch } from '../ports';
import type { Edge, Id, Memory, Millis, Relation } from './types';
import type { MemoryGraph } from './graph';
import { compareChronological } from './order';
import { isPast } from './past';
import { instructionFact, rememberedFact } from './commands/fact';

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
/**
 * The person moves a memory between a standing instruction (followed in every reply) and a fact.
 * `words`: what they said when they asked for it to be remembered, where it came from a "remember"
 * (an instruction keeps their words, a fact is written to them in the second person); otherwise the
 * memory's own text. Undefined when it is that kind already.
 */
export function memoryKindPatch(memory: Memory, to: 'instruction' | 'fact', words: string = memory.text): MemoryPatch | undefined {
  if ((memory.kind === 'instruction') === (to === 'instruction')) return undefined;
  const made = to === 'instruction' ? instructionFact(words) : rememberedFact(words, false);
  return { id: memory.id, kind: made.kind, text: made.text, subject: made.subject, context: made.context ?? null, edited: true };
}

export function editMemoryText(memory: Memory, text: string): MemoryPatch | undefined {
  const clean = text.replace(/\s+/g, ' ').trim();
  if (!clean || clean === memory.text) return undefined;
  return { id: memory.id, text: clean, edited: true };
}

/**
 * Changes an edge's relation (origin becomes "user") or deletes it (relation null); either answers
 * a question the edge carried (askEnded). "Changed" retires the older memory, whatever kinds the two
 * are (docs/METHOD.md, section 4: a change retires what it changes); taking it away restores it.
 */
export function changeEdge(edge: Edge, relation: Relation | null, memories: ReadonlyMap<Id, Memory>, now: Millis): ChangeSet {
  const from = memories.get(edge.from);
  const to = memories.get(edge.to);
  const out: ChangeSet = {};
  const wasChange = edge.relation === 'Changed';
  const isChange = relation === 'Changed';
  if (relation === null) out.deleteEdges = [edge.id];
  else {
    const { askEnded: _answered, ...rest } = edge;
    void _answered;
    out.edges = [{ ...rest, relation, origin: 'user', createdAt: edge.createdAt ?? now }];
  }
  if (from && to && samePerson(from, to)) {
    if (isChange && !isPast(from)) out.memoryPatches = [{ id: from.id, supersededBy: to.id }];
    if (wasChange && !isChange && from.supersededBy === to.id) out.memoryPatches = [{ id: from.id, supersededBy: null }];
  }
  return out;
}

/** A trait of the user and one of Tealeaf never change one another. */
function samePerson(a: Memory, b: Memory): boolean {
  return !(isTrait(a) && isTrait(b) && a.kind !== b.kind);
}

/** Kinds "No longer true" applies to: what says how things are (traits, notes, instructions). */
const ENDS = new Set<Memory['kind']>(['user-trait', 'assistant-trait', 'note', 'instruction']);

/**
 * What ended a memory, as far as the graph says: the newest memory it links to by a "Changed"
 * edge (any kind: "You moved to Bergen" ends "You live in Oslo"), else the newest newer memory of
 * its own kind it links to.
 */
export function changeOf(id: Id, memories: ReadonlyMap<Id, Memory>, graph: MemoryGraph): Memory | undefined {
  const m = memories.get(id);
  if (!m) return undefined;
  const out = [...graph.outgoing(id)];
  const newer = (x: Memory | undefined): x is Memory => !!x && x.id !== id && compareChronological(m, x) < 0;
  const changed = out
    .filter((e) => e.relation === 'Changed')
    .map((e) => memories.get(e.to))
    .filter(newer);
  const sameKind = out.map((e) => memories.get(e.to)).filter((x): x is Memory => newer(x) && x.kind === m.kind);
  return (changed.length ? changed : sameKind).sort(compareChronological).at(-1);
}

/** The date "No longer true" offers: that of the change it links to, else now (never before the memory). */
export function defaultEnd(id: Id, memories: ReadonlyMap<Id, Memory>, graph: MemoryGraph, now: Millis = Date.now()): Millis {
  const m = memories.get(id);
  const change = changeOf(id, memories, graph);
  return Math.max(change?.time ?? now, m?.time ?? 0);
}

/**
 * "No longer true" / "Mark current". Marking it ended records when (`endedAt`): the date the user
 * chose (`at`), else that of the change it links to, else now, never before the memory formed nor
 * after now; the change it links to becomes its replacement (`supersededBy`). Marking current clears both.
 */
export function toggleSuperseded(
  id: Id,
  memories: ReadonlyMap<Id, Memory>,
  graph: MemoryGraph,
  now: Millis = Date.now(),
  at?: Millis,
): { change?: ChangeSet; error?: string } {
  const m = memories.get(id);
  if (!m) return { error: 'That memory no longer exists.' };
  if (isPast(m)) return { change: { memoryPatches: [{ id, supersededBy: null, endedAt: null }] } };
  if (!ENDS.has(m.kind)) return { error: 'Only what says how things are (traits, notes, instructions) can be marked as no longer true.' };
  const target = changeOf(id, memories, graph);
  const endedAt = Math.max(m.time, Math.min(Math.max(now, m.time), at ?? defaultEnd(id, memories, graph, now)));
  return { change: { memoryPatches: [{ id, endedAt, ...(target ? { supersededBy: target.id } : {}) }] } };
}

/**
 * The user's answer to a change the linker was unsure of (an edge with askEnded): "no longer true"
 * retires the older memory at the newer one's time (or `at`) and makes the edge a user's Changed;
 * "still true" keeps it current, and a Changed label that said otherwise becomes SameTopic.
 */
export function answerChange(
  edge: Edge,
  ended: boolean,
  memories: ReadonlyMap<Id, Memory>,
  now: Millis = Date.now(),
  at?: Millis,
): ChangeSet | undefined {
  const older = memories.get(edge.from);
  const newer = memories.get(edge.to);
  if (!older || !newer) return undefined;
  const { askEnded: _asked, ...rest } = edge;
  void _asked;
  if (!ended) {
    const relation = edge.relation === 'Changed' ? 'SameTopic' : edge.relation;
    return { edges: [{ ...rest, relation, origin: relation === edge.relation ? edge.origin : 'user' }] };
  }
  const answer: ChangeSet = { edges: [{ ...rest, relation: 'Changed', origin: 'user' }] };
  if (isPast(older)) return answer;
  const endedAt = Math.max(older.time, Math.min(Math.max(now, older.time), at ?? newer.time));
  return { ...answer, memoryPatches: [{ id: older.id, supersededBy: newer.id, endedAt }] };
}

/** The questions open about a session's memories: changes the linker was unsure of, still unanswered. */
export interface ChangeQuestion {
  edge: Edge;
  /** The memory that may have ended. */
  older: Memory;
  /** What may have ended it. */
  newer: Memory;
}

export function changeQuestions(sessionId: Id, edges: Iterable<Edge>, memories: ReadonlyMap<Id, Memory>): ChangeQuestion[] {
  const out: ChangeQuestion[] = [];
  for (const edge of edges) {
    if (!edge.askEnded) continue;
    const older = memories.get(edge.from);
    const newer = memories.get(edge.to);
    if (!older || !newer || isPast(older)) continue;
    if (older.sessionId === sessionId || newer.sessionId === sessionId) out.push({ edge, older, newer });
  }
  return out.sort((a, b) => compareChronological(a.newer, b.newer));
}
