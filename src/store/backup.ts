// Backup: export everything to one versioned JSON file; import it back, validated and atomic.
// In the app both run in a worker (backup.worker.ts, driven by backup-client.ts); the functions
// here also run directly in Node, which is how the unit tests exercise them.
import { z } from 'zod';
import { RELATIONS } from '../memory/types';
import type { Edge, Id, Memory, Segment, Session, Setting, Turn, VectorRecord } from '../memory/types';
import { MAX_TEXT, MAX_TIME, MIN_TIME } from '../memory/limits';
import type { TealeafDb } from './db';
import { runWrite, tracked } from './repository';
import { STORE_NAMES } from './schema';
import {
  BACKUP_COLLECTIONS,
  BackupCancelledError,
  BackupError,
  type BackupControl,
  type BackupCounts,
  type BackupPhase,
  type ImportMode,
  type ImportSummary,
} from './backup-messages';

export {
  BACKUP_COLLECTIONS,
  BackupCancelledError,
  BackupError,
  isBackupCancelled,
  isBackupError,
} from './backup-messages';
export type {
  BackupCollection,
  BackupControl,
  BackupCounts,
  BackupPhase,
  BackupProgress,
  ImportMode,
  ImportSummary,
} from './backup-messages';

export const BACKUP_FORMAT = 'tealeaf-backup';
export const BACKUP_VERSION = 1;

/**
 * What an import accepts; anything larger is rejected before it reaches the store. Each bound is
 * above what the app itself can write (round trip is a law), and low enough that a file cannot
 * make the app misbehave after it is imported.
 */
export const BACKUP_LIMITS = {
  /** The longest text the app itself stores (src/memory/limits.ts, clampText). */
  maxString: MAX_TEXT,
  /** Records per collection and items per list: 1,000,000 turns is decades of daily chat. */
  maxArray: 1_000_000,
  /** App ids are at most ~80 characters (uuids, LoCoMo and segment ids). */
  maxId: 200,
  /** Nesting depth of any value (settings values are free-form JSON). */
  maxDepth: 64,
  /**
   * The file is read as one string, and a JavaScript string holds at most 2^29 - 24 UTF-16 units
   * in Chromium: 512 MiB is about 1.1 million memories with their turns.
   */
  maxFileBytes: 512 * 1024 * 1024,
} as const;

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** A vector in a backup: the Float32 bytes, little-endian, base64. */
export interface BackupVector {
  unitId: Id;
  modelId: string;
  dimension: number;
  data: string;
}

export interface BackupData {
  sessions: Session[];
  turns: Turn[];
  memories: Memory[];
  edges: Edge[];
  segments: Segment[];
  settings: Setting[];
  vectors?: BackupVector[];
}

export interface TealeafBackup {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_VERSION;
  exportedAt: number;
  data: BackupData;
}

// ---------------------------------------------------------------------------------------------
// Progress and cancel

/** Reports progress at most every `everyMs` within a phase; a phase's first and last always. */
class Reporter {
  private last = -Infinity;
  private phase: BackupPhase | undefined;
  constructor(
    private readonly control: BackupControl,
    private readonly everyMs = 100,
  ) {}

  report(phase: BackupPhase, done: number, total: number): void {
    const t = performance.now();
    if (phase === this.phase && done < total && t - this.last < this.everyMs) return;
    this.phase = phase;
    this.last = t;
    this.control.onProgress?.({ phase, done, total });
  }

  stopIfCancelled(): void {
    if (this.control.signal?.aborted) throw new BackupCancelledError();
  }
}

/** Lets a worker see a cancel message (and the page a progress message) during long checks. */
const pause = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

// ---------------------------------------------------------------------------------------------
// Export

export interface ExportOptions extends BackupControl {
  /** Vectors can be recomputed by re-embedding, and make the file much larger. */
  includeVectors?: boolean;
  now?: () => number;
}

