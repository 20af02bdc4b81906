// What the page and the backup worker (backup.worker.ts) say to each other, and the types both
// sides share. Kept free of zod and idb so the page's side (backup-client.ts) stays small.

export const BACKUP_COLLECTIONS = ['sessions', 'turns', 'memories', 'edges', 'segments', 'settings', 'tombstones', 'vectors'] as const;
export type BackupCollection = (typeof BACKUP_COLLECTIONS)[number];
export type BackupCounts = Record<BackupCollection, number>;

export interface ImportSummary {
  added: BackupCounts;
  skipped: BackupCounts;
  /** Links from a memory to itself in the file, not imported (src/memory/limits.ts, isSelfLink). */
  selfLinks: number;
}

export type ImportMode = 'merge' | 'replace';

/** A finished export: the file and how many records of each collection it holds. */
export interface ExportResult {
  file: Blob;
  counts: BackupCounts;
}

/**
 * Import: reading (bytes of the file), parsing (0 or 1), checking (records), writing (records).
 * Export: collecting (records read from the store). reloading: the page rebuilds its memory
 * index after an import (reported by the service, not by the worker).
 */
export type BackupPhase = 'reading' | 'parsing' | 'checking' | 'writing' | 'collecting' | 'reloading';

export interface BackupProgress {
  phase: BackupPhase;
  done: number;
  total: number;
}

/** Progress and cancel for one import or export. */
export interface BackupControl {
  onProgress?: (p: BackupProgress) => void;
  signal?: AbortSignal;
}

/** The file was refused; `issues` lists what is wrong (path: problem), `message` the first few. */
export class BackupError extends Error {
  override readonly name = 'BackupError';
  constructor(readonly issues: string[]) {
    super(
      `This backup cannot be imported: ${issues.slice(0, 3).join('; ')}` +
        (issues.length > 3 ? ` (and ${issues.length - 3} more problems)` : ''),
    );
  }
}

export function isBackupError(e: unknown): e is BackupError {
  return e instanceof BackupError;
}

/** The user cancelled before anything was written: the store is as it was. */
export class BackupCancelledError extends Error {
  override readonly name = 'BackupCancelledError';
  constructor() {
    super('Cancelled. Nothing was changed.');
  }
}

export function isBackupCancelled(e: unknown): e is BackupCancelledError {
  return e instanceof BackupCancelledError;
}

export type BackupRequest =
  /** `db`: which database (the user's own or the demo's); the user's own when left out. */
  | { type: 'import'; file: Blob; mode: ImportMode; db?: string }
  | { type: 'export'; includeVectors: boolean; db?: string }
  /** Stop at the next safe point; an import's transaction is aborted, never half-committed. */
  | { type: 'cancel' };

export type BackupReply =
  | { type: 'progress'; progress: BackupProgress }
  | { type: 'imported'; summary: ImportSummary }
  /** counts: records of each collection in the file, for the confirmation the user reads. */
  | { type: 'exported'; file: Blob; counts: BackupCounts }
  | { type: 'cancelled' }
  /** kind: which error the page rebuilds, so its type and message survive the worker boundary. */
  | { type: 'failed'; kind: 'backup' | 'storage-full' | 'other'; message: string; issues?: string[] };
