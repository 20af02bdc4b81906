import { describe, expect, it } from 'vitest';
import type { IDBPDatabase } from 'idb';
import { freshFactory } from './helpers';
import { BLOCKED_MESSAGE, openTealeafDb } from '../../../src/store/db';
import type { BlockedInfo } from '../../../src/store/db';
import { DatabaseTooNewError } from '../../../src/store/errors';
import { DB_VERSION, MIGRATIONS, STORE_NAMES } from '../../../src/store/schema';
import type { Migration } from '../../../src/store/schema';
import type { Memory, Session } from '../../../src/memory/types';

const session: Session = { id: 's1', title: 'First', startedAt: 1, lastActivityAt: 2, status: 'ended' };
const memory: Memory = {
  id: 'm1',
  kind: 'event',
  text: 'went hiking',
  time: 10,
  sourceTurnIds: ['t1'],
  sessionId: 's1',
  edited: false,
  createdAt: 11,
};

function indexesOf(db: IDBDatabase, store: string) {
  const tx = db.transaction(store);
  const s = tx.objectStore(store);
  return {
    keyPath: s.keyPath,
    indexes: Object.fromEntries(
      [...s.indexNames].map((n) => {
        const i = s.index(n);
        return [n, { keyPath: i.keyPath, unique: i.unique }];
      }),
    ),
  };
}

describe('schema', () => {
  it('creates every store of the data model with its keys and indexes', async () => {
    const db = await openTealeafDb({ factory: freshFactory() });
    expect(db.version).toBe(DB_VERSION);
    expect([...db.objectStoreNames].sort()).toEqual([...STORE_NAMES, 'sync'].sort()); // sync (v5) is kept out of STORE_NAMES: not backed up;
    const shape = Object.fromEntries(STORE_NAMES.map((n) => [n, indexesOf(unwrapDb(db), n)]));
    expect(shape).toEqual({
      sessions: {
        keyPath: 'id',
        indexes: {
          byStartedAt: { keyPath: 'startedAt', unique: false },
          byStatus: { keyPath: 'status', unique: false },
        },
      },
      turns: {
        keyPath: 'id',
        indexes: {
          bySession: { keyPath: 'sessionId', unique: false },
          bySessionIndex: { keyPath: ['sessionId', 'index'], unique: true },
          byTime: { keyPath: 'time', unique: false },
          byDrewOn: { keyPath: 'drewOn', unique: false },
        },
      },
      memories: {
        keyPath: 'id',
        indexes: {
          byTime: { keyPath: 'time', unique: false },
          bySession: { keyPath: 'sessionId', unique: false },
          byKind: { keyPath: 'kind', unique: false },
          bySupersededBy: { keyPath: 'supersededBy', unique: false },
        },
      },
      edges: {
        keyPath: 'id',
        indexes: { byFrom: { keyPath: 'from', unique: false }, byTo: { keyPath: 'to', unique: false } },
      },
      segments: {
        keyPath: 'id',
        indexes: {
          bySession: { keyPath: 'sessionId', unique: false },
          byTime: { keyPath: 'time', unique: false },
          byTurn: { keyPath: 'turnIds', unique: false },
        },
      },
      vectors: { keyPath: ['unitId', 'modelId'], indexes: { byModel: { keyPath: 'modelId', unique: false } } },
      jobs: { keyPath: 'id', indexes: { byStatus: { keyPath: 'status', unique: false } } },
      settings: { keyPath: 'key', indexes: {} },
      vectorPacks: { keyPath: ['modelId', 'pack'], indexes: {} },
      tombstones: { keyPath: ['kind', 'id'], indexes: {} },
    });
    db.close();
  });

  it('reopening at the same version keeps data and runs no migration again', async () => {
    const factory = freshFactory();
    const db = await openTealeafDb({ factory });
    await db.put('sessions', session);
    db.close();
    let ran = 0;
    const counting: Migration[] = MIGRATIONS.map((m) => (db2, tx) => {
      ran++;
      return m(db2, tx);
    });
    const again = await openTealeafDb({ factory, migrations: counting });
    expect(ran).toBe(0);
    expect(await again.get('sessions', 's1')).toEqual(session);
    again.close();
  });
});

/** idb's wrapper proxies the raw database; the test reads store metadata through the raw API. */
function unwrapDb<T>(db: IDBPDatabase<T>): IDBDatabase {
  return db as unknown as IDBDatabase;
}

