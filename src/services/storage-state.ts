// How much this browser lets Tealeaf store, and whether it keeps it (persistent storage).
import type { ModelsSnapshot } from './models/model-snapshot';
import { isStorageFullError } from '../store/errors';

/** The browser's estimate and persistence flag; undefined where the browser says nothing. */
export async function readStorage(): Promise<ModelsSnapshot['storage'] | undefined> {
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
