// The Repository port (src/ports.ts) over IndexedDB, plus the queries the UI needs.
import type { StoreKey, StoreValue } from 'idb';
import type { AppliedChange, ChangeSet, LineReads, Repository } from '../ports';
import type { Edge, Id, Job, JobStatus, Memory, Segment, Session, Tombstone, Turn, VectorRecord } from '../memory/types';
import { openTealeafDb } from './db';
import type { OpenTealeafDbOptions, TealeafDb } from './db';
import { isStorageFullError } from './errors';
import { plainCopy, settle, type StoreReader } from './integrity';
import { STORE_NAMES } from './schema';
import { putSyncRows, type SyncRows } from './sync-store';
import { runWrite, tracked, type WriteTx } from './write-transaction';
import type { StoreName, TealeafSchema, VectorPack } from './schema';

/** Puts and deletes per store, in the order ChangeSet names them. */
interface StoreChanges<S extends StoreName> {
  store: S;
  puts?: readonly StoreValue<TealeafSchema, S>[];
  deletes?: readonly StoreKey<TealeafSchema, S>[];
}
type AnyStoreChanges = { [S in StoreName]: StoreChanges<S> }[StoreName];

function changesOf(change: ChangeSet): AnyStoreChanges[] {
  const all: AnyStoreChanges[] = [
    { store: 'sessions', puts: change.sessions, deletes: change.deleteSessions },
    { store: 'turns', puts: change.turns, deletes: change.deleteTurns },
    { store: 'memories', puts: change.memories, deletes: change.deleteMemories },
    { store: 'edges', puts: change.edges, deletes: change.deleteEdges },
    { store: 'segments', puts: change.segments, deletes: change.deleteSegments },
    { store: 'vectors', puts: change.vectors, deletes: change.deleteVectors },
    { store: 'jobs', puts: change.jobs, deletes: change.deleteJobs },
    { store: 'tombstones', puts: change.tombstones, deletes: change.deleteTombstones },
  ];
  return all.filter((c) => (c.puts?.length ?? 0) + (c.deletes?.length ?? 0) > 0);
}

function queueDeletes<S extends StoreName>(tx: WriteTx, c: StoreChanges<S>, out: Promise<unknown>[]): void {
  const store = tx.objectStore(c.store);
  for (const key of c.deletes ?? []) out.push(tracked(store.delete(key)));
}

function queuePuts<S extends StoreName>(tx: WriteTx, c: StoreChanges<S>, out: Promise<unknown>[]): void {
  const store = tx.objectStore(c.store);
  for (const value of c.puts ?? []) out.push(tracked(store.put(value)));
}

export class IdbRepository implements Repository, LineReads {
  /** Whether the last write was refused for a full disk (cleared by the next write that lands). */
  private full = false;
  private readonly storageListeners = new Set<(full: boolean) => void>();

  constructor(readonly db: TealeafDb) {}

  /**
   * Hears when writes start being refused for a full disk (true) and when one lands again
   * (false): a full disk is a state the app shows, not a crash. Returns the unsubscribe.
   */
  onStorage(listener: (full: boolean) => void): () => void {
    this.storageListeners.add(listener);
    return () => this.storageListeners.delete(listener);
  }

  /** Every write of this repository: one transaction (runWrite), its outcome told to onStorage. */
  private async write<T>(stores: ReadonlyArray<StoreName | 'sync'>, write: (tx: WriteTx) => Promise<T>): Promise<T> {
    try {
      const result = await runWrite(this.db, stores, write);
      this.setFull(false);
      return result;
    } catch (e) {
      if (isStorageFullError(e)) this.setFull(true);
      throw e;
    }
  }

  private setFull(full: boolean): void {
    if (this.full === full) return;
    this.full = full;
    for (const listener of this.storageListeners) listener(full);
  }

  /** Sync's hook: sees every local write as settled and returns the rows to keep with it (kept only while sync is on). */
  syncHook: ((applied: AppliedChange) => SyncRows | undefined) | undefined;
  /** Told once a write that queued sync rows has committed (the loop reads them only then). */
  afterSyncQueued: (() => void) | undefined;

  static async open(options?: OpenTealeafDbOptions): Promise<IdbRepository> {
    return new IdbRepository(await openTealeafDb(options));
  }

  close(): void {
    this.db.close();
  }

