// When a memory stopped being true: a trait the user marked "no longer true" (endedAt) or one a
// newer trait replaced (supersededBy). The one rule for "true now": retrieval, every builder of
// model input (persona bank, timelines, memory lists, refinement, relation labelling, TeaFarm)
// and the views all ask here, and a past memory goes to a model with its dates (pastNote).
import type { Id, Memory, Millis } from './types';
import { promptDate } from './text';

export function isPast(m: Pick<Memory, 'supersededBy' | 'endedAt'>): boolean {
  return m.supersededBy !== undefined || m.endedAt !== undefined;
}

/** Finds a memory by id: the live map, or a store's lookup. */
export type MemoryLookup = ReadonlyMap<Id, Memory> | ((id: Id) => Memory | undefined);

/** Until when it was true: the mark's time, else the time of the trait that replaced it. */
export function pastUntil(m: Memory, memoriesById?: MemoryLookup): Millis | undefined {
  if (m.endedAt !== undefined) return m.endedAt;
  if (m.supersededBy === undefined) return undefined;
  const replacement = typeof memoriesById === 'function' ? memoriesById(m.supersededBy) : memoriesById?.get(m.supersededBy);
  return replacement?.time;
}

/** The words a prompt adds after a past memory ("" for a current one). */
export function pastNote(m: Memory, memoriesById?: MemoryLookup): string {
  if (!isPast(m)) return '';
  const until = pastUntil(m, memoriesById);
  return until === undefined ? ' (no longer true: this is the past)' : ` (true until ${promptDate(until)}; no longer true)`;
}