/** Reads every exported store in one snapshot. Jobs are not exported (they are machine state). */
export async function exportBackup(db: TealeafDb, options: ExportOptions = {}): Promise<TealeafBackup> {
  const stores = ['sessions', 'turns', 'memories', 'edges', 'segments', 'settings', 'vectors'] as const;
  const tx = db.transaction([...stores]);
  const [sessions, turns, memories, edges, segments, settings, vectors] = await Promise.all([
    tx.objectStore('sessions').getAll(),
    tx.objectStore('turns').getAll(),
    tx.objectStore('memories').getAll(),
    tx.objectStore('edges').getAll(),
    tx.objectStore('segments').getAll(),
    tx.objectStore('settings').getAll(),
    options.includeVectors ? tx.objectStore('vectors').getAll() : Promise.resolve([]),
  ]);
  await tx.done;
  const data: BackupData = { sessions, turns, memories, edges, segments, settings };
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
  emit(`{"format":${JSON.stringify(BACKUP_FORMAT)},"version":${JSON.stringify(BACKUP_VERSION)},"exportedAt":${JSON.stringify(exportedAt)},"data":{`);
  let done = 0;
  reporter.report('collecting', 0, total);
  for (const [ci, name] of collections.entries()) {
    emit(`${ci > 0 ? ',' : ''}${JSON.stringify(name)}:[`);
    const store = tx.objectStore(name);
    let range: IDBKeyRange | undefined;
    let first = true;
    for (;;) {
      reporter.stopIfCancelled();
      const page: unknown[] = await store.getAll(range, EXPORT_PAGE);
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
  return parts;
}

function storeKeyOf(name: (typeof BACKUP_COLLECTIONS)[number], record: unknown): IDBValidKey {
  if (name === 'vectors') {
    const v = record as VectorRecord;
    return [v.unitId, v.modelId];
  }
  if (name === 'settings') return (record as Setting).key;
  return (record as { id: Id }).id;
}

export function encodeVector(v: VectorRecord): BackupVector {
  return { unitId: v.unitId, modelId: v.modelId, dimension: v.vector.length, data: float32ToBase64(v.vector) };
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function float32ToBase64(vector: Float32Array): string {
  const bytes = new Uint8Array(vector.byteLength);
  bytes.set(new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength));
  if (!LITTLE_ENDIAN) swapWords(bytes);
  let binary = '';
  // Chunked: String.fromCharCode(...bigArray) overflows the call stack.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** Undefined when the text is not base64 of whole Float32 values. */
export function base64ToFloat32(data: string): Float32Array | undefined {
  if (data.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(data)) return undefined;
  let binary: string;
  try {
    binary = atob(data);
  } catch {
    return undefined;
  }
  if (binary.length % 4 !== 0) return undefined;
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  if (!LITTLE_ENDIAN) swapWords(bytes);
  return new Float32Array(bytes.buffer);
}

function swapWords(bytes: Uint8Array): void {
  for (let i = 0; i + 3 < bytes.length; i += 4) {
    [bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]] = [bytes[i + 3], bytes[i + 2], bytes[i + 1], bytes[i]];
  }
}

// ---------------------------------------------------------------------------------------------
// Schema of a version 1 file. Strict objects: an unknown field is an error, not silently kept.

const id = z.string().min(1).max(BACKUP_LIMITS.maxId);
// Ids inside reference lists are informational (not resolved on import); an odd empty one must
// not make a whole life's backup unimportable.
const refId = z.string().max(BACKUP_LIMITS.maxId);
const text = z.string().max(BACKUP_LIMITS.maxString);
// Within the Date range: a time outside cannot be formatted or compared (zod 4 numbers are finite).
const time = z.number().min(MIN_TIME).max(MAX_TIME);
const position = z.number().int().min(0);
const list = <T extends z.ZodType>(item: T) => z.array(item).max(BACKUP_LIMITS.maxArray);

const sessionSchema = z.strictObject({
  id,
  title: text,
  startedAt: time,
  lastActivityAt: time,
  endedAt: time.optional(),
  status: z.enum(['open', 'ended', 'memorised']),
  endReason: z.enum(['button', 'new-chat', 'idle', 'import']).optional(),
});

const relation = z.enum(RELATIONS);

const usedMemorySchema = z.strictObject({
  memoryIds: list(refId),
  segmentIds: list(refId),
  timelines: list(
    z.strictObject({
      memoryIds: list(refId),
      relations: list(relation),
      through: refId,
    }),
  ),
  refined: list(text).optional(),
  scores: list(
    z.strictObject({
      unitId: refId,
      unitKind: z.enum(['memory', 'segment', 'turn']),
      lexical: z.number().optional(),
      dense: z.number().optional(),
      fused: z.number(),
      lexicalRank: position.optional(),
      denseRank: position.optional(),
    }),
  ),
});

const turnSchema = z.strictObject({
  id,
  sessionId: id,
  index: position,
  role: z.enum(['user', 'assistant']),
  text,
  time,
  status: z.enum(['complete', 'streaming', 'interrupted', 'stopped', 'error']),
  modelId: text.optional(),
  usedMemory: usedMemorySchema.optional(),
  externalId: text.optional(),
});

const memorySchema = z.strictObject({
  id,
  kind: z.enum(['event', 'user-trait', 'assistant-trait', 'note']),
  text,
  subject: text.optional(),
  time,
  sourceTurnIds: list(refId),
  sessionId: id,
  supersededBy: id.optional(),
  edited: z.boolean(),
  createdAt: time,
  context: text.optional(),
});

const edgeSchema = z.strictObject({
  id,
  from: id,
  to: id,
  relation,
  origin: z.enum(['model', 'similarity', 'user']),
  createdAt: time,
});

const segmentSchema = z.strictObject({
  id,
  sessionId: id,
  firstTurn: position,
  lastTurn: position,
  turnIds: list(refId),
  text,
  indexText: text,
  time,
});

// Setting values are free-form JSON; checkLimits has already bounded their size and depth.
const settingSchema = z.strictObject({ key: id, value: z.unknown() });

const vectorSchema = z.strictObject({
  unitId: id,
  modelId: id,
  dimension: z.number().int().min(1).max(BACKUP_LIMITS.maxString),
  data: text,
});

// The file's frame: header, and the data object with its collections as lists. Records are
// checked one by one (recordSchemas) so a large file can report progress and be cancelled.
const frameSchema = z.strictObject({
  format: z.literal(BACKUP_FORMAT),
  version: z.literal(BACKUP_VERSION),
  exportedAt: time,
  data: z.strictObject({
    sessions: list(z.unknown()),
    turns: list(z.unknown()),
    memories: list(z.unknown()),
    edges: list(z.unknown()),
    segments: list(z.unknown()),
    settings: list(z.unknown()),
    vectors: list(z.unknown()).optional(),
  }),
});

const recordSchemas: Record<(typeof BACKUP_COLLECTIONS)[number], z.ZodType> = {
  sessions: sessionSchema,
  turns: turnSchema,
  memories: memorySchema,
  edges: edgeSchema,
  segments: segmentSchema,
  settings: settingSchema,
  vectors: vectorSchema,
};

// Compile-time guard: the schemas must describe exactly the domain types (same field names, and
// each assignable to the other). Adding a field to types.ts without adding it here fails tsc.
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? SameKeys<A, B> : false) : false;
const schemaMatchesTypes: [
  Same<z.infer<typeof sessionSchema>, Session>,
  Same<z.infer<typeof turnSchema>, Turn>,
  Same<z.infer<typeof memorySchema>, Memory>,
  Same<z.infer<typeof edgeSchema>, Edge>,
  Same<z.infer<typeof segmentSchema>, Segment>,
  Same<z.infer<typeof vectorSchema>, BackupVector>,
] = [true, true, true, true, true, true];
void schemaMatchesTypes;

// ---------------------------------------------------------------------------------------------
// Validation

/** Parsed, shape-checked and self-consistent backup, with vectors decoded. */
export interface ValidBackup {
  backup: TealeafBackup;
  vectors: VectorRecord[];
}

const MAX_ISSUES = 20;

/**
 * Everything that can be checked without the store: JSON syntax, hostile keys, size limits,
 * format and version, field types, duplicates, vector encoding. Throws BackupError.
 */
export function validateBackup(input: unknown): ValidBackup {
  const value = typeof input === 'string' ? parseBackupText(input) : input;
  const { steps } = startValidation(value);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * validateBackup in steps: yields to the event loop every few dozen milliseconds (so a worker
 * sees a cancel), reports records checked, and stops with BackupCancelledError when cancelled.
 */
export async function validateBackupInSteps(value: unknown, control: BackupControl = {}): Promise<ValidBackup> {
  const reporter = new Reporter(control);
  const { total, steps } = startValidation(value);
  reporter.report('checking', 0, total);
  let since = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) {
      reporter.report('checking', total, total);
      return step.value;
    }
    if (performance.now() - since > 40) {
      reporter.report('checking', step.value, total);
      await pause();
      reporter.stopIfCancelled();
      since = performance.now();
    }
  }
}

