// The store's part of forgetting: inside the write's own transaction, forgotten marks
// are applied to the turns as stored (src/memory/forget/lines.ts), every passage holding a line
// whose mark came or went is rebuilt from its lines as they are now (its stale vectors deleted),
// and a job cannot write a memory made only from forgotten lines. Whatever wrote the change (a
// forget, its undo, a memorise job, another device through sync), no passage holds a forgotten line.
import type { ChangeSet } from '../ports';
import type { Id, Memory, Segment, Turn } from '../memory/types';
import { isForgotten, patchTurn, rebuildSegment } from '../memory/forget/lines';

export interface LinesReader {
  turn(id: Id): Promise<Turn | undefined>;
  /** The passages holding a turn (the segments store's `byTurn` index). */
  segmentsOfTurn(turnId: Id): Promise<Segment[]>;
  vectorKeysOf(unitId: Id): Promise<Array<[Id, string]>>;
}

/**
 * The change's turns with its `turnPatches` applied (to its own turns, else to the stored ones).
 * A local write of a whole turn (a reply saved from the copy the chat holds) carries the stored
 * mark, not its copy's: a forget or an undo landing meanwhile is not written over. `remote`:
 * another device's records, taken as they are (its forget or undo).
 */
export async function patchedTurns(input: ChangeSet, reader: LinesReader, dropped: string[], remote = false): Promise<Turn[]> {
  const given = input.turns ?? [];
  const stored = remote ? [] : await Promise.all(given.map((t) => reader.turn(t.id)));
  const turns = new Map(given.map((t, i) => [t.id, stored[i] ? withMark(t, stored[i].forgotten) : t]));
  const deleted = new Set(input.deleteTurns ?? []);
  for (const p of input.turnPatches ?? []) {
    const base = turns.get(p.id) ?? (deleted.has(p.id) ? undefined : await reader.turn(p.id));
    if (!base) {
      dropped.push(`turn ${p.id}: marked after it was deleted`);
      continue;
    }
    const next = patchTurn(base, p);
    if (next !== base || turns.has(p.id)) turns.set(p.id, next);
  }
  return [...turns.values()];
}

function withMark(t: Turn, mark: Turn['forgotten']): Turn {
  if (
    t.forgotten === mark ||
    (t.forgotten && mark && t.forgotten.at === mark.at && t.forgotten.by.join('\u0000') === mark.by.join('\u0000'))
  )
    return t;
  const next = { ...t };
  if (mark) next.forgotten = mark;
  else delete next.forgotten;
  return next;
}

/** Whether a job's new memory comes only from lines the user forgot (it is not written). */
export async function madeFromForgotten(m: Memory, turns: readonly Turn[], reader: LinesReader): Promise<boolean> {
  if (m.sourceTurnIds.length === 0) return false;
  const given = new Map(turns.map((t) => [t.id, t]));
  for (const id of m.sourceTurnIds) if (!isForgotten(given.get(id) ?? (await reader.turn(id)))) return false;
  return true;
}

/**
 * The passages to write: those of the change, and every stored passage holding a line whose mark
 * this change sets or clears, rebuilt from their lines as they will be; with the vectors of those
 * whose words changed (made from the old words), unless the change brings their vectors itself.
 */
export async function followLines(
  turns: readonly Turn[],
  segments: readonly Segment[],
  reader: LinesReader,
  gone: { turns: ReadonlySet<Id>; segments: ReadonlySet<Id> },
  vectorsGiven: ReadonlySet<Id>,
): Promise<{ segments: Segment[]; deleteVectors: Array<[Id, string]> }> {
  const written = new Map(turns.map((t) => [t.id, t]));
  const turnAfter = async (id: Id) => written.get(id) ?? (gone.turns.has(id) ? undefined : await reader.turn(id));
  const out = new Map(segments.map((s) => [s.id, s]));
  const check = new Map(segments.map((s) => [s.id, s]));
  const before = await Promise.all(turns.map((t) => reader.turn(t.id)));
  for (const [i, t] of turns.entries()) {
    if (isForgotten(t) === isForgotten(before[i])) continue;
    for (const s of await reader.segmentsOfTurn(t.id)) if (!out.has(s.id) && !gone.segments.has(s.id)) check.set(s.id, s);
  }
  const deleteVectors: Array<[Id, string]> = [];
  for (const s of check.values()) {
    const run = new Map<Id, Turn>();
    for (const id of s.turnIds) {
      const t = await turnAfter(id);
      if (t) run.set(id, t);
    }
    // A passage written by this change (a job's, another device's) is rebuilt only where it holds a forgotten line.
    if (out.has(s.id) && ![...run.values()].some(isForgotten)) continue;
    const next = rebuildSegment(s, run);
    if (next === s) continue;
    out.set(s.id, next);
    if (!vectorsGiven.has(s.id)) deleteVectors.push(...(await reader.vectorKeysOf(s.id)));
  }
  return { segments: [...out.values()], deleteVectors };
}
