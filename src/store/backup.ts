// Backup: export everything to one versioned JSON file; import it back, validated and atomic.
// In the app both run in a worker (backup.worker.ts, driven by backup-client.ts); the functions
// here also run directly in Node, which is how the unit tests exercise them. The format is in
// backup-format.ts, its checks in backup-validate.ts.
import type { Id, Segment, Setting, Tombstone, Turn, VectorRecord } from '../memory/types';
import { fitTurn } from './fit';
import { isSelfLink } from '../memory/limits';
import { turnSources } from '../memory/derived';
import { isForgotten, rebuildSegment } from '../memory/forget/lines';
import type { TealeafDb } from './db';
import { runWrite, tracked } from './write-transaction';
import { putSyncRows } from './sync-store';
import { DEMO_DB_NAME, STORE_NAMES } from './schema';
import { BACKUP_COLLECTIONS, type BackupControl, type BackupCounts, type ImportMode, type ImportSummary } from './backup-messages';
import { BACKUP_FORMAT, BACKUP_VERSION, encodeVector, type BackupData, type TealeafBackup } from './backup-format';
import { BackupError } from './backup-messages';
import { MAX_ISSUES, parseBackupText, Reporter, validateBackupInSteps } from './backup-validate';

export { BACKUP_COLLECTIONS, BackupCancelledError, BackupError, isBackupCancelled, isBackupError } from './backup-messages';
export type {
  BackupCollection,
  BackupControl,
  BackupCounts,
  BackupPhase,
  BackupProgress,
  ImportMode,
  ImportSummary,
} from './backup-messages';
export {
  BACKUP_FORMAT,
  BACKUP_LIMITS,
  BACKUP_VERSION,
  base64ToFloat32,
  encodeVector,
  float32ToBase64,
  type BackupData,
  type BackupVector,
  type TealeafBackup,
} from './backup-format';
export { parseBackupText, validateBackup, validateBackupInSteps, type ValidBackup } from './backup-validate';

// ---------------------------------------------------------------------------------------------
// Export

export interface ExportOptions extends BackupControl {
  /** Vectors can be recomputed by re-embedding, and make the file much larger. */
  includeVectors?: boolean;
  now?: () => number;
}

/**
 * The demo's database holds a copy of the user's model choices so the same models load there;
 * settings are the user's, not the demo's, so an export of the demo carries none.
 */
function demoSpace(db: TealeafDb): boolean {
  return db.name === DEMO_DB_NAME;
}

/** Reads every exported store in one snapshot. Jobs are not exported (they are machine state). */
export async function exportBackup(db: TealeafDb, options: ExportOptions = {}): Promise<TealeafBackup> {
  const stores = ['sessions', 'turns', 'memories', 'edges', 'segments', 'settings', 'tombstones', 'vectors'] as const;
  const tx = db.transaction([...stores]);
  const [sessions, turns, memories, edges, segments, settings, tombstones, vectors] = await Promise.all([
    tx.objectStore('sessions').getAll(),
    tx.objectStore('turns').getAll(),
    tx.objectStore('memories').getAll(),
    tx.objectStore('edges').getAll(),
    tx.objectStore('segments').getAll(),
    demoSpace(db) ? Promise.resolve([]) : tx.objectStore('settings').getAll(),
    tx.objectStore('tombstones').getAll(),
    options.includeVectors ? tx.objectStore('vectors').getAll() : Promise.resolve([]),
  ]);
  await tx.done;
  const data: BackupData = { sessions, turns, memories, edges, segments, settings, tombstones };
  if (options.includeVectors) data.vectors = vectors.map(encodeVector);
  return {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    exportedAt: (options.now ?? Date.now)(),
    data,
  };
}

/** The file's text. */
export function serializeBackup(backup: TealeafBackup): string {
  return JSON.stringify(backup);
}

const EXPORT_PAGE = 2_000;
const EXPORT_PART_CHARS = 1 << 20;

/**
 * The same text as serializeBackup(await exportBackup(...)), as parts of about a million
 * characters for a Blob: the stores are read page by page inside one snapshot, and no object
 * holding the whole backup nor one string of the whole file is ever built. Every part is whole
 * JSON text of whole records, so no surrogate pair is split between parts (a Blob would write each
 * half as U+FFFD).
 */
