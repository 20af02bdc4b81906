// Derived text follows its sources. A reply stores what it drew on (`usedMemory`): the memories,
// the passages of past chats (segments), the timelines and the notes the model wrote about them
// ("refined") and the keywords of a second search it wrote after reading them ("requery"), shown
// under the reply and kept in backups. Those notes and keywords repeat what the memories said. When a memory or a passage is deleted, what was built from it goes too; when a memory is
// edited or stops being true, a note written from its old words is dropped (the memory itself is
// shown as it is now). Each turn records the memories and passages it drew on (`drewOn`, indexed
// by the store), so finding the replies built from one is a lookup.
// Pure: the store runs it inside the write's transaction (src/store/integrity.ts).
import type { BranchTurn, Id, Memory, Timeline, Turn, TurnVersion, UsedMemory } from './types';

/** Every memory and passage a stored `usedMemory` names: retrieved, in a timeline, in the persona bank, scored. */
export function usedMemoryIds(u: UsedMemory): Id[] {
  const ids = new Set<Id>([...u.memoryIds, ...u.segmentIds]);
  for (const id of u.personaIds ?? []) ids.add(id);
  for (const t of u.timelines) for (const id of t.memoryIds) ids.add(id);
  for (const s of u.scores) if (s.unitKind !== 'turn') ids.add(s.unitId);
  for (const id of u.reflectedOn ?? []) ids.add(id);
  return [...ids];
}

type Sourced = Pick<Turn, 'usedMemory' | 'versions'>;

/** The memories a turn drew on, in every version it keeps and in the turns put away below it. */
export function turnSources(t: Sourced & Pick<Turn, 'branches'>): Id[] {
  const ids = new Set<Id>();
  const visit = (x: Sourced) => {
    if (x.usedMemory) for (const id of usedMemoryIds(x.usedMemory)) ids.add(id);
    for (const v of x.versions ?? []) if (v.usedMemory) for (const id of usedMemoryIds(v.usedMemory)) ids.add(id);
  };
  visit(t);
  for (const b of t.branches ?? []) visit(b);
  return [...ids].sort();
}

/** What happened to the sources: memories or passages gone from the store, memories whose words or truth changed. */
export interface SourceChange {
  deleted: ReadonlySet<Id>;
  changed: ReadonlySet<Id>;
}

/** Whether a memory's stored words or truth differ between two versions of its record. */
export function sourceChanged(before: Memory, after: Memory): boolean {
  return before.text !== after.text || before.endedAt !== after.endedAt || before.supersededBy !== after.supersededBy;
}

/** `usedMemory` with what was built from deleted or changed memories taken out (same object if none). */
export function followSources(u: UsedMemory, c: SourceChange): UsedMemory {
  const ids = usedMemoryIds(u);
  if (!ids.some((id) => c.deleted.has(id) || c.changed.has(id))) return u;
  const keep = (id: Id) => !c.deleted.has(id);
  const timelines: Timeline[] = [];
  const refined: string[] = [];
  u.timelines.forEach((t, i) => {
    const whole = t.memoryIds.every(keep);
    // A timeline with a memory gone keeps the unbroken part around the memory it was retrieved
    // through (none, if that one is gone); its note, written with the gone memory, goes.
    const path = whole ? t : pathAround(t, keep);
    if (!path) return;
    timelines.push(path);
    // A note written from words that changed since is not true to them any more.
    const stale = !whole || t.memoryIds.some((id) => c.changed.has(id));
    refined.push(stale ? '' : (u.refined?.[i] ?? ''));
  });
  const next: UsedMemory = {
    ...u,
    memoryIds: u.memoryIds.filter(keep),
    segmentIds: u.segmentIds.filter(keep),
    timelines,
    scores: u.scores.filter((s) => s.unitKind === 'turn' || keep(s.unitId)),
  };
  if (u.refined && refined.some((n) => n !== '')) next.refined = refined;
  else delete next.refined;
  if (u.personaIds) {
    const persona = u.personaIds.filter(keep);
    if (persona.length) next.personaIds = persona;
    else delete next.personaIds;
  }
  // The re-query's keywords were written from what the reflection was shown: they go with any of
  // it; the record that a second search ran stays.
  if (u.reflectedOn?.some((id) => c.deleted.has(id) || c.changed.has(id))) return withoutKeywords(next);
  return next;
}

