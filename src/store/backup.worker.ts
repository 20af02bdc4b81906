// Backup import and export off the page's thread: reading a 50 MB file, parsing, checking every
// record and writing them in one transaction never freezes the page. The page can end the worker
// at any time (cancel): an import's transaction that has not committed is then rolled back.
import { exportBackup, importBackup, isBackupError, serializeBackup } from './backup';
import { openTealeafDb } from './db';
import { isStorageFullError } from './errors';
import type { BackupReply, BackupRequest } from './backup-messages';

const post = (reply: BackupReply) => (self as unknown as Worker).postMessage(reply);

self.onmessage = async (event: MessageEvent<BackupRequest>) => {
  const request = event.data;
  let db: Awaited<ReturnType<typeof openTealeafDb>> | undefined;
  try {
    db = await openTealeafDb();
    if (request.type === 'import') {
      post({ type: 'phase', phase: 'reading' });
      const text = await request.file.text();
      const summary = await importBackup(db, text, { mode: request.mode, onPhase: (phase) => post({ type: 'phase', phase }) });
      post({ type: 'imported', summary });
    } else {
      post({ type: 'phase', phase: 'reading' });
      const backup = await exportBackup(db, { includeVectors: request.includeVectors });
      post({ type: 'phase', phase: 'writing' });
      post({ type: 'exported', file: new Blob([serializeBackup(backup)], { type: 'application/json' }) });
    }
  } catch (e) {
    if (isBackupError(e)) post({ type: 'failed', kind: 'backup', message: e.message, issues: e.issues });
    else post({ type: 'failed', kind: isStorageFullError(e) ? 'storage-full' : 'other', message: e instanceof Error ? e.message : String(e) });
  } finally {
    db?.close();
  }
};