export function parseBackupText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new BackupError([`the file is not valid JSON (${detail})`]);
  }
}

interface FrameValue {
  data: Record<(typeof BACKUP_COLLECTIONS)[number], unknown[] | undefined>;
}

/**
 * Checks the frame at once (limits of everything outside the records, header, collections are
 * lists) and returns the records still to check, as steps that yield how many are done.
 */
function startValidation(value: unknown): { total: number; steps: Generator<number, ValidBackup, void> } {
  // The records' contents are walked later, record by record.
  const isCollection = (entry: WalkEntry) =>
    entry.parent !== null &&
    entry.parent.parent === null &&
    entry.parent.key === 'data' &&
    (BACKUP_COLLECTIONS as readonly PropertyKey[]).includes(entry.key);
  const limitIssues = checkLimits(value, null, isCollection);
  if (limitIssues.length > 0) throw new BackupError(limitIssues);

  // Header first, so a file from another app or a newer version gets a message about that.
  if (!isPlainObject(value)) throw new BackupError(['the file is not a Tealeaf backup (expected a JSON object)']);
  if (value.format !== BACKUP_FORMAT) throw new BackupError(['format: the file is not a Tealeaf backup']);
  if (value.version !== BACKUP_VERSION) {
    throw new BackupError([
      `version: backup version ${JSON.stringify(value.version) ?? 'missing'} is not supported (this app reads version ${BACKUP_VERSION})`,
    ]);
  }
  const frame = frameSchema.safeParse(value);
  if (!frame.success) {
    throw new BackupError(frame.error.issues.slice(0, MAX_ISSUES).map((issue) => formatIssue(issue, value)));
  }
  const data = (value as unknown as FrameValue).data;
  const records = BACKUP_COLLECTIONS.reduce((n, c) => n + (data[c]?.length ?? 0), 0);
  const vectorCount = data.vectors?.length ?? 0;
  return { total: records + vectorCount, steps: validationSteps(value, data) };
}