/** `usedMemory` without the self-reflection's keywords (and the sources they were written from). */
function withoutKeywords(u: UsedMemory): UsedMemory {
  const next = { ...u };
  delete next.requery;
  delete next.reflectedOn;
  return next;
}

/** The longest run of kept memories through `t.through`, with the relations between them. */
function pathAround(t: Timeline, keep: (id: Id) => boolean): Timeline | undefined {
  const at = t.memoryIds.indexOf(t.through);
  if (at < 0 || !keep(t.through)) return undefined;
  let lo = at;
  let hi = at;
  while (lo > 0 && keep(t.memoryIds[lo - 1]!)) lo--;
  while (hi < t.memoryIds.length - 1 && keep(t.memoryIds[hi + 1]!)) hi++;
  return { memoryIds: t.memoryIds.slice(lo, hi + 1), relations: t.relations.slice(lo, hi), through: t.through };
}

/** `x` with every version's `usedMemory` following its sources (same object if nothing changed). */
function followVersions<T extends Sourced>(x: T, c: SourceChange): T {
  const usedMemory = x.usedMemory && followSources(x.usedMemory, c);
  const versions = x.versions?.map((v): TurnVersion => {
    const u = v.usedMemory && followSources(v.usedMemory, c);
    return u === v.usedMemory ? v : { ...v, usedMemory: u };
  });
  const same = usedMemory === x.usedMemory && (versions === undefined || versions.every((v, i) => v === x.versions![i]));
  if (same) return x;
  const next: T = { ...x };
  if (usedMemory) next.usedMemory = usedMemory;
  if (versions) next.versions = versions;
  return next;
}

/** A turn with every version's derived text following its sources, in its branches too (same object if nothing changed). */
export function followTurn(t: Turn, c: SourceChange): Turn {
  const own = followVersions(t, c);
  const branches = t.branches?.map((b): BranchTurn => followVersions(b, c));
  if (own === t && (branches === undefined || branches.every((b, i) => b === t.branches![i]))) return t;
  return branches ? { ...own, branches } : own;
}

/**
 * A save of a reply still being written carries the `usedMemory` it was prepared with; the stored
 * copy may have lost parts since (a memory deleted or edited meanwhile). Both come from one
 * preparation when the turn's time is the same: keep only what the stored copy still holds, so a
 * late save cannot bring back a note that was removed.
 */
export function keepRemoved(incoming: Turn, stored: Turn | undefined): Turn {
  const a = incoming.usedMemory;
  const b = stored?.usedMemory;
  if (!a || !b || stored!.time !== incoming.time) return incoming;
  const storedIds = new Set(usedMemoryIds(b));
  const deleted = new Set(usedMemoryIds(a).filter((id) => !storedIds.has(id)));
  const key = (t: Timeline) => t.memoryIds.join('\u0000');
  const blank = new Map(b.timelines.map((t, i) => [key(t), !b.refined?.[i]] as const));
  const changed = new Set<Id>();
  a.timelines.forEach((t, i) => {
    if (a.refined?.[i] && blank.get(key(t))) for (const id of t.memoryIds) changed.add(id);
  });
  // Keywords the stored copy lost (a source of theirs changed) stay lost.
  const lostKeywords = a.requery !== undefined && b.requery === undefined && b.reflected === 'searched';
  if (deleted.size === 0 && changed.size === 0 && !lostKeywords) return incoming;
  const followed = followSources(a, { deleted, changed });
  return { ...incoming, usedMemory: lostKeywords ? withoutKeywords(followed) : followed };
}
