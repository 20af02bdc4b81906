// The one writer rule: every change is settled against the store as it is inside the write's own
// transaction before anything is written. Both repositories (IndexedDB and the in-memory one used
// by tests and benchmarks) run every `apply` through `settle`, so no caller (a job step, a user
// correction, an undo, a LoCoMo import, a new kind of write) can leave a reference to a missing
// record. A backup import is the one bulk write that does not go through `apply`: it checks every
// reference of the file against the store in its own transaction and refuses the whole file
// (checkImportReferences in backup.ts) rather than dropping records. Delete-all clears every store.
// Pure: it reads through a StoreReader and returns the change to write.
import type { AppliedChange, ChangeSet, MemoryPatch } from '../ports';
import { JobGoneError } from '../ports';
import type { Id, Job, Memory, Segment, Tombstone, Turn } from '../memory/types';
import { fitMemory, fitSegment, fitSession, fitTurn } from './fit';
import { isSelfLink } from '../memory/limits';
import { followTurn, keepRemoved, sourceChanged, turnSources } from '../memory/derived';
import { followLines, madeFromForgotten, patchedTurns } from './forgotten-lines';

/** Reads of the store as it is inside the write's transaction. */
export interface StoreReader {
  memory(id: Id): Promise<Memory | undefined>;
  hasSession(id: Id): Promise<boolean>;
  hasSegment(id: Id): Promise<boolean>;
  job(id: Id): Promise<Job | undefined>;
  /** Ids of edges from or to a memory. */
  edgesTouching(memoryId: Id): Promise<Id[]>;
  /** [unitId, modelId] keys of a unit's vectors, whatever model made them. */
  vectorKeysOf(unitId: Id): Promise<Array<[Id, string]>>;
  /** Memories whose supersededBy is `id`. */
  supersededBy(id: Id): Promise<Memory[]>;
  turn(id: Id): Promise<Turn | undefined>;
  /** Turns whose `drewOn` names the memory (the replies built from it). */
  turnsDrewOn(memoryId: Id): Promise<Turn[]>;
  /** Whether the user deleted this record (src/memory/types.ts, Tombstone). */
  tombstone(kind: Tombstone['kind'], id: Id): Promise<boolean>;
  /** The passages holding a turn (its forgotten mark changing rebuilds them: forgotten-lines.ts). */
  segmentsOfTurn(turnId: Id): Promise<Segment[]>;
}

/** Memoised existence checks over "the store after this change". */
class After {
  private readonly memories = new Map<Id, Promise<boolean>>();
  private readonly sessions = new Map<Id, Promise<boolean>>();
  private readonly segments = new Map<Id, Promise<boolean>>();

  constructor(
    private readonly reader: StoreReader,
    private readonly change: ChangeSet,
    readonly puts: { memories: Set<Id>; sessions: Set<Id>; segments: Set<Id> },
    readonly deleted: { memories: Set<Id>; sessions: Set<Id>; segments: Set<Id> },
  ) {}

  private check(
    cache: Map<Id, Promise<boolean>>,
    id: Id,
    put: Set<Id>,
    gone: Set<Id>,
    read: (id: Id) => Promise<boolean>,
  ): Promise<boolean> {
    if (put.has(id)) return Promise.resolve(true);
    if (gone.has(id)) return Promise.resolve(false);
    let p = cache.get(id);
    if (!p) {
      p = read(id);
      cache.set(id, p);
    }
    return p;
  }

  memory(id: Id): Promise<boolean> {
    return this.check(
      this.memories,
      id,
      this.puts.memories,
      this.deleted.memories,
      async (x) => (await this.reader.memory(x)) !== undefined,
    );
  }

  session(id: Id): Promise<boolean> {
    return this.check(this.sessions, id, this.puts.sessions, this.deleted.sessions, (x) => this.reader.hasSession(x));
  }

  segment(id: Id): Promise<boolean> {
    return this.check(this.segments, id, this.puts.segments, this.deleted.segments, (x) => this.reader.hasSegment(x));
  }

  /** A unit of the retrieval index: a memory or a segment. */
  async unit(id: Id): Promise<boolean> {
    return (await this.memory(id)) || (await this.segment(id));
  }

  get source(): ChangeSet {
    return this.change;
  }
}

function applyPatch(base: Memory, patch: MemoryPatch): Memory {
  const next: Memory = { ...base };
  if (patch.text !== undefined) next.text = patch.text;
  if (patch.edited !== undefined) next.edited = patch.edited;
  if (patch.kind !== undefined) next.kind = patch.kind;
  if (patch.subject !== undefined) next.subject = patch.subject;
  if (patch.context === null) delete next.context;
  else if (patch.context !== undefined) next.context = patch.context;
  if (patch.supersededBy === null) delete next.supersededBy;
  else if (patch.supersededBy !== undefined) next.supersededBy = patch.supersededBy;
  if (patch.endedAt === null) delete next.endedAt;
  else if (patch.endedAt !== undefined) next.endedAt = patch.endedAt;
  return next;
}

const vectorKeyText = (k: readonly [Id, string]) => `${k[0]}\u0000${k[1]}`;

