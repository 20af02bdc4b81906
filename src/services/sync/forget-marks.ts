// Forgotten marks that no write of a turn can clear (docs/SYNC.md, "The rules across devices").
// A turn syncs as one whole record and Yjs keeps one device's record, so a mark kept only inside it
// is lost to any other write of the same turn (a reply another device finished streaming offline,
// a write from a store that had not heard of the forget yet). So each mark, one per turn and
// memory, is also an entry of its own in the epoch's `forgotten` map, written only by a forget or
// its undo; the turn a store receives is its record with every entry laid over the mark it holds.
// The record still carries the mark as before, for devices of the previous version.
import type * as Y from 'yjs';
import type { AppliedChange } from '../../ports';
import type { Id, Millis, Turn } from '../../memory/types';
import { isValidTime } from '../../memory/limits';
import { withForgotten } from '../../memory/forget/lines';
import { BACKUP_LIMITS } from '../../store/backup-format';

/** A line forgotten for a memory (`by`) at `at`, or that forget undone (`undone`, `at` then the undo's time). */
export interface MarkEntry {
  turn: Id;
  by: Id;
  at: Millis;
  undone?: true;
}

export const markKey = (turn: Id, by: Id): string => JSON.stringify([turn, by]);

/** The turn a key is about, or undefined for a key this version did not write. */
export function turnOfKey(key: string): Id | undefined {
  try {
    const k: unknown = JSON.parse(key);
    return Array.isArray(k) && k.length === 2 && typeof k[0] === 'string' && typeof k[1] === 'string' ? k[0] : undefined;
  } catch {
    return undefined;
  }
}

const isId = (x: unknown): x is Id => typeof x === 'string' && x.length > 0 && x.length <= BACKUP_LIMITS.maxId;

/** Another device's entry is hostile input like its records: one out of shape, or filed under another key, counts for nothing. */
function isEntry(key: string, v: unknown): v is MarkEntry {
  const e = v as Partial<MarkEntry> | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    isId(e.turn) &&
    isId(e.by) &&
    typeof e.at === 'number' &&
    isValidTime(e.at) &&
    (e.undone === undefined || e.undone === true) &&
    key === markKey(e.turn, e.by)
  );
}

/** The well-formed entries, by turn (values read as unknown: another device wrote them); of the turns `only`, if given. */
export function marksByTurn(map: { entries(): IterableIterator<[string, unknown]> }, only?: ReadonlySet<Id>): Map<Id, MarkEntry[]> {
  const out = new Map<Id, MarkEntry[]>();
  for (const [key, v] of map.entries()) {
    if (only && !only.has((v as Partial<MarkEntry> | null)?.turn as Id)) continue;
    if (!isEntry(key, v)) continue;
    const list = out.get(v.turn);
    if (list) list.push(v);
    else out.set(v.turn, [v]);
  }
  return out;
}

/**
 * The turn with its mark as the entries decide: a memory with an entry is forgotten or not as the
 * entry says; one without (a mark written by the previous version) as the record says. The same
 * object when nothing changes. Every device reads the same document the same way.
 */
export function withMarks(t: Turn, entries: readonly MarkEntry[] | undefined): Turn {
  if (!entries || entries.length === 0) return t;
  const decided = new Set(entries.map((e) => e.by));
  const by = new Set((t.forgotten?.by ?? []).filter((id) => !decided.has(id)));
  // When: the earliest, as a store keeps its first mark's time while later marks come and go.
  let at = t.forgotten?.at ?? Infinity;
  for (const e of entries) {
    if (e.undone) continue;
    by.add(e.by);
    at = Math.min(at, e.at);
  }
  return withForgotten(t, by, at);
}

/**
 * The entries of a local write. A forget or an undo the write applied (its `marks`) sets its
 * entries. A mark a whole turn carries sets one only where there is none yet (a store adopted, a
 * backup imported, a mark read from the previous version): a turn written from a store that is
 * behind the document must neither clear a forget nor undo an undo.
 */
export function recordMarks(map: Y.Map<MarkEntry>, applied: AppliedChange, now = Date.now()): void {
  for (const p of applied.marks ?? []) {
    for (const by of p.forget?.by ?? []) map.set(markKey(p.id, by), { turn: p.id, by, at: p.forget!.at });
    for (const by of p.unforget ?? []) map.set(markKey(p.id, by), { turn: p.id, by, at: now, undone: true });
  }
  for (const t of applied.turns ?? []) {
    for (const by of t.forgotten?.by ?? []) {
      if (!map.has(markKey(t.id, by))) map.set(markKey(t.id, by), { turn: t.id, by, at: t.forgotten!.at });
    }
  }
  // A deleted turn takes its entries (the store holds no mark for it any more either).
  const put = new Set((applied.turns ?? []).map((t) => t.id));
  const gone = new Set((applied.deleteTurns ?? []).filter((id) => !put.has(id)));
  if (gone.size === 0) return;
  for (const key of [...map.keys()]) {
    const turn = turnOfKey(key);
    if (turn !== undefined && gone.has(turn)) map.delete(key);
  }
}
