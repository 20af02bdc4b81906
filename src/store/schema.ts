// The IndexedDB schema (docs/ARCHITECTURE.md, "Data model") and its versioned migrations.
import type { DBSchema, IDBPDatabase, IDBPTransaction } from 'idb';
import type {
  Edge,
  Id,
  Job,
  JobStatus,
  Memory,
  MemoryKind,
  Millis,
  Segment,
  Session,
  SessionStatus,
  Setting,
  Tombstone,
  Turn,
  VectorRecord,
} from '../memory/types';
import { turnSources } from '../memory/derived';
import { fitMemory, fitSegment, fitSession, fitTurn } from './fit';
import { flattenVersions } from './legacy-versions';

export const DB_NAME = 'tealeaf';
/** The demo lives in a database of its own: it never mixes with the user's memory. */
export const DEMO_DB_NAME = 'tealeaf-demo';

export const STORE_NAMES = [
  'sessions',
  'turns',
  'memories',
  'edges',
  'segments',
  'vectors',
  'jobs',
  'settings',
  'vectorPacks',
  'tombstones',
] as const;
export type StoreName = (typeof STORE_NAMES)[number];

/** Typed view of the current schema, for idb. Index names are prefixed `by` to read as queries. */
export interface TealeafSchema extends DBSchema {
  sessions: {
    key: Id;
    value: Session;
    indexes: { byStartedAt: Millis; byStatus: SessionStatus };
  };
  turns: {
    key: Id;
    value: Turn;
    indexes: { bySession: Id; bySessionIndex: [Id, number]; byTime: Millis; byDrewOn: Id };
  };
  memories: {
    key: Id;
    value: Memory;
    indexes: { byTime: Millis; bySession: Id; byKind: MemoryKind; bySupersededBy: Id };
  };
  edges: {
    key: Id;
    value: Edge;
    indexes: { byFrom: Id; byTo: Id };
  };
  segments: {
    key: Id;
    value: Segment;
    indexes: { bySession: Id; byTime: Millis; byTurn: Id };
  };
  vectors: {
    key: [Id, string];
    value: VectorRecord;
    indexes: { byModel: string };
  };
  jobs: {
    key: Id;
    value: Job;
    indexes: { byStatus: JobStatus };
  };
  settings: {
    key: string;
    value: Setting;
  };
  vectorPacks: {
    key: [string, number];
    value: VectorPack;
  };
  tombstones: {
    key: [Tombstone['kind'], Id];
    value: Tombstone;
  };
  /** v5: this device's sync state (keys, cursor, the record document as a log). Not in
   * STORE_NAMES: it is neither backed up nor emptied by delete-all (sync-store.ts). */
  sync: {
    key: string;
    value: { key: string; value: unknown };
  };
}

/**
 * A derived copy of one model's vectors, packed many to a record: reading 10k single-vector
 * records costs ~6x more than the same bytes in a few records. `vectors` stays the truth; every
 * write to it deletes the model's packs in the same transaction, and the next read repacks.
 */
export interface VectorPack {
  modelId: string;
  pack: number;
  dim: number;
  unitIds: Id[];
  /** unitIds.length * dim numbers. */
  data: Float32Array;
}

/**
 * One step of the schema: migrations[i] takes the database from version i to i + 1.
 * Migrations see the untyped database, because the typed TealeafSchema only describes the newest
 * version. They may return a promise, but must only await requests on `tx` (anything else lets
 * the upgrade transaction commit early).
 */
export type Migration = (db: IDBPDatabase<unknown>, tx: IDBPTransaction<unknown, string[], 'versionchange'>) => void | Promise<void>;

