// Start-up repair: what the store holds is checked against itself before the graph is built, and
// whatever does not fit (left by an older version, a crash in the middle of a bug, a hand-edited
// backup) is repaired instead of stopping the app. Pure: it returns the change and a log.
import type { ChangeSet } from '../ports';
import type { Edge, Id, Job, Memory, Segment, VectorRecord } from './types';

export interface StoredState {
  memories: readonly Memory[];
  edges: readonly Edge[];
  segments: readonly Segment[];
  /** Vectors that were read (one model's); others are checked when they are read. */
  vectors: readonly VectorRecord[];
  jobs: readonly Job[];
  sessionIds: ReadonlySet<Id>;
}

export interface Repair {
  change: ChangeSet;
  /** One line per kind of problem, in words a user can read. */
  notes: string[];
  /** Records that survive, for building the live graph and index. */
  edges: Edge[];
  memories: Memory[];
  segments: Segment[];
  vectors: VectorRecord[];
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function planRepair(state: StoredState): Repair {
  const notes: string[] = [];
  const change: ChangeSet = {};
  const memoryIds = new Set(state.memories.map((m) => m.id));

  const edges = state.edges.filter((e) => memoryIds.has(e.from) && memoryIds.has(e.to));
  if (edges.length < state.edges.length) {
    change.deleteEdges = state.edges.filter((e) => !memoryIds.has(e.from) || !memoryIds.has(e.to)).map((e) => e.id);
    notes.push(`Removed ${plural(change.deleteEdges.length, 'link')} to memories that no longer exist.`);
  }

  const badSuper = state.memories.filter(
    (m) => m.supersededBy !== undefined && (m.supersededBy === m.id || !memoryIds.has(m.supersededBy)),
  );
  const memories =
    badSuper.length === 0
      ? [...state.memories]
      : state.memories.map((m) => {
          if (!badSuper.includes(m)) return m;
          const copy = { ...m };
          delete copy.supersededBy;
          return copy;
        });
  if (badSuper.length > 0) {
    change.memoryPatches = badSuper.map((m) => ({ id: m.id, supersededBy: null }));
    notes.push(`Marked ${plural(badSuper.length, 'memory', 'memories')} current again: what replaced them no longer exists.`);
  }

  const segments = state.segments.filter((s) => state.sessionIds.has(s.sessionId));
  if (segments.length < state.segments.length) {
    change.deleteSegments = state.segments.filter((s) => !state.sessionIds.has(s.sessionId)).map((s) => s.id);
    notes.push(`Removed ${plural(change.deleteSegments.length, 'passage')} of chats that no longer exist.`);
  }

  const unitIds = new Set([...memoryIds, ...segments.map((s) => s.id)]);
  const vectors = state.vectors.filter((v) => unitIds.has(v.unitId));
  if (vectors.length < state.vectors.length) {
    change.deleteVectors = state.vectors.filter((v) => !unitIds.has(v.unitId)).map((v) => [v.unitId, v.modelId] as [Id, string]);
    notes.push(`Removed ${plural(change.deleteVectors.length, 'search entry', 'search entries')} of deleted memories.`);
  }

  const orphanJobs = state.jobs.filter((j) => j.sessionId !== undefined && !state.sessionIds.has(j.sessionId));
  if (orphanJobs.length > 0) {
    change.deleteJobs = orphanJobs.map((j) => j.id);
    notes.push(`Cancelled ${plural(orphanJobs.length, 'memorising job')} of chats that no longer exist.`);
  }

  return { change, notes, edges, memories, segments, vectors };
}

/** The repair log kept in settings: the most recent repairs, newest last. */
export interface RepairLogEntry {
  at: number;
  notes: string[];
}
export const REPAIR_LOG_KEY = 'repairLog';
export const REPAIR_LOG_SIZE = 20;
