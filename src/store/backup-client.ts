// The page's side of the backup worker (backup.worker.ts): one worker per import or export, ended
// when it is done or cancelled. Errors come back as the types the store throws (BackupError with
// its issues, StorageFullError), so callers handle them as if the store ran here.
import {
  BackupCancelledError,
  BackupError,
  type BackupControl,
  type BackupReply,
  type BackupRequest,
  type ExportResult,
  type ImportMode,
  type ImportSummary,
} from './backup-messages';
import { StorageFullError } from './errors';

export { BackupCancelledError, BackupError, isBackupCancelled, isBackupError } from './backup-messages';
export type { BackupControl, BackupPhase, BackupProgress, ExportResult, ImportMode, ImportSummary } from './backup-messages';

/** The part of a Worker this module uses; tests pass one that runs the worker's code in-process. */
export interface BackupWorkerPort {
  postMessage(message: BackupRequest): void;
  terminate(): void;
  onmessage: ((event: MessageEvent<BackupReply>) => void) | null;
  onerror: ((event: ErrorEvent) => void) | null;
}

export interface BackupRunOptions extends BackupControl {
  /** The database to read or write (the demo's when the app shows the demo); the user's own by default. */
  db?: string;
  /** Starts the worker; by default the real one. */
  startWorker?: () => BackupWorkerPort;
}

function startBackupWorker(): BackupWorkerPort {
  return new Worker(new URL('./backup.worker.ts', import.meta.url), { type: 'module', name: 'tealeaf-backup' });
}

function errorOf(reply: Extract<BackupReply, { type: 'failed' }>): Error {
  if (reply.kind === 'backup') return new BackupError(reply.issues ?? [reply.message]);
  if (reply.kind === 'storage-full') return new StorageFullError();
  return new Error(reply.message);
}

/**
 * Runs one request. Cancel (the signal) asks the worker to stop at its next safe point and waits
 * for its answer: "cancelled" means its transaction was aborted and nothing changed. An import
 * that had already committed when the cancel arrived resolves with its summary (it happened).
 * The worker is ended in every case.
 */
function run<T>(request: BackupRequest, accept: (reply: BackupReply) => T | undefined, options: BackupRunOptions): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (options.signal?.aborted) return reject(new BackupCancelledError());
    const worker = (options.startWorker ?? startBackupWorker)();
    let cancelling = false;
    let finished = false;
    const finish = () => {
      finished = true;
      options.signal?.removeEventListener('abort', onAbort);
      worker.onmessage = null;
      worker.onerror = null;
      worker.terminate();
    };
    const onAbort = () => {
      if (finished || cancelling) return;
      cancelling = true;
      worker.postMessage({ type: 'cancel' });
    };
    worker.onmessage = (event) => {
      const reply = event.data;
      if (reply.type === 'progress') {
        if (!cancelling) options.onProgress?.(reply.progress);
        return;
      }
      finish();
      if (reply.type === 'cancelled') return reject(new BackupCancelledError());
      if (reply.type === 'failed') return reject(errorOf(reply));
      const value = accept(reply);
      // An export finished as the user cancelled: they no longer want the file. (An import that
      // committed is reported as done, because it happened.)
      if (cancelling && request.type === 'export') reject(new BackupCancelledError());
      else if (value === undefined) reject(new Error('The backup worker gave an unexpected answer.'));
      else resolve(value);
    };
    worker.onerror = (event) => {
      finish();
      reject(new Error(`The backup could not run: ${event.message || 'its worker did not start'}`));
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    worker.postMessage(request);
  });
}

/** Reads, checks and writes a backup file in a worker: one transaction, nothing changes on any error or cancel. */
export function importBackupInWorker(file: Blob, mode: ImportMode, options: BackupRunOptions = {}): Promise<ImportSummary> {
  return run({ type: 'import', file, mode, db: options.db }, (r) => (r.type === 'imported' ? r.summary : undefined), options);
}

/** Everything as one versioned JSON file, built in a worker, with how many records it holds. */
export function exportBackupInWorker(options: BackupRunOptions & { includeVectors: boolean }): Promise<ExportResult> {
  return run(
    { type: 'export', includeVectors: options.includeVectors, db: options.db },
    (r) => (r.type === 'exported' ? { file: r.file, counts: r.counts } : undefined),
    options,
  );
}