export async function exportBackupParts(db: TealeafDb, options: ExportOptions = {}): Promise<string[]> {
  return (await exportBackupFile(db, options)).parts;
}

/** exportBackupParts with how many records of each collection the file holds (for the user). */
export async function exportBackupFile(db: TealeafDb, options: ExportOptions = {}): Promise<{ parts: string[]; counts: BackupCounts }> {
  const reporter = new Reporter(options);
  const collections = BACKUP_COLLECTIONS.filter((c) => c !== 'vectors' || options.includeVectors);
  const tx = db.transaction([...collections]);
  const counts = await Promise.all(collections.map((c) => tx.objectStore(c).count()));
  const total = counts.reduce((a, b) => a + b, 0);
  const parts: string[] = [];
  let pending: string[] = [];
  let pendingChars = 0;
  const emit = (s: string) => {
    pending.push(s);
    pendingChars += s.length;
    if (pendingChars >= EXPORT_PART_CHARS) {
      parts.push(pending.join(''));
      pending = [];
      pendingChars = 0;
    }
  };
  const exportedAt = (options.now ?? Date.now)();
  emit(
    `{"format":${JSON.stringify(BACKUP_FORMAT)},"version":${JSON.stringify(BACKUP_VERSION)},"exportedAt":${JSON.stringify(exportedAt)},"data":{`,
  );
  let done = 0;
  reporter.report('collecting', 0, total);
  for (const [ci, name] of collections.entries()) {
    emit(`${ci > 0 ? ',' : ''}${JSON.stringify(name)}:[`);
    const store = tx.objectStore(name);
    let range: IDBKeyRange | undefined;
    let first = true;
    for (;;) {
      reporter.stopIfCancelled();
      const page: unknown[] = name === 'settings' && demoSpace(db) ? [] : await store.getAll(range, EXPORT_PAGE);
      for (const record of page) {
        const value = name === 'vectors' ? encodeVector(record as VectorRecord) : record;
        emit((first ? '' : ',') + JSON.stringify(value));
        first = false;
      }
      done += page.length;
      reporter.report('collecting', done, total);
      if (page.length < EXPORT_PAGE) break;
      range = IDBKeyRange.lowerBound(storeKeyOf(name, page[page.length - 1]), true);
    }
    emit(']');
  }
  emit('}}');
  await tx.done;
  if (pending.length > 0) parts.push(pending.join(''));
  const counted = zeroCounts();
  collections.forEach((c, i) => (counted[c] = counts[i] ?? 0));
  return { parts, counts: counted };
}

function storeKeyOf(name: (typeof BACKUP_COLLECTIONS)[number], record: unknown): IDBValidKey {
  if (name === 'vectors') {
    const v = record as VectorRecord;
    return [v.unitId, v.modelId];
  }
  if (name === 'settings') return (record as Setting).key;
  if (name === 'tombstones') return [(record as Tombstone).kind, (record as Tombstone).id];
  return (record as { id: Id }).id;
}

// ---------------------------------------------------------------------------------------------
// Import

/** What the store keeps of each kind, by key, when the import writes. */
interface ExistingKeys {
  sessions: Set<string>;
  memories: Set<string>;
  segments: Set<string>;
}

/**
 * The import's reference check, run inside its write transaction: every reference in the file
 * must resolve against the file plus what the store keeps (after a replace's wipe: the file
 * alone). One line per dangling reference.
 */
function checkImportReferences(data: BackupData, vectors: readonly VectorRecord[], existing: ExistingKeys): string[] {
  const sessionIds = new Set([...existing.sessions, ...data.sessions.map((s) => s.id)]);
  const memoryIds = new Set([...existing.memories, ...data.memories.map((m) => m.id)]);
  const segmentIds = new Set([...existing.segments, ...data.segments.map((s) => s.id)]);
  const issues: string[] = [];
  const q = JSON.stringify;
  data.turns.forEach((t, i) => {
    if (!sessionIds.has(t.sessionId)) issues.push(`turns[${i}].sessionId: no session ${q(t.sessionId)} in the file or in your data`);
  });
  data.segments.forEach((s, i) => {
    if (!sessionIds.has(s.sessionId)) issues.push(`segments[${i}].sessionId: no session ${q(s.sessionId)} in the file or in your data`);
  });
  data.memories.forEach((m, i) => {
    if (m.supersededBy !== undefined && !memoryIds.has(m.supersededBy))
      issues.push(`memories[${i}].supersededBy: no memory ${q(m.supersededBy)} in the file or in your data`);
  });
  data.edges.forEach((e, i) => {
    if (!memoryIds.has(e.from)) issues.push(`edges[${i}].from: no memory ${q(e.from)} in the file or in your data`);
    if (!memoryIds.has(e.to)) issues.push(`edges[${i}].to: no memory ${q(e.to)} in the file or in your data`);
  });
  vectors.forEach((v, i) => {
    if (!memoryIds.has(v.unitId) && !segmentIds.has(v.unitId))
      issues.push(`vectors[${i}].unitId: no memory or passage ${q(v.unitId)} in the file or in your data`);
  });
  return issues;
}