  /**
   * One transaction; inside it the change is settled against the store as it is (integrity.ts)
   * and then written, deletes before puts. Returns what was written.
   */
  async apply(input: ChangeSet, opts: { remote?: boolean; rows?: SyncRows } = {}): Promise<AppliedChange> {
    const request = plainCopy(input);
    let queued = false;
    const applied = await this.write(DATA_STORES, async (tx) => {
      const change = await settle(request, idbReader(tx), { remote: opts.remote === true || opts.rows !== undefined });
      // Sync: a local write's record-document update is kept in this same transaction;
      // a remote one brings its own rows (the cursor with the records it brought).
      // Whether sync is on is read here, in the write's own transaction: a tab that has not heard
      // that another tab turned sync on still queues what it writes.
      const local = opts.rows || opts.remote ? undefined : this.syncHook?.(change);
      const rows = opts.rows ?? (local && (await tx.objectStore('sync').count('config')) > 0 ? local : undefined);
      if (rows) await putSyncRows(tx.objectStore('sync'), rows);
      queued = rows !== undefined && rows === local;
      const parts = changesOf(change);
      // A model whose vectors change loses its packs in the same transaction (they are derived).
      const staleModels = new Set([...(change.vectors ?? []).map((v) => v.modelId), ...(change.deleteVectors ?? []).map((k) => k[1])]);
      const requests: Promise<unknown>[] = [];
      for (const m of staleModels) requests.push(tracked(tx.objectStore('vectorPacks').delete(packRange(m))));
      for (const p of parts) queueDeletes(tx, p as StoreChanges<StoreName>, requests);
      for (const p of parts) queuePuts(tx, p as StoreChanges<StoreName>, requests);
      await Promise.all(requests);
      return change;
    });
    if (queued) this.afterSyncQueued?.();
    return applied;
  }

  getSession(id: Id): Promise<Session | undefined> {
    return this.db.get('sessions', id);
  }

  /** Oldest first (by start time). */
  listSessions(): Promise<Session[]> {
    return this.db.getAllFromIndex('sessions', 'byStartedAt');
  }

  /** Newest first, for the session list; `limit` keeps the first screen cheap. */
  async listSessionsNewestFirst(limit = Infinity): Promise<Session[]> {
    const out: Session[] = [];
    let cursor = await this.db.transaction('sessions').store.index('byStartedAt').openCursor(null, 'prev');
    while (cursor && out.length < limit) {
      out.push(cursor.value);
      cursor = await cursor.continue();
    }
    return out;
  }

  listSessionsByStatus(status: Session['status']): Promise<Session[]> {
    return this.db.getAllFromIndex('sessions', 'byStatus', status);
  }

  /** A session's turns ordered by index. */
  listTurns(sessionId: Id): Promise<Turn[]> {
    return this.db.getAllFromIndex('turns', 'bySessionIndex', sessionRange(sessionId));
  }

  /** In the order of `ids`; missing ids are left out. */
  async getTurns(ids: Id[]): Promise<Turn[]> {
    const store = this.db.transaction('turns').store;
    const found = await Promise.all(ids.map((id) => store.get(id)));
    return found.filter((t): t is Turn => t !== undefined);
  }

  getMemory(id: Id): Promise<Memory | undefined> {
    return this.db.get('memories', id);
  }

