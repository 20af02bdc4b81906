// One readwrite transaction of the store: every request of a write issued in it, and its outcome
// (commit, or an abort with the error that caused it). The repository, the sync rows and a backup's
// import all write through it.
import type { IDBPTransaction } from 'idb';
import type { TealeafDb } from './db';
import { toStoreError } from './errors';
import type { StoreName, TealeafSchema } from './schema';

export type WriteTx = IDBPTransaction<TealeafSchema, Array<StoreName | 'sync'>, 'readwrite'>;

/**
 * Marks a request's promise as observed. When a later request throws synchronously we never get
 * to await the earlier ones, and their AbortError must not surface as an unhandled rejection.
 */
export function tracked<T>(request: Promise<T>): Promise<T> {
  request.catch(() => undefined);
  return request;
}

/**
 * Issues every request of `write` in one readwrite transaction and waits for the commit.
 * Any failure (a synchronous throw such as DataError, a failed request, or an abort at commit
 * such as a full disk) aborts the whole transaction; quota failures become StorageFullError.
 */
export async function runWrite<T>(
  db: TealeafDb,
  stores: ReadonlyArray<StoreName | 'sync'>,
  write: (tx: WriteTx) => Promise<T>,
): Promise<T> {
  const tx = db.transaction([...stores], 'readwrite');
  // Observed from the start so an early abort never surfaces as an unhandled rejection.
  const done = tx.done.then(
    () => undefined,
    (err: unknown) => err ?? new DOMException('Transaction aborted', 'AbortError'),
  );
  try {
    const result = await write(tx);
    await tx.done;
    return result;
  } catch (err) {
    try {
      tx.abort();
    } catch {
      // Already aborted or finished.
    }
    const txError = await done;
    throw toStoreError(err, txError, tx.error);
  }
}
