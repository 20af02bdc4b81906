// Opening the database: runs pending migrations and handles other tabs holding older versions.
import { wrap } from 'idb';
import type { IDBPDatabase, IDBPTransaction } from 'idb';
import { DatabaseTooNewError } from './errors';
import { DB_NAME, MIGRATIONS } from './schema';
import type { Migration, TealeafSchema } from './schema';

export type TealeafDb = IDBPDatabase<TealeafSchema>;

export const BLOCKED_MESSAGE =
  'Tealeaf is being updated, but another tab still has the old version open. ' + 'Close or reload the other Tealeaf tabs to continue.';

export interface BlockedInfo {
  /** User-facing explanation of what to do. */
  message: string;
  oldVersion: number;
  newVersion: number | null;
}

export interface OpenTealeafDbOptions {
  name?: string;
  /** Defaults to the global indexedDB; tests pass a fresh one. */
  factory?: IDBFactory;
  /**
   * Another tab is upgrading the database. This connection is already closed when this runs:
   * the UI should ask the user to reload.
   */
  onVersionChange?: () => void;
  /** This tab wants to upgrade but another tab keeps the old version open. */
  onBlocked?: (info: BlockedInfo) => void;
  /** Tests only: a different migration list (e.g. a future v2). */
  migrations?: readonly Migration[];
}

export async function openTealeafDb(options: OpenTealeafDbOptions = {}): Promise<TealeafDb> {
  const factory = options.factory ?? globalThis.indexedDB;
  if (!factory) {
    throw new Error('This browser does not offer IndexedDB storage (private browsing can turn it off), so Tealeaf cannot save anything.');
  }
  const migrations = options.migrations ?? MIGRATIONS;
  const request = factory.open(options.name ?? DB_NAME, migrations.length);

  let migrationError: unknown;
  request.addEventListener('upgradeneeded', (event) => {
    const rawTx = request.transaction;
    if (!rawTx) return;
    const db = wrap(request.result) as IDBPDatabase<unknown>;
    // wrap() cannot know this is the upgrade transaction.
    const tx = wrap(rawTx) as unknown as IDBPTransaction<unknown, string[], 'versionchange'>;
    // An aborted upgrade is reported by the open request; idb's done promise would go unhandled.
    tx.done.catch(() => undefined);
    runMigrations(migrations, event.oldVersion, db, tx).catch((err: unknown) => {
      // Abort so the database stays at its old version with its old data.
      migrationError = err;
      try {
        rawTx.abort();
      } catch {
        // Already finished: the request error below reports it.
      }
    });
  });
  request.addEventListener('blocked', (event) => {
    options.onBlocked?.({
      message: BLOCKED_MESSAGE,
      oldVersion: event.oldVersion,
      newVersion: event.newVersion,
    });
  });

  let raw: IDBDatabase;
  try {
    raw = await new Promise<IDBDatabase>((resolve, reject) => {
      request.addEventListener('success', () => resolve(request.result));
      request.addEventListener('error', () => reject(request.error));
    });
  } catch (err) {
    if (migrationError !== undefined) throw migrationError;
    if (err instanceof Error && err.name === 'VersionError') throw new DatabaseTooNewError({ cause: err });
    throw err;
  }

  raw.addEventListener('versionchange', () => {
    // Closing at once lets the other tab's upgrade proceed instead of staying blocked.
    raw.close();
    options.onVersionChange?.();
  });
  return wrap(raw) as TealeafDb;
}

/**
 * Runs migrations[from..] in order. Synchronous migrations run back to back inside the
 * upgradeneeded event; only a migration that returns a promise is awaited.
 */
function runMigrations(
  migrations: readonly Migration[],
  from: number,
  db: IDBPDatabase<unknown>,
  tx: IDBPTransaction<unknown, string[], 'versionchange'>,
): Promise<void> {
  for (let v = from; v < migrations.length; v++) {
    let pending: void | Promise<void>;
    try {
      pending = migrations[v](db, tx);
    } catch (err) {
      return Promise.reject(err);
    }
    if (pending instanceof Promise) {
      const next = v + 1;
      return pending.then(() => runMigrations(migrations, next, db, tx));
    }
  }
  return Promise.resolve();
}

/** Deletes the whole database (the rescue path when the app cannot start; removing the demo). */
export function deleteTealeafDb(factory: IDBFactory = globalThis.indexedDB, name: string = DB_NAME): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const request = factory.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => reject(request.error ?? new Error('The database could not be deleted.'));
    request.onblocked = () => reject(new Error('Close the other Tealeaf tabs, then try again.'));
  });
}
