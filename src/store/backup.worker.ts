// Backup import and export off the page's thread: reading a 50 MB file, parsing it, checking
// every record and writing them in one transaction never freezes the page. Workers reach
// IndexedDB directly; this worker opens its own connection through the store's code.
import { createBackupWorker } from './backup-worker-core';
import type { BackupReply, BackupRequest } from './backup-messages';
import { openTealeafDb } from './db';

const scope = self as unknown as {
  postMessage(reply: BackupReply): void;
  onmessage: ((event: MessageEvent<BackupRequest>) => void) | null;
};

const handle = createBackupWorker({
  openDb: (name) => openTealeafDb({ name }),
  post: (reply) => scope.postMessage(reply),
});

scope.onmessage = (event) => void handle(event.data);
