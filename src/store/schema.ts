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
  Turn,
  VectorRecord,
} from '../memory/types';
import { turnSources } from '../memory/derived';

export const DB_NAME = 'tealeaf';
/** The demo lives in a database of its own: it never mixes with the user's memory. */
export const DEMO_DB_NAME = 'tealeaf-demo';

export const STORE_NAMES = ['sessions', 'turns', 'memories', 'edges', 'segments', 'vectors', 'jobs', 'settings', 'vectorPacks'] as const;
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
    indexes: { bySession: Id; byTime: Millis };
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

/** Ordered; the database version is MIGRATIONS.length. Add a version by appending a function. */
export const MIGRATIONS: readonly Migration[] = [createAllStores, addVectorPacks, addDrewOn];

export const DB_VERSION = MIGRATIONS.length;
