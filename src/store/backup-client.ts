// The page's side of the backup worker: one worker per import or export, ended when it is done
// or cancelled (AbortSignal). Errors come back as the same types the store throws.
import { BackupError, type BackupPhase, type ImportMode, type ImportSummary } from './backup';
import type { BackupReply, BackupRequest } from './backup-messages';
import { StorageFullError } from './errors';

export interface BackupProgress {
  phase: BackupPhase;
  /** 0..1, for a progress bar. */
  fraction: number;
}

export interface BackupRunOptions {
  onProgress?: (p: BackupProgress) => void;
  signal?: AbortSignal;
}

const FRACTION: Record<BackupPhase, number> = { reading: 0.05, parsing: 0.2, checking: 0.45, writing: 0.7, done: 1 };

/** Thrown when the user cancels: nothing was changed. */
export class BackupCancelledError extends Error {
  override readonly name = 'BackupCancelledError';
  constructor() {
    super('Cancelled. Nothing was changed.');
  }
}

function run<T>(request: BackupRequest, pick: (reply: BackupReply) => T | undefined, options: BackupRunOptions): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (options.signal?.aborted) return reject(new BackupCancelledError());
    const worker = new Worker(new URL('./backup.worker.ts', import.meta.url), { type: 'module', name: 'tealeaf-backup' });
    const finish = () => {
      worker.terminate();
      options.signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      // Ending the worker aborts its open transaction: the store keeps what it had.
      finish();
      reject(new BackupCancelledError());
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    worker.onmessage = (event: MessageEvent<BackupReply>) => {
      const reply = event.data;
      if (reply.type === 'phase') {
        options.onProgress?.({ phase: reply.phase, fraction: FRACTION[reply.phase] });
        return;
      }
      finish();
      if (reply.type === 'failed') {
        reject(reply.kind === 'backup' ? new BackupError(reply.issues ?? [reply.message]) : reply.kind === 'storage-full' ? new StorageFullError() : new Error(reply.message));
        return;
      }
      const value = pick(reply);
      options.onProgress?.({ phase: 'done', fraction: 1 });
      if (value === undefined) reject(new Error('The backup worker answered unexpectedly.'));
      else resolve(value);
    };
    worker.onerror = (event) => {
      finish();
      reject(new Error(`The backup could not run: ${event.message || 'the worker failed to start'}`));
    };
    worker.postMessage(request);
  });
}

/** Validates and writes a backup file in a worker; one transaction, nothing changes on any error. */
export function importBackupInWorker(file: Blob, mode: ImportMode, options: BackupRunOptions = {}): Promise<ImportSummary> {
  return run({ type: 'import', file, mode }, (r) => (r.type === 'imported' ? r.summary : undefined), options);
}

/** Everything as one versioned JSON file, built in a worker. */
export function exportBackupInWorker(includeVectors: boolean, options: BackupRunOptions = {}): Promise<Blob> {
  return run({ type: 'export', includeVectors }, (r) => (r.type === 'exported' ? r.file : undefined), options);
}