describe('migrations', () => {
  // A test-only v2: a new index and a data rewrite through a cursor (an async migration).
  const v2: Migration = async (_db, tx) => {
    const memories = tx.objectStore('memories');
    memories.createIndex('byEdited', 'edited');
    let cursor = await memories.openCursor();
    while (cursor) {
      await cursor.update({ ...(cursor.value as Memory), text: `${(cursor.value as Memory).text} (v2)` });
      cursor = await cursor.continue();
    }
  };

  it('upgrades a v1 database with data to v2 and the data survives', async () => {
    const factory = freshFactory();
    const v1 = await openTealeafDb({ factory });
    await v1.put('sessions', session);
    await v1.put('memories', memory);
    await v1.put('vectors', { unitId: 'm1', modelId: 'e', vector: new Float32Array([0.5, -1]) });
    v1.close();

    const upgraded = await openTealeafDb({ factory, migrations: [...MIGRATIONS, v2] });
    expect(upgraded.version).toBe(DB_VERSION + 1);
    expect(await upgraded.get('sessions', 's1')).toEqual(session);
    expect(await upgraded.get('memories', 'm1')).toEqual({ ...memory, text: 'went hiking (v2)' });
    expect((await upgraded.get('vectors', ['m1', 'e']))?.vector).toEqual(new Float32Array([0.5, -1]));
    expect([...upgraded.transaction('memories').store.indexNames]).toContain('byEdited');
    upgraded.close();
  });

  it('a fresh database runs v1 then v2 in order', async () => {
    const db = await openTealeafDb({ factory: freshFactory(), migrations: [...MIGRATIONS, v2] });
    expect(db.version).toBe(DB_VERSION + 1);
    expect([...db.objectStoreNames].sort()).toEqual([...STORE_NAMES, 'sync'].sort()); // sync (v5) is kept out of STORE_NAMES: not backed up;
    db.close();
  });

  it('a failing migration leaves the database at v1 with its data', async () => {
    const factory = freshFactory();
    const v1 = await openTealeafDb({ factory });
    await v1.put('memories', memory);
    v1.close();
    const broken: Migration = async (_db, tx) => {
      const memories = tx.objectStore('memories');
      await memories.put({ ...memory, text: 'half-migrated' });
      throw new Error('migration bug');
    };
    await expect(openTealeafDb({ factory, migrations: [...MIGRATIONS, broken] })).rejects.toThrow('migration bug');
    const again = await openTealeafDb({ factory });
    expect(again.version).toBe(DB_VERSION);
    expect(await again.get('memories', 'm1')).toEqual(memory);
    again.close();
  });

  it('an older build opening a newer database gets a clear error', async () => {
    const factory = freshFactory();
    const newer = await openTealeafDb({ factory, migrations: [...MIGRATIONS, () => undefined] });
    newer.close();
    const err = await openTealeafDb({ factory }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseTooNewError);
    expect((err as Error).message).toMatch(/newer version/);
  });
});

describe('several tabs', () => {
  it('an upgrade in another tab closes this connection and tells the UI', async () => {
    const factory = freshFactory();
    let told = 0;
    const oldTab = await openTealeafDb({ factory, onVersionChange: () => told++ });
    await oldTab.put('sessions', session);
    const newTab = await openTealeafDb({ factory, migrations: [...MIGRATIONS, () => undefined] });
    expect(told).toBe(1);
    expect(newTab.version).toBe(DB_VERSION + 1);
    expect(await newTab.get('sessions', 's1')).toEqual(session);
    // The old connection is closed: using it fails instead of silently writing to an old schema.
    expect(() => oldTab.transaction('sessions')).toThrow();
    newTab.close();
  });

  it('reports blocked when another connection does not close, then proceeds once it does', async () => {
    const factory = freshFactory();
    await (await openTealeafDb({ factory })).close();
    // A connection from code that ignores versionchange (e.g. an old build of the app).
    const stubborn = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = factory.open('tealeaf', DB_VERSION);
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    const blocked: BlockedInfo[] = [];
    const opening = openTealeafDb({
      factory,
      migrations: [...MIGRATIONS, () => undefined],
      onBlocked: (info) => {
        blocked.push(info);
        stubborn.close();
      },
    });
    const db = await opening;
    expect(blocked).toEqual([{ message: BLOCKED_MESSAGE, oldVersion: DB_VERSION, newVersion: DB_VERSION + 1 }]);
    expect(db.version).toBe(DB_VERSION + 1);
    db.close();
  });
});
