// How much this browser lets Tealeaf store, and whether it keeps it (persistent storage).
import { isStorageFullError } from '../store/errors';

/** What the browser says of this site's storage: bytes used, bytes it may use, and whether it keeps them. */
export interface StorageState {
  usageBytes: number;
  quotaBytes: number;
  persisted: boolean;
}

/** The browser's estimate and persistence flag; undefined where the browser says nothing. */
export async function readStorage(): Promise<StorageState | undefined> {
  const s = globalThis.navigator?.storage;
  if (!s?.estimate) return undefined;
  const [est, persisted] = await Promise.all([s.estimate(), s.persisted?.() ?? Promise.resolve(false)]);
  return { usageBytes: est.usage ?? 0, quotaBytes: est.quota ?? 0, persisted };
}

/** Asks for persistent storage; false when the browser did not grant it. */
export async function askPersistence(): Promise<boolean> {
  return (await globalThis.navigator?.storage?.persist?.()) ?? false;
}

/** A write whose loss on a full disk costs only a convenience (the app says the disk is full). */
export function ignoreFullDisk<T>(write: Promise<T>): Promise<T | undefined> {
  return write.catch((e: unknown) => {
    if (!isStorageFullError(e)) throw e;
    return undefined;
  });
}
