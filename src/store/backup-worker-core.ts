// What the backup worker does with each request, apart from the worker itself (backup.worker.ts),
// so that Node tests can run it against fake-indexeddb. One request per worker: the page starts a
// worker for each import or export and ends it afterwards.
import { BACKUP_LIMITS, exportBackupFile, importBackup } from './backup';
import {
  BackupCancelledError,
  BackupError,
  isBackupCancelled,
  isBackupError,
  type BackupControl,
  type BackupReply,
  type BackupRequest,
} from './backup-messages';
import type { TealeafDb } from './db';
import { isStorageFullError } from './errors';

export interface BackupWorkerDeps {
  openDb: (name?: string) => Promise<TealeafDb>;
  post: (reply: BackupReply) => void;
}

/** Returns the handler for messages from the page. */
export function createBackupWorker(deps: BackupWorkerDeps): (request: BackupRequest) => Promise<void> {
  const cancel = new AbortController();
  let busy = false;
  return async (request) => {
    if (request.type === 'cancel') {
      cancel.abort();
      return;
    }
    if (busy) return deps.post({ type: 'failed', kind: 'other', message: 'The backup worker is already busy.' });
    busy = true;
    const control: BackupControl = {
      signal: cancel.signal,
      onProgress: (progress) => deps.post({ type: 'progress', progress }),
    };
    let db: TealeafDb | undefined;
    try {
      if (request.type === 'import') {
        const text = await readText(request.file, control);
        db = await deps.openDb(request.db);
        const summary = await importBackup(db, text, { mode: request.mode, ...control });
        deps.post({ type: 'imported', summary });
      } else {
        db = await deps.openDb(request.db);
        const { parts, counts } = await exportBackupFile(db, { includeVectors: request.includeVectors, ...control });
        deps.post({ type: 'exported', file: new Blob(parts, { type: 'application/json' }), counts });
      }
    } catch (e) {
      deps.post(replyFor(e));
    } finally {
      db?.close();
    }
  };
}

function replyFor(e: unknown): BackupReply {
  if (isBackupCancelled(e)) return { type: 'cancelled' };
  if (isBackupError(e)) return { type: 'failed', kind: 'backup', message: e.message, issues: e.issues };
  if (isStorageFullError(e)) return { type: 'failed', kind: 'storage-full', message: e.message };
  return { type: 'failed', kind: 'other', message: e instanceof Error ? e.message : String(e) };
}

const MB = 1024 * 1024;

/**
 * The file's text, read here in the worker (a 50 MB string never crosses to the page), with
 * progress in bytes. Refuses text that is not UTF-8: every backup the app writes is.
 */
export async function readText(file: Blob, control: BackupControl): Promise<string> {
  if (file.size > BACKUP_LIMITS.maxFileBytes) {
    throw new BackupError([
      `the file is ${Math.round(file.size / MB)} MB; Tealeaf can import backups up to ${BACKUP_LIMITS.maxFileBytes / MB} MB`,
    ]);
  }
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const reader = file.stream().getReader();
  const parts: string[] = [];
  let bytes = 0;
  let lastReport = -Infinity;
  control.onProgress?.({ phase: 'reading', done: 0, total: file.size });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (control.signal?.aborted) throw new BackupCancelledError();
      parts.push(decoder.decode(value, { stream: true }));
      bytes += value.byteLength;
      const now = performance.now();
      if (now - lastReport > 100) {
        lastReport = now;
        control.onProgress?.({ phase: 'reading', done: bytes, total: file.size });
      }
    }
    parts.push(decoder.decode());
  } catch (e) {
    void reader.cancel().catch(() => undefined);
    if (e instanceof TypeError) throw new BackupError(['the file is not UTF-8 text, so it is not a Tealeaf backup']);
    throw e;
  }
  control.onProgress?.({ phase: 'reading', done: file.size, total: file.size });
  return parts.join('');
}