function* validationSteps(root: unknown, data: FrameValue['data']): Generator<number, ValidBackup, void> {
  const issues: string[] = [];
  let done = 0;
  for (const name of BACKUP_COLLECTIONS) {
    const records = data[name] ?? [];
    const schema = recordSchemas[name];
    for (let i = 0; i < records.length; i++) {
      const at: WalkEntry = { parent: { parent: { parent: null, key: 'data' }, key: name }, key: i };
      // Limits before types: a huge or hostile value is named as such, not as a wrong type.
      const limitIssues = checkLimits(records[i], at);
      if (limitIssues.length > 0) throw new BackupError(limitIssues);
      const parsed = schema.safeParse(records[i]);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          issues.push(formatIssue({ ...issue, path: ['data', name, i, ...issue.path] }, root));
        }
        if (issues.length >= MAX_ISSUES) throw new BackupError(issues.slice(0, MAX_ISSUES));
      }
      if (++done % 256 === 0) yield done;
    }
  }
  if (issues.length > 0) throw new BackupError(issues);

  // The validated input itself, not zod's copy: zod rebuilds objects in schema key order, and
  // keeping the file's order makes export -> import -> export reproduce the file byte for byte.
  // Strict schemas without transforms guarantee both hold the same fields and values.
  const backup = root as TealeafBackup;
  issues.push(...checkConsistency(backup.data));
  const vectors: VectorRecord[] = [];
  const encoded = backup.data.vectors ?? [];
  for (let i = 0; i < encoded.length; i++) {
    const v = encoded[i];
    const vector = base64ToFloat32(v.data);
    if (!vector) issues.push(`vectors[${i}].data: not base64 of 32-bit floats`);
    else if (vector.length !== v.dimension) {
      issues.push(`vectors[${i}].data: holds ${vector.length} numbers, dimension says ${v.dimension}`);
    } else vectors.push({ unitId: v.unitId, modelId: v.modelId, vector });
    if (++done % 256 === 0) yield done;
  }
  if (issues.length > 0) throw new BackupError(issues.slice(0, MAX_ISSUES));
  return { backup, vectors };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Where a value sits: its parent's entry and its key there. The root's entry is null. */
interface WalkEntry {
  parent: WalkEntry | null;
  key: PropertyKey;
}

function entryPath(entry: WalkEntry | null): PropertyKey[] {
  const path: PropertyKey[] = [];
  for (let e = entry; e; e = e.parent) path.unshift(e.key);
  return path;
}

