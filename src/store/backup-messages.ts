// Messages between the page and the backup worker (backup.worker.ts): typed both ways.
import type { BackupPhase, ImportMode, ImportSummary } from './backup';

export type BackupRequest =
  | { type: 'import'; file: Blob; mode: ImportMode }
  | { type: 'export'; includeVectors: boolean };

export type BackupReply =
  | { type: 'phase'; phase: BackupPhase }
  | { type: 'imported'; summary: ImportSummary }
  | { type: 'exported'; file: Blob }
  /** kind: which error the page rebuilds, so its message and type survive the worker boundary. */
  | { type: 'failed'; kind: 'backup' | 'storage-full' | 'other'; message: string; issues?: string[] };