/**
 * The change as it will be written: cascades added, patches resolved against the stored records,
 * and every record whose references do not resolve left out (each named in `dropped`).
 * Throws JobGoneError when `expectJob` does not hold: then nothing at all may be written.
 */
export async function settle(input: ChangeSet, given: StoreReader, { remote = false }: { remote?: boolean } = {}): Promise<AppliedChange> {
  const dropped: string[] = [];
  // Turns are read by several rules below: each once.
  const turnReads = new Map<Id, Promise<Turn | undefined>>();
  const reader: StoreReader = {
    ...given,
    turn: (id) => {
      let read = turnReads.get(id);
      if (!read) turnReads.set(id, (read = given.turn(id)));
      return read;
    },
  };
  if (input.expectJob) {
    const job = await reader.job(input.expectJob.id);
    if (!job || job.updatedAt !== input.expectJob.updatedAt) throw new JobGoneError(input.expectJob.id);
  }

  // Cascades of deletion: a deleted memory takes its edges and vectors along, and memories it had
  // superseded become current again; a deleted segment takes its vectors.
  // A record deleted and put again in one change is replaced, not deleted: no cascade for it.
  const rePut = new Set([...(input.memories ?? []).map((m) => m.id), ...(input.segments ?? []).map((s) => s.id)]);
  const deleteMemories = new Set((input.deleteMemories ?? []).filter((id) => !rePut.has(id)));
  const deleteSegments = new Set((input.deleteSegments ?? []).filter((id) => !rePut.has(id)));
  const deleteSessions = new Set(input.deleteSessions ?? []);
  const deleteEdges = new Set(input.deleteEdges ?? []);
  const deleteVectors = new Map((input.deleteVectors ?? []).map((k) => [vectorKeyText(k), k] as const));
  const cascadePatches: MemoryPatch[] = [];
  for (const id of deleteMemories) {
    const [edges, vectors, superseded] = await Promise.all([reader.edgesTouching(id), reader.vectorKeysOf(id), reader.supersededBy(id)]);
    for (const e of edges) deleteEdges.add(e);
    for (const k of vectors) deleteVectors.set(vectorKeyText(k), k);
    for (const m of superseded) if (!deleteMemories.has(m.id)) cascadePatches.push({ id: m.id, supersededBy: null });
  }
  for (const id of deleteSegments) for (const k of await reader.vectorKeysOf(id)) deleteVectors.set(vectorKeyText(k), k);

  const stored = new Map<Id, Memory | undefined>();
  const storedMemory = async (id: Id) => {
    if (!stored.has(id)) stored.set(id, await reader.memory(id));
    return stored.get(id);
  };
  // Forgotten marks are applied to the turns as stored now; a local write of a whole turn keeps the
  // stored mark (only a forget or its undo changes it here; another device's record is taken as is).
  const givenTurns = await patchedTurns(input, reader, dropped, remote);
  const memoryPuts = new Map<Id, Memory>();
  for (const m of input.memories ?? []) {
    // A job makes memories; it never undoes what the user did to one (a memorise job run again,
    // e.g. for a chat imported again, makes the same memory ids).
    if (input.expectJob) {
      const before = await storedMemory(m.id);
      if (before && (before.edited || before.endedAt !== undefined)) {
        dropped.push(`memory ${m.id}: the user changed it, kept as the user left it`);
        continue;
      }
      if (!before && (await reader.tombstone('memory', m.id))) {
        dropped.push(`memory ${m.id}: the user deleted it`);
        continue;
      }
      if (!before && (await madeFromForgotten(m, givenTurns, reader))) {
        dropped.push(`memory ${m.id}: made from lines the user forgot`);
        continue;
      }
    }
    memoryPuts.set(m.id, fitMemory(m));
  }
  const after = new After(
    reader,
    input,
    {
      memories: new Set(memoryPuts.keys()),
      sessions: new Set((input.sessions ?? []).map((s) => s.id)),
      segments: new Set((input.segments ?? []).map((s) => s.id)),
    },
    { memories: deleteMemories, sessions: deleteSessions, segments: deleteSegments },
  );

  // Patches apply to the record as stored now (or as put by this same change); a patch for a
  // memory that is gone is dropped rather than resurrecting it.
  for (const patch of [...cascadePatches, ...(input.memoryPatches ?? [])]) {
    const base = memoryPuts.get(patch.id) ?? (deleteMemories.has(patch.id) ? undefined : await storedMemory(patch.id));
    if (!base) {
      dropped.push(`memory ${patch.id}: changed after it was deleted`);
      continue;
    }
    memoryPuts.set(patch.id, fitMemory(applyPatch(base, patch)));
    after.puts.memories.add(patch.id);
  }

  const memories: Memory[] = [];
  for (const m of memoryPuts.values()) {
    if (m.supersededBy !== undefined && (m.supersededBy === m.id || !(await after.memory(m.supersededBy)))) {
      dropped.push(`memory ${m.id}: superseded by ${m.supersededBy}, which is gone`);
      const copy = { ...m };
      delete copy.supersededBy;
      memories.push(copy);
    } else memories.push(m);
  }

  const edges = [];
  for (const e of input.edges ?? []) {
    if (isSelfLink(e)) dropped.push(`edge ${e.id}: links a memory to itself`);
    else if (!(await after.memory(e.from)) || !(await after.memory(e.to))) dropped.push(`edge ${e.id}: an end is gone`);
    else edges.push(e);
  }

  const vectors = [];
  for (const v of input.vectors ?? []) {
    if (await after.unit(v.unitId)) vectors.push(v);
    else dropped.push(`vector of ${v.unitId}: the memory or segment is gone`);
  }
  const segments = [];
  for (const s of input.segments ?? []) {
    if (await after.session(s.sessionId)) segments.push(fitSegment(s));
    else dropped.push(`segment ${s.id}: session ${s.sessionId} is gone`);
  }
  const turns = await followingSources(input, givenTurns, reader, after, memories, storedMemory, dropped);
  const lines = await followLines(
    turns,
    segments,
    reader,
    { turns: new Set(input.deleteTurns ?? []), segments: deleteSegments },
    new Set(vectors.map((v) => v.unitId)),
  );
  for (const k of lines.deleteVectors) deleteVectors.set(vectorKeyText(k), k);
  const jobs = [];
  for (const j of input.jobs ?? []) {
    if (j.sessionId === undefined || (await after.session(j.sessionId))) jobs.push(j);
    else dropped.push(`job ${j.id}: session ${j.sessionId} is gone`);
  }

  const out: AppliedChange = { dropped };
  const put = <K extends keyof ChangeSet>(key: K, value: ChangeSet[K] & unknown[]) => {
    if (value.length > 0) out[key] = value as AppliedChange[K];
  };
  put('sessions', (input.sessions ?? []).map(fitSession));
  put('turns', turns);
  put('memories', memories);
  put('edges', edges);
  put('segments', lines.segments);
  put('vectors', vectors);
  put('jobs', jobs);
  put('deleteSessions', [...deleteSessions]);
  put('deleteTurns', input.deleteTurns ?? []);
  put('deleteMemories', input.deleteMemories ?? []);
  put('deleteEdges', [...deleteEdges]);
  put('deleteSegments', input.deleteSegments ?? []);
  put('deleteVectors', [...deleteVectors.values()]);
  put('deleteJobs', input.deleteJobs ?? []);
  put('tombstones', input.tombstones ?? []);
  put('deleteTombstones', input.deleteTombstones ?? []);
  const written = new Set(turns.map((t) => t.id));
  const marks = (input.turnPatches ?? []).filter((p) => written.has(p.id));
  if (marks.length > 0) out.marks = marks;
  return out;
}