/**
 * A turn as the store keeps it: within the limits (a backup made before may hold a model name a
 * server made up), and `drewOn`, which is derived, recomputed from its versions and branches rather
 * than taken from the file.
 */
function withDrewOn(t: Turn): Turn {
  const next = { ...fitTurn(t) };
  const drewOn = turnSources(t);
  if (drewOn.length > 0) next.drewOn = drewOn;
  else delete next.drewOn;
  return next;
}

/**
 * The file's passages as their lines are (src/memory/forget/lines.ts): a file whose passages
 * still hold a line it marks forgotten (made by hand, or by an older version) is not recalled from.
 */
function withoutForgotten(segments: readonly Segment[], turns: readonly Turn[]): Segment[] {
  if (!turns.some(isForgotten)) return [...segments];
  const byId = new Map(turns.map((t) => [t.id, t]));
  return segments.map((s) => (s.turnIds.some((id) => isForgotten(byId.get(id))) ? rebuildSegment(s, byId) : s));
}

export interface ImportOptions extends BackupControl {
  /** merge: keep what exists and skip records whose id is taken. replace: wipe, then write. */
  mode: ImportMode;
}

function zeroCounts(): BackupCounts {
  return { sessions: 0, turns: 0, memories: 0, edges: 0, segments: 0, settings: 0, tombstones: 0, vectors: 0 };
}

/** Puts issued per round trip: each batch is awaited (keeping the transaction alive) before the next. */
const WRITE_BATCH = 2_000;

/**
 * Validates, then writes in one transaction over every store: on any error (invalid file,
 * dangling reference, full disk) or a cancel before the commit, nothing changes. `input` is the
 * file's text or its parsed value. Throws BackupError, StorageFullError or BackupCancelledError.
 */