/**
 * Walks a value without recursion (a deeply nested file cannot overflow the stack): rejects
 * prototype-polluting keys anywhere, oversized strings and arrays, deep nesting, and anything
 * JSON cannot hold (when given an object rather than text). `at` is where the value sits in the
 * file; arrays for which `skipItems` is true are measured but their items not walked. Paths are
 * built only for the message, so a clean walk allocates no strings.
 */
function checkLimits(root: unknown, at: WalkEntry | null, skipItems?: (entry: WalkEntry) => boolean): string[] {
  const base = entryPath(at).length;
  const stack: Array<{ value: unknown; entry: WalkEntry | null; depth: number }> = [{ value: root, entry: at, depth: base }];
  while (stack.length > 0) {
    const { value, entry, depth } = stack.pop()!;
    const where = () => issuePath(entryPath(entry));
    if (typeof value === 'string') {
      if (value.length > BACKUP_LIMITS.maxString) {
        return [`${where()}: text is too long (${value.length} characters, the limit is ${BACKUP_LIMITS.maxString})`];
      }
      continue;
    }
    if (value === null || typeof value === 'boolean') continue;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return [`${where()}: expected a finite number`];
      continue;
    }
    if (typeof value !== 'object') return [`${where()}: ${typeof value} is not allowed in a backup`];
    if (depth >= BACKUP_LIMITS.maxDepth) return [`${where()}: nested too deeply`];
    if (Array.isArray(value)) {
      if (value.length > BACKUP_LIMITS.maxArray) {
        return [`${where()}: list is too long (${value.length} items, the limit is ${BACKUP_LIMITS.maxArray})`];
      }
      if (entry && skipItems?.(entry)) continue;
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], entry: { parent: entry, key: i }, depth: depth + 1 });
      continue;
    }
    if (!isPlainObject(value)) return [`${where()}: only plain JSON objects are allowed`];
    const keys = Object.getOwnPropertyNames(value);
    for (const key of keys) {
      if (FORBIDDEN_KEYS.has(key)) return [`${where()}: the key "${key}" is not allowed`];
    }
    for (let i = keys.length - 1; i >= 0; i--) {
      stack.push({ value: value[keys[i]], entry: { parent: entry, key: keys[i] }, depth: depth + 1 });
    }
  }
  return [];
}

/** ".data.memories[3].time" -> "memories[3].time": records are named the way the user sees them. */
function displayPath(path: string): string {
  return path.replace(/^\.data\./, '').replace(/^\./, '');
}

function issuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `.${String(p)}`;
  return displayPath(out) || 'the file';
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(v, p)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return v.length > 40 ? 'a string' : `the string ${JSON.stringify(v)}`;
  return `${typeof v} ${String(v)}`;
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

