// When a memory stopped being true: a trait the user marked "no longer true" (endedAt) or one a
// newer trait replaced (supersededBy). Retrieval, the prompts and the views all ask here.
import type { Id, Memory, Millis } from './types';
import { promptDate } from './text';

export function isPast(m: Pick<Memory, 'supersededBy' | 'endedAt'>): boolean {
  return m.supersededBy !== undefined || m.endedAt !== undefined;
}

/** Until when it was true: the mark's time, else the time of the trait that replaced it. */
export function pastUntil(m: Memory, memoriesById?: ReadonlyMap<Id, Memory>): Millis | undefined {
  if (m.endedAt !== undefined) return m.endedAt;
  if (m.supersededBy === undefined) return undefined;
  return memoriesById?.get(m.supersededBy)?.time;
}

/** The words a prompt adds after a past memory ("" for a current one). */
export function pastNote(m: Memory, memoriesById?: ReadonlyMap<Id, Memory>): string {
  if (!isPast(m)) return '';
  const until = pastUntil(m, memoriesById);
  return until === undefined ? ' (no longer true: this is the past)' : ` (true until ${promptDate(until)}; no longer true)`;
}
