// Typed store errors. Callers show `message` to the user as is.

export const STORAGE_FULL_MESSAGE =
  'Your device has no storage space left for Tealeaf, so the last change was not saved ' +
  '(nothing was half-written). To make room: free downloaded model caches in Settings, ' +
  'delete old sessions or memories you no longer need, or export a backup and then delete old data.';

/** The browser refused a write because the storage quota is used up. */
export class StorageFullError extends Error {
  override readonly name = 'StorageFullError';
  constructor(options?: { cause?: unknown }) {
    super(STORAGE_FULL_MESSAGE, options);
  }
}

export function isStorageFullError(e: unknown): e is StorageFullError {
  return e instanceof StorageFullError;
}

/** Opened by an older build of the app: the database on disk is newer than this code. */
export class DatabaseTooNewError extends Error {
  override readonly name = 'DatabaseTooNewError';
  constructor(options?: { cause?: unknown }) {
    super('Your Tealeaf data was saved by a newer version of the app. Reload the page to get the newest version.', options);
  }
}

// Firefox reports a full disk under its own name; code 22 is the legacy QUOTA_EXCEEDED_ERR.
const QUOTA_NAMES = new Set(['QuotaExceededError', 'NS_ERROR_DOM_QUOTA_REACHED']);

/**
 * Whether an error is (or wraps) a quota failure. Browsers report it on the request, on the
 * aborted transaction (`tx.error`), or inside a wrapper's `cause`, so look a few levels deep.
 */
export function isQuotaError(e: unknown): boolean {
  let current: unknown = e;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    const name = (current as { name?: unknown }).name;
    if (typeof name === 'string' && QUOTA_NAMES.has(name)) return true;
    if (current instanceof StorageFullError) return true;
    if (typeof DOMException !== 'undefined' && current instanceof DOMException && current.code === 22) {
      return true;
    }
    const next =
      (current as { cause?: unknown }).cause ??
      (current as { error?: unknown }).error ??
      (current as { target?: { error?: unknown } }).target?.error;
    current = next;
  }
  return false;
}

/** Maps quota failures to StorageFullError; anything else passes through unchanged. */
export function toStoreError(...candidates: unknown[]): unknown {
  for (const e of candidates) {
    if (e instanceof StorageFullError) return e;
    if (isQuotaError(e)) return new StorageFullError({ cause: e });
  }
  return candidates[0];
}