/** v1: every store of the data model, with its indexes. */
const createAllStores: Migration = (db) => {
  const sessions = db.createObjectStore('sessions', { keyPath: 'id' });
  sessions.createIndex('byStartedAt', 'startedAt');
  sessions.createIndex('byStatus', 'status');

  const turns = db.createObjectStore('turns', { keyPath: 'id' });
  turns.createIndex('bySession', 'sessionId');
  // Unique: the same session open in two tabs must not store two turns at one position.
  turns.createIndex('bySessionIndex', ['sessionId', 'index'], { unique: true });
  turns.createIndex('byTime', 'time');

  const memories = db.createObjectStore('memories', { keyPath: 'id' });
  memories.createIndex('byTime', 'time');
  memories.createIndex('bySession', 'sessionId');
  memories.createIndex('byKind', 'kind');
  // Sparse (absent values are not indexed): finds what a deleted memory superseded.
  memories.createIndex('bySupersededBy', 'supersededBy');

  const edges = db.createObjectStore('edges', { keyPath: 'id' });
  edges.createIndex('byFrom', 'from');
  edges.createIndex('byTo', 'to');

  const segments = db.createObjectStore('segments', { keyPath: 'id' });
  segments.createIndex('bySession', 'sessionId');
  segments.createIndex('byTime', 'time');

  const vectors = db.createObjectStore('vectors', { keyPath: ['unitId', 'modelId'] });
  vectors.createIndex('byModel', 'modelId');

  const jobs = db.createObjectStore('jobs', { keyPath: 'id' });
  jobs.createIndex('byStatus', 'status');

  db.createObjectStore('settings', { keyPath: 'key' });
};

/** v2: packed copies of the vectors, for a fast start (see VectorPack). */
const addVectorPacks: Migration = (db) => {
  db.createObjectStore('vectorPacks', { keyPath: ['modelId', 'pack'] });
};

/**
 * v3: replies are found by the memories they drew on (`Turn.drewOn`, multi-entry), so a deleted
 * or edited memory takes the notes built from it along (src/memory/derived.ts). Existing turns
 * get the field here.
 */
const addDrewOn: Migration = async (_db, tx) => {
  const turns = tx.objectStore('turns');
  turns.createIndex('byDrewOn', 'drewOn', { multiEntry: true });
  for (let cursor = await turns.openCursor(); cursor; cursor = await cursor.continue()) {
    const turn = cursor.value as Turn;
    if (!turn.usedMemory && !turn.versions) continue;
    const drewOn = turnSources(turn);
    if (drewOn.length > 0) await cursor.update({ ...turn, drewOn });
  }
};

/**
 * v4: what the app stores it can always export and import again. Turns keep their
 * branches flat (`Turn.branches`, no nesting that grows with each edit: legacy-versions.ts), with
 * `drewOn` recomputed; records written before the limits were applied everywhere are brought within
 * them (fit.ts: a passage over a record's length, a model name a server made up). And a store of
 * tombstones: what the user deleted, so that importing the same history again does not bring it back.
 */
const flatVersionsAndTombstones: Migration = async (db, tx) => {
  db.createObjectStore('tombstones', { keyPath: ['kind', 'id'] });
  const turns = tx.objectStore('turns');
  for (let cursor = await turns.openCursor(); cursor; cursor = await cursor.continue()) {
    const stored = cursor.value as Turn;
    const turn = fitTurn(flattenVersions(stored) as Turn);
    const drewOn = turnSources(turn);
    if (turn === stored && drewOn.join('\u0000') === (stored.drewOn ?? []).join('\u0000')) continue;
    const next: Turn = { ...turn };
    if (drewOn.length > 0) next.drewOn = drewOn;
    else delete next.drewOn;
    await cursor.update(next);
  }
  const fitAll = async <T>(name: string, fit: (x: T) => T) => {
    const store = tx.objectStore(name);
    for (let cursor = await store.openCursor(); cursor; cursor = await cursor.continue()) {
      const value = cursor.value as T;
      const next = fit(value);
      if (next !== value) await cursor.update(next);
    }
  };
  await fitAll('segments', fitSegment);
  await fitAll('memories', fitMemory);
  await fitAll('sessions', fitSession);
};

/** v5: the sync state, one row per key (sync-store.ts). */
const addSync: Migration = (db) => {
  db.createObjectStore('sync', { keyPath: 'key' });
};

/**
 * v6: passages are found by the turns they hold (`Segment.turnIds`, multi-entry), so
 * forgetting a line rebuilds the passages that hold it by a lookup (src/store/forgotten-lines.ts).
 * IndexedDB fills a new index from the records already stored.
 */
const addSegmentTurns: Migration = (_db, tx) => {
  tx.objectStore('segments').createIndex('byTurn', 'turnIds', { multiEntry: true });
};

/** Ordered; the database version is MIGRATIONS.length. Add a version by appending a function. */
export const MIGRATIONS: readonly Migration[] = [
  createAllStores,
  addVectorPacks,
  addDrewOn,
  flatVersionsAndTombstones,
  addSync,
  addSegmentTurns,
];

export const DB_VERSION = MIGRATIONS.length;
