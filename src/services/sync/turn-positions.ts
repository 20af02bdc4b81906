// Turn positions after a merge (docs/SYNC.md, "Turn positions"). Two devices that append to one
// chat while apart both use the next index; the store keeps (session, index) unique and would
// refuse the second turn for good. Where that happens the chat's turns are numbered again, from the
// first shared position on, in the order they were said: by (time, index, id). The order is read
// from the record document, which every device ends up holding the same, so every device computes
// the same positions; the moved turns are written back into the document (the same value on every
// device, so Yjs keeps one of equal values). Nothing is dropped: every turn keeps its place in line.
import type { Id, Turn } from '../../memory/types';
import type { Repository } from '../../ports';

const byTime = (a: Turn, b: Turn) => a.time - b.time || a.index - b.index || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * New positions for a chat's turns when two share one (only the turns that move), none otherwise.
 * Pure. From the first shared index on, the turns are put in the order they were said (a device's
 * own turns keep their order: its times only grow, its index breaks a tie) and numbered densely.
 */
export function positions(turns: readonly Turn[]): Map<Id, number> {
  const seen = new Set<number>();
  let first = Infinity;
  for (const t of turns) {
    if (seen.has(t.index)) first = Math.min(first, t.index);
    seen.add(t.index);
  }
  const moved = new Map<Id, number>();
  if (first === Infinity) return moved;
  const tail = turns.filter((t) => t.index >= first).sort(byTime);
  tail.forEach((t, i) => {
    if (t.index !== first + i) moved.set(t.id, first + i);
  });
  return moved;
}

/** The part of a remote change this rule reads and amends. */
export interface TurnWrites {
  turns: Turn[];
  deleteTurns: Id[];
}

/**
 * Amends a remote change so the store can take it: where the arriving turns would share a
 * position with a stored one (or with each other), the chat is numbered again from the document's
 * turns (`inDoc`); a stored turn that moves is deleted and put again in the same change (the unique
 * index checks each put on its own, so two turns trading places would clash half-way). Returns the
 * turns to write back into the document, with their new positions.
 */
export async function placeTurns(
  change: TurnWrites,
  store: Pick<Repository, 'listTurns'>,
  inDoc: (sessionId: Id) => Turn[],
): Promise<Turn[]> {
  const back: Turn[] = [];
  for (const sessionId of new Set(change.turns.map((t) => t.sessionId))) {
    const stored = await store.listTurns(sessionId);
    const arriving = change.turns.filter((t) => t.sessionId === sessionId);
    if (!shared(stored, arriving, change.deleteTurns)) {
      deleteMoved(change, stored, arriving);
      continue;
    }
    const all = inDoc(sessionId);
    const next = positions(all);
    const renumbered = all.filter((t) => next.has(t.id)).map((t) => ({ ...t, index: next.get(t.id)! }));
    back.push(...renumbered);
    // The arriving turns with their positions, and every other turn of the chat that moved.
    const written = new Map(arriving.map((t) => [t.id, next.has(t.id) ? { ...t, index: next.get(t.id)! } : t]));
    for (const t of renumbered) written.set(t.id, t);
    change.turns = [...change.turns.filter((t) => t.sessionId !== sessionId), ...written.values()];
    deleteMoved(change, stored, [...written.values()]);
  }
  return back;
}

/** Whether the store, after the change, would hold two turns of the chat at one position. */
function shared(stored: readonly Turn[], arriving: readonly Turn[], deleted: readonly Id[]): boolean {
  const at = new Map<number, Id>();
  const replaced = new Set([...deleted, ...arriving.map((t) => t.id)]);
  for (const t of stored) if (!replaced.has(t.id)) at.set(t.index, t.id);
  for (const t of arriving) {
    const other = at.get(t.index);
    if (other !== undefined && other !== t.id) return true;
    at.set(t.index, t.id);
  }
  return false;
}

/** A stored turn written at another position is deleted first (deletes run before puts). */
function deleteMoved(change: TurnWrites, stored: readonly Turn[], written: readonly Turn[]): void {
  const was = new Map(stored.map((t) => [t.id, t.index]));
  for (const t of written) {
    const before = was.get(t.id);
    if (before !== undefined && before !== t.index && !change.deleteTurns.includes(t.id)) change.deleteTurns.push(t.id);
  }
}