/**
 * The turns to write: those of the change, and every stored reply built from a memory or passage
 * this change deletes or changes, with what was built from it taken out (src/memory/derived.ts). Each keeps
 * `drewOn` in step with its `usedMemory`; a turn naming a memory that is gone loses it.
 */
async function followingSources(
  input: ChangeSet,
  givenTurns: readonly Turn[],
  reader: StoreReader,
  after: After,
  memories: readonly Memory[],
  storedMemory: (id: Id) => Promise<Memory | undefined>,
  dropped: string[],
): Promise<Turn[]> {
  const changed = new Set<Id>();
  for (const m of memories) {
    const before = await storedMemory(m.id);
    if (before && sourceChanged(before, m)) changed.add(m.id);
  }
  const deletedTurns = new Set(input.deleteTurns ?? []);
  const out = new Map<Id, { turn: Turn; own: boolean }>();
  for (const id of [...after.deleted.memories, ...after.deleted.segments, ...changed]) {
    for (const t of await reader.turnsDrewOn(id)) if (!deletedTurns.has(t.id)) out.set(t.id, { turn: t, own: false });
  }
  for (const given of givenTurns) {
    const t = fitTurn(given);
    if (await after.session(t.sessionId)) out.set(t.id, { turn: t.usedMemory ? keepRemoved(t, await reader.turn(t.id)) : t, own: true });
    else dropped.push(`turn ${t.id}: session ${t.sessionId} is gone`);
  }
  const turns: Turn[] = [];
  for (const { turn, own } of out.values()) {
    if (!own && (after.deleted.sessions.has(turn.sessionId) || !(await after.session(turn.sessionId)))) continue;
    const sources = turnSources(turn);
    const deleted = new Set<Id>();
    for (const id of sources) if (!(await after.unit(id))) deleted.add(id);
    const next = followTurn(turn, { deleted, changed });
    if (!own && next === turn) continue;
    const drewOn = next === turn ? sources : turnSources(next);
    const written: Turn = { ...next };
    if (drewOn.length > 0) written.drewOn = drewOn;
    else delete written.drewOn;
    turns.push(written);
  }
  return turns;
}

/**
 * A structured-clonable copy of a change. Values handed in may be reactive proxies of the UI
 * (IndexedDB cannot clone a Proxy: "could not be cloned"); typed arrays are kept as they are.
 */
export function plainCopy<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (ArrayBuffer.isView(value)) return value;
  if (Array.isArray(value)) return value.map((v: unknown) => plainCopy(v)) as T;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = plainCopy(v);
  }
  return out as T;
}