export async function importBackup(db: TealeafDb, input: unknown, options: ImportOptions): Promise<ImportSummary> {
  const reporter = new Reporter(options);
  reporter.stopIfCancelled();
  let value = input;
  if (typeof input === 'string') {
    reporter.report('parsing', 0, 1);
    value = parseBackupText(input);
    reporter.report('parsing', 1, 1);
    reporter.stopIfCancelled();
  }
  const { backup, vectors } = await validateBackupInSteps(value, options);
  reporter.stopIfCancelled();
  const data = backup.data;
  const added = zeroCounts();
  const skipped = zeroCounts();

  return runWrite(db, [...STORE_NAMES, 'sync'], async (tx) => {
    const store = <N extends (typeof STORE_NAMES)[number]>(name: N) => tx.objectStore(name);
    // With sync on, the import goes out to the paired devices too: a `reconcile` row in
    // this same transaction tells the sync loop to take the store into its document.
    const sync = tx.objectStore('sync');
    if ((await sync.count('config')) > 0)
      await putSyncRows(sync, { puts: [{ key: 'reconcile', value: { mode: options.mode, at: Date.now() } }] });
    let existing: Record<keyof BackupCounts, Set<string>>;
    if (options.mode === 'replace') {
      // The wipe is part of this transaction: a failed or cancelled import leaves the old data.
      await Promise.all(STORE_NAMES.map((name) => store(name).clear()));
      existing = {
        sessions: new Set(),
        turns: new Set(),
        memories: new Set(),
        edges: new Set(),
        segments: new Set(),
        settings: new Set(),
        tombstones: new Set(),
        vectors: new Set(),
      };
    } else {
      const [sessions, turns, memories, edges, segments, settings, tombstones, vectorKeys] = await Promise.all([
        store('sessions').getAllKeys(),
        store('turns').getAllKeys(),
        store('memories').getAllKeys(),
        store('edges').getAllKeys(),
        store('segments').getAllKeys(),
        store('settings').getAllKeys(),
        store('tombstones').getAllKeys(),
        vectors.length > 0 ? store('vectors').getAllKeys() : Promise.resolve([] as Array<[Id, string]>),
      ]);
      existing = {
        sessions: new Set(sessions),
        turns: new Set(turns),
        memories: new Set(memories),
        edges: new Set(edges),
        segments: new Set(segments),
        settings: new Set(settings),
        tombstones: new Set(tombstones.map((k) => JSON.stringify(k))),
        vectors: new Set(vectorKeys.map((k) => JSON.stringify(k))),
      };
    }

    const refIssues = checkImportReferences(data, vectors, existing);
    if (refIssues.length > 0) throw new BackupError(refIssues.slice(0, MAX_ISSUES));

    // Merge: a new turn at a position its session already fills is skipped like an existing id.
    const newTurns = data.turns.filter((t) => !existing.turns.has(t.id));
    const taken =
      options.mode === 'merge'
        ? await Promise.all(newTurns.map((t) => store('turns').index('bySessionIndex').count([t.sessionId, t.index])))
        : newTurns.map(() => 0);

    // Every put, in store order, issued below in batches.
    const puts: Array<() => Promise<unknown>> = [];
    const putAll = <T>(
      name: 'sessions' | 'memories' | 'edges' | 'segments' | 'settings' | 'tombstones',
      records: readonly T[],
      keyOf: (r: T) => string,
      put: (r: T) => Promise<unknown>,
    ) => {
      for (const r of records) {
        if (existing[name].has(keyOf(r))) skipped[name]++;
        else {
          puts.push(() => put(r));
          added[name]++;
        }
      }
    };
    putAll(
      'sessions',
      data.sessions,
      (r) => r.id,
      (r) => store('sessions').put(r),
    );
    putAll(
      'memories',
      data.memories,
      (r) => r.id,
      (r) => store('memories').put(r),
    );
    // A link from a memory to itself is not kept (limits.ts): left out, and counted for the words.
    const links = data.edges.filter((e) => !isSelfLink(e));
    const selfLinks = data.edges.length - links.length;
    putAll(
      'edges',
      links,
      (r) => r.id,
      (r) => store('edges').put(r),
    );
    putAll(
      'segments',
      withoutForgotten(data.segments, data.turns),
      (r) => r.id,
      (r) => store('segments').put(r),
    );
    skipped.turns += data.turns.length - newTurns.length;
    newTurns.forEach((t, i) => {
      if (taken[i] > 0) skipped.turns++;
      else {
        puts.push(() => store('turns').put(withDrewOn(t)));
        added.turns++;
      }
    });
    putAll(
      'settings',
      data.settings,
      (r) => r.key,
      (r) => store('settings').put(r),
    );
    // What the user deleted is kept out of later history imports here too (a merge adds the file's).
    putAll(
      'tombstones',
      data.tombstones ?? [],
      (r) => JSON.stringify([r.kind, r.id]),
      (r) => store('tombstones').put(r),
    );
    // Packs are derived from the vectors: any vector written makes them stale.
    if (vectors.length > 0) puts.push(() => store('vectorPacks').clear());
    for (const v of vectors) {
      if (existing.vectors.has(JSON.stringify([v.unitId, v.modelId]))) skipped.vectors++;
      else {
        puts.push(() => store('vectors').put(v));
        added.vectors++;
      }
    }

    reporter.report('writing', 0, puts.length);
    for (let i = 0; i < puts.length; i += WRITE_BATCH) {
      // A cancel seen here aborts this transaction (runWrite): nothing of the import stays.
      reporter.stopIfCancelled();
      const batch = puts.slice(i, i + WRITE_BATCH).map((put) => tracked(put()));
      await Promise.all(batch);
      reporter.report('writing', Math.min(i + WRITE_BATCH, puts.length), puts.length);
    }
    // The last moment a cancel can still undo everything: the commit follows.
    reporter.stopIfCancelled();
    return { added, skipped, selfLinks };
  });
}