function formatIssue(issue: z.core.$ZodIssue, root: unknown): string {
  const where = issuePath(issue.path);
  switch (issue.code) {
    case 'invalid_type': {
      const present = valueAt(root, issue.path);
      const expected = issue.expected === 'int' ? 'integer' : issue.expected;
      return present === undefined
        ? `${where}: missing (expected ${article(expected)})`
        : `${where}: expected ${article(expected)}, got ${describe(present)}`;
    }
    case 'unrecognized_keys':
      return `${where}: unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    case 'invalid_value': {
      const present = valueAt(root, issue.path);
      const options = issue.values.map((v) => JSON.stringify(v)).join(', ');
      return present === undefined
        ? `${where}: missing (expected one of ${options})`
        : `${where}: expected one of ${options}, got ${describe(present)}`;
    }
    case 'too_big':
      return issue.origin === 'string' || issue.origin === 'array'
        ? `${where}: too long (the limit is ${String(issue.maximum)})`
        : `${where}: too large (the limit is ${String(issue.maximum)})`;
    case 'too_small':
      return issue.origin === 'string' ? `${where}: must not be empty` : `${where}: too small (the minimum is ${String(issue.minimum)})`;
    default:
      return `${where}: ${issue.message}`;
  }
}

/** Duplicates inside the file (which would silently overwrite each other). */
function checkConsistency(data: BackupData): string[] {
  const issues: string[] = [];
  const unique = <T>(name: string, records: readonly T[], keyOf: (r: T) => string, label: (r: T) => string) => {
    const seen = new Set<string>();
    records.forEach((r, i) => {
      const key = keyOf(r);
      if (seen.has(key)) issues.push(`${name}[${i}]: duplicate ${label(r)}`);
      seen.add(key);
    });
  };
  unique('sessions', data.sessions, (r) => r.id, (r) => `id ${JSON.stringify(r.id)}`);
  unique('turns', data.turns, (r) => r.id, (r) => `id ${JSON.stringify(r.id)}`);
  unique('turns', data.turns, (r) => JSON.stringify([r.sessionId, r.index]), (r) => `index ${r.index} in session ${JSON.stringify(r.sessionId)}`);
  unique('memories', data.memories, (r) => r.id, (r) => `id ${JSON.stringify(r.id)}`);
  unique('edges', data.edges, (r) => r.id, (r) => `id ${JSON.stringify(r.id)}`);
  unique('segments', data.segments, (r) => r.id, (r) => `id ${JSON.stringify(r.id)}`);
  unique('settings', data.settings, (r) => r.key, (r) => `key ${JSON.stringify(r.key)}`);
  unique('vectors', data.vectors ?? [], (r) => JSON.stringify([r.unitId, r.modelId]), (r) => `vector for ${JSON.stringify(r.unitId)} and model ${JSON.stringify(r.modelId)}`);
  return issues.slice(0, 20);
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
    if (m.supersededBy !== undefined && !memoryIds.has(m.supersededBy)) issues.push(`memories[${i}].supersededBy: no memory ${q(m.supersededBy)} in the file or in your data`);
  });
  data.edges.forEach((e, i) => {
    if (!memoryIds.has(e.from)) issues.push(`edges[${i}].from: no memory ${q(e.from)} in the file or in your data`);
    if (!memoryIds.has(e.to)) issues.push(`edges[${i}].to: no memory ${q(e.to)} in the file or in your data`);
  });
  vectors.forEach((v, i) => {
    if (!memoryIds.has(v.unitId) && !segmentIds.has(v.unitId)) issues.push(`vectors[${i}].unitId: no memory or passage ${q(v.unitId)} in the file or in your data`);
  });
  return issues;
}

export interface ImportOptions extends BackupControl {
  /** merge: keep what exists and skip records whose id is taken. replace: wipe, then write. */
  mode: ImportMode;
}

function zeroCounts(): BackupCounts {
  return { sessions: 0, turns: 0, memories: 0, edges: 0, segments: 0, settings: 0, vectors: 0 };
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

  return runWrite(db, STORE_NAMES, async (tx) => {
    const store = <N extends (typeof STORE_NAMES)[number]>(name: N) => tx.objectStore(name);
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
        vectors: new Set(),
      };
    } else {
      const [sessions, turns, memories, edges, segments, settings, vectorKeys] = await Promise.all([
        store('sessions').getAllKeys(),
        store('turns').getAllKeys(),
        store('memories').getAllKeys(),
        store('edges').getAllKeys(),
        store('segments').getAllKeys(),
        store('settings').getAllKeys(),
        vectors.length > 0 ? store('vectors').getAllKeys() : Promise.resolve([] as Array<[Id, string]>),
      ]);
      existing = {
        sessions: new Set(sessions),
        turns: new Set(turns),
        memories: new Set(memories),
        edges: new Set(edges),
        segments: new Set(segments),
        settings: new Set(settings),
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
    const putAll = <T>(name: 'sessions' | 'memories' | 'edges' | 'segments' | 'settings', records: readonly T[], keyOf: (r: T) => string, put: (r: T) => Promise<unknown>) => {
      for (const r of records) {
        if (existing[name].has(keyOf(r))) skipped[name]++;
        else {
          puts.push(() => put(r));
          added[name]++;
        }
      }
    };
    putAll('sessions', data.sessions, (r) => r.id, (r) => store('sessions').put(r));
    putAll('memories', data.memories, (r) => r.id, (r) => store('memories').put(r));
    putAll('edges', data.edges, (r) => r.id, (r) => store('edges').put(r));
    putAll('segments', data.segments, (r) => r.id, (r) => store('segments').put(r));
    skipped.turns += data.turns.length - newTurns.length;
    newTurns.forEach((t, i) => {
      if (taken[i] > 0) skipped.turns++;
      else {
        puts.push(() => store('turns').put(t));
        added.turns++;
      }
    });
    putAll('settings', data.settings, (r) => r.key, (r) => store('settings').put(r));
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
    return { added, skipped };
  });
}
