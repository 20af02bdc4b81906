// When the app cannot start, the user must still be able to take their data out or remove it.
// These work without the rest of the services: they open the store directly.
import { deleteTealeafDb, openTealeafDb } from '../store/db';
import { DEMO_DB_NAME } from '../store/schema';

/** A backup of whatever can be read, as the normal export writes it. */
export async function rescueExport(): Promise<Blob> {
  const { exportBackup, serializeBackup } = await import('../store/backup');
  const db = await openTealeafDb();
  try {
    const backup = await exportBackup(db, { includeVectors: false });
    return new Blob([serializeBackup(backup)], { type: 'application/json' });
  } finally {
    db.close();
  }
}

/** Deletes the whole database and the app's caches (downloaded models are kept unless asked). */
export async function rescueDeleteAll(includeModels: boolean): Promise<void> {
  await deleteTealeafDb();
  // The demo's database too: nothing of Tealeaf stays behind.
  await deleteTealeafDb(globalThis.indexedDB, DEMO_DB_NAME).catch(() => undefined);
  if (typeof caches !== 'undefined') {
    const modelCaches = /^(webllm\/|transformers-cache|tealeaf-wasm)/;
    const names = await caches.keys();
    await Promise.all(
      names.filter((n) => !n.startsWith('workbox-precache') && (includeModels || !modelCaches.test(n))).map((n) => caches.delete(n)),
    );
  }
}
