// The sync state's rows (docs/SYNC.md, "Where it runs and what is kept"): one object store, `sync`,
// keyed by name. Rows ride in the same transaction as the records they go with (IdbRepository.apply
// with `rows`), so a closed tab never keeps a record without the sync state that knows of it.
import type { TealeafDb } from './db';
import { runWrite } from './write-transaction';

export interface SyncRows {
  puts: Array<{ key: string; value: unknown }>;
  /** Keys to delete, or every key starting with a prefix (`prefix*`). */
  deletes?: string[];
}

export async function readSyncRows(db: TealeafDb): Promise<Map<string, unknown>> {
  const rows = await db.getAll('sync');
  return new Map(rows.map((r) => [r.key, r.value]));
}

/** The rows whose key starts with `prefix`, in key order (the out-box, without the document's megabytes). */
export async function readSyncRowsByPrefix(db: TealeafDb, prefix: string): Promise<Array<[string, unknown]>> {
  const rows = await db.getAll('sync', IDBKeyRange.bound(prefix, `${prefix}\uffff`));
  return rows.map((r) => [r.key, r.value]);
}

/** One row (a check the loop makes every turn, without reading the document's rows). */
export async function readSyncRow(db: TealeafDb, key: string): Promise<unknown> {
  return (await db.get('sync', key))?.value;
}

export async function writeSyncRows(db: TealeafDb, rows: SyncRows): Promise<void> {
  await runWrite(db, ['sync'], async (tx) => {
    await putSyncRows(tx.objectStore('sync'), rows);
  });
}

/** Clears every row (sync turned off on this device). */
export async function clearSyncRows(db: TealeafDb): Promise<void> {
  await runWrite(db, ['sync'], async (tx) => tx.objectStore('sync').clear());
}

interface SyncObjectStore {
  put(value: { key: string; value: unknown }): Promise<unknown>;
  delete(key: string | IDBKeyRange): Promise<unknown>;
}

export async function putSyncRows(store: SyncObjectStore, rows: SyncRows): Promise<void> {
  const done: Promise<unknown>[] = [];
  for (const d of rows.deletes ?? []) {
    // A prefix range: every key that starts with it (the document's update log).
    done.push(d.endsWith('*') ? store.delete(IDBKeyRange.bound(d.slice(0, -1), `${d.slice(0, -1)}\uffff`)) : store.delete(d));
  }
  for (const p of rows.puts) done.push(store.put(p));
  await Promise.all(done);
}