  /** Oldest first (by memory time). */
  /** By time. Read by primary key and sorted here: reading through the time index is ~1.7x slower. */
  async listMemories(): Promise<Memory[]> {
    const all = await this.readAll('memories');
    return all.sort((a, b) => a.time - b.time || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  listMemoriesBySession(sessionId: Id): Promise<Memory[]> {
    return this.db.getAllFromIndex('memories', 'bySession', sessionId);
  }

  listEdges(): Promise<Edge[]> {
    return this.readAll('edges');
  }

  /**
   * Every record of a store keyed by `id`, read in pages inside one transaction (one consistent
   * snapshot): each page is deserialised in a task of its own, so 100k records never freeze the page.
   */
  private async readAll<S extends 'memories' | 'edges' | 'segments'>(name: S, page = 2000): Promise<StoreValue<TealeafSchema, S>[]> {
    const store = this.db.transaction(name).store;
    const out: StoreValue<TealeafSchema, S>[] = [];
    let after: IDBKeyRange | undefined;
    for (;;) {
      const batch = await store.getAll(after, page);
      for (const r of batch) out.push(r);
      if (batch.length < page) return out;
      after = IDBKeyRange.lowerBound(batch[batch.length - 1]!.id, true);
    }
  }

  /** Edges from or to a memory, each once (a self-loop matches both indexes). */
  async listEdgesTouching(memoryId: Id): Promise<Edge[]> {
    const tx = this.db.transaction('edges');
    const [from, to] = await Promise.all([tx.store.index('byFrom').getAll(memoryId), tx.store.index('byTo').getAll(memoryId)]);
    const byId = new Map<Id, Edge>();
    for (const e of [...from, ...to]) byId.set(e.id, e);
    return [...byId.values()];
  }

  /** Oldest first (by segment time). */
  async listSegments(): Promise<Segment[]> {
    const all = await this.readAll('segments');
    return all.sort((a, b) => a.time - b.time || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  listSegmentsBySession(sessionId: Id): Promise<Segment[]> {
    return this.db.getAllFromIndex('segments', 'bySession', sessionId);
  }

  /** The passages holding a turn (LineReads). */
  listSegmentsOfTurn(turnId: Id): Promise<Segment[]> {
    return this.db.getAllFromIndex('segments', 'byTurn', turnId);
  }

  /** The replies whose `usedMemory` names a memory or passage (LineReads). */
  listTurnsDrewOn(id: Id): Promise<Turn[]> {
    return this.db.getAllFromIndex('turns', 'byDrewOn', id);
  }

  /**
   * A model's vectors, from its packs when they are current; otherwise read one by one and
   * repacked in the same transaction (so no write can slip in between).
   */
  async listVectors(modelId: string): Promise<VectorRecord[]> {
    const packs = await this.db.getAll('vectorPacks', packRange(modelId));
    if (packs.length > 0) return unpackVectors(packs);
    try {
      return await this.write(['vectors', 'vectorPacks'], async (tx) => {
        const records = await tx.objectStore('vectors').index('byModel').getAll(modelId);
        await Promise.all(packVectors(modelId, records).map((p) => tracked(tx.objectStore('vectorPacks').put(p))));
        return records;
      });
    } catch {
      // Packing is an optimisation (it may hit a full disk): a plain read still answers.
      return this.db.getAllFromIndex('vectors', 'byModel', modelId);
    }
  }

  /** Every vector of one unit, whatever model made it. */
  listVectorsOfUnit(unitId: Id): Promise<VectorRecord[]> {
    return this.db.getAll('vectors', unitRange(unitId));
  }

  getJob(id: Id): Promise<Job | undefined> {
    return this.db.get('jobs', id);
  }

  listJobs(): Promise<Job[]> {
    return this.db.getAll('jobs');
  }

  listJobsByStatus(status: JobStatus): Promise<Job[]> {
    return this.db.getAllFromIndex('jobs', 'byStatus', status);
  }

  listTombstones(kind: Tombstone['kind']): Promise<Tombstone[]> {
    return this.db.getAll('tombstones', IDBKeyRange.bound([kind], [kind, []]));
  }

  async getSetting<T>(key: string): Promise<T | undefined> {
    const record = await this.db.get('settings', key);
    return record?.value as T | undefined;
  }

  async putSetting<T>(key: string, value: T): Promise<void> {
    await this.write(['settings'], async (tx) => {
      await tx.objectStore('settings').put({ key, value });
    });
  }

  async updateSetting<T>(key: string, fn: (stored: unknown) => T): Promise<T> {
    return this.write(['settings'], async (tx) => {
      const store = tx.objectStore('settings');
      const value = fn((await store.get(key))?.value);
      await store.put({ key, value });
      return value;
    });
  }

  async deleteSetting(key: string): Promise<void> {
    await this.write(['settings'], async (tx) => {
      await tx.objectStore('settings').delete(key);
    });
  }

  /**
   * Empties every store (settings and jobs included) in one transaction. Returns how many records
   * each store held, counted in that transaction: what the user is told was deleted.
   */
  async wipeAll(opts: { syncReset?: boolean; dropOutbox?: boolean; rows?: SyncRows } = {}): Promise<Record<StoreName, number>> {
    const stores = opts.syncReset || opts.dropOutbox ? [...STORE_NAMES, 'sync' as const] : STORE_NAMES;
    return this.write(stores, async (tx) => {
      const counts = await Promise.all(STORE_NAMES.map((name) => tx.objectStore(name).count()));
      await Promise.all(STORE_NAMES.map((name) => tx.objectStore(name).clear()));
      // The user's delete-all with sync on: drop what waited to sync and leave a `reset` row for
      // the tab that runs the sync loop, in the wipe's own transaction (SyncService.deletedAll).
      const sync = opts.syncReset ? tx.objectStore('sync') : undefined;
      if (sync && (await sync.count('config')) > 0) {
        await putSyncRows(sync, { puts: [{ key: 'reset', value: { at: Date.now() } }], deletes: ['out:*'] });
      }
      // Another device's delete-all, accepted here: what waited to sync goes with the rest, and the
      // sync state that says so (the new epoch, what is left to write) is kept in the same transaction.
      if (opts.dropOutbox)
        await putSyncRows(tx.objectStore('sync'), { puts: opts.rows?.puts ?? [], deletes: ['out:*', ...(opts.rows?.deletes ?? [])] });
      return Object.fromEntries(STORE_NAMES.map((name, i) => [name, counts[i]])) as Record<StoreName, number>;
    });
  }

  /** Record counts per store, from one consistent snapshot. */
  async countAll(): Promise<Record<StoreName, number>> {
    const tx = this.db.transaction([...STORE_NAMES]);
    const counts = await Promise.all(STORE_NAMES.map((name) => tx.objectStore(name).count()));
    return Object.fromEntries(STORE_NAMES.map((name, i) => [name, counts[i]])) as Record<StoreName, number>;
  }
}

/** Every store a change can touch or read (settings are written apart). */
const DATA_STORES: Array<StoreName | 'sync'> = [...STORE_NAMES.filter((n) => n !== 'settings'), 'sync'];

/** The integrity rule's reads, inside the write transaction. */
function idbReader(tx: WriteTx): StoreReader {
  return {
    memory: (id) => tx.objectStore('memories').get(id),
    hasSession: async (id) => (await tx.objectStore('sessions').getKey(id)) !== undefined,
    hasSegment: async (id) => (await tx.objectStore('segments').getKey(id)) !== undefined,
    job: (id) => tx.objectStore('jobs').get(id),
    edgesTouching: async (id) => {
      const edges = tx.objectStore('edges');
      const [from, to] = await Promise.all([edges.index('byFrom').getAllKeys(id), edges.index('byTo').getAllKeys(id)]);
      return [...new Set([...from, ...to])];
    },
    vectorKeysOf: (id) => tx.objectStore('vectors').getAllKeys(unitRange(id)),
    supersededBy: (id) => tx.objectStore('memories').index('bySupersededBy').getAll(id),
    turn: (id) => tx.objectStore('turns').get(id),
    turnsDrewOn: (id) => tx.objectStore('turns').index('byDrewOn').getAll(id),
    tombstone: async (kind, id) => (await tx.objectStore('tombstones').getKey([kind, id])) !== undefined,
    segmentsOfTurn: (id) => tx.objectStore('segments').index('byTurn').getAll(id),
  };
}

const PACK_SIZE = 4096;

function packRange(modelId: string): IDBKeyRange {
  return IDBKeyRange.bound([modelId, 0], [modelId, Number.MAX_SAFE_INTEGER]);
}

/** Packs of PACK_SIZE vectors; none when dimensions differ (nothing to gain, nothing to risk). */
export function packVectors(modelId: string, records: readonly VectorRecord[]): VectorPack[] {
  if (records.length === 0) return [];
  const dim = records[0].vector.length;
  if (records.some((r) => r.vector.length !== dim)) return [];
  const packs: VectorPack[] = [];
  for (let start = 0, pack = 0; start < records.length; start += PACK_SIZE, pack++) {
    const chunk = records.slice(start, start + PACK_SIZE);
    const data = new Float32Array(chunk.length * dim);
    chunk.forEach((r, i) => data.set(r.vector, i * dim));
    packs.push({ modelId, pack, dim, unitIds: chunk.map((r) => r.unitId), data });
  }
  return packs;
}

/** Records whose vectors are views into the packs' buffers (no copy). */
export function unpackVectors(packs: readonly VectorPack[]): VectorRecord[] {
  const out: VectorRecord[] = [];
  for (const p of packs) {
    p.unitIds.forEach((unitId, i) => out.push({ unitId, modelId: p.modelId, vector: p.data.subarray(i * p.dim, (i + 1) * p.dim) }));
  }
  return out;
}

/** All [sessionId, index] keys of one session. */
function sessionRange(sessionId: Id): IDBKeyRange {
  return IDBKeyRange.bound([sessionId, -Infinity], [sessionId, Infinity]);
}

/** All [unitId, modelId] keys of one unit: an array sorts above every string, so [id, []] caps it. */
function unitRange(unitId: Id): IDBKeyRange {
  return IDBKeyRange.bound([unitId], [unitId, []]);
}
