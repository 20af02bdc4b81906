// The store's public surface: the only way the rest of the app reaches IndexedDB.
export { openTealeafDb, BLOCKED_MESSAGE } from './db';
export type { BlockedInfo, OpenTealeafDbOptions, TealeafDb } from './db';
export { IdbRepository } from './repository';
export { StorageFullError, isStorageFullError, isQuotaError, DatabaseTooNewError, STORAGE_FULL_MESSAGE } from './errors';
export {
  exportBackup,
  serializeBackup,
  importBackup,
  validateBackup,
  BackupError,
  isBackupError,
  BACKUP_FORMAT,
  BACKUP_VERSION,
  BACKUP_LIMITS,
} from './backup';
export type { TealeafBackup, BackupData, BackupVector, ImportMode, ImportOptions, ImportSummary, ExportOptions } from './backup';
export { deleteTealeafDb } from './db';
export { DB_NAME, DEMO_DB_NAME, DB_VERSION, MIGRATIONS, STORE_NAMES } from './schema';
export type { Migration, StoreName, TealeafSchema } from './schema';
export { readSyncRows, writeSyncRows, clearSyncRows } from './sync-store';
export type { SyncRows } from './sync-store';
