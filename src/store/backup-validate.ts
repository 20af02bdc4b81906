// Validation of a backup file before anything is written: JSON syntax, hostile keys, size
// limits, format and version, every record's fields, duplicates and vector encoding. Large files
// are checked in steps (a worker sees Cancel, the page sees progress).
import type { z } from 'zod';
import type { Memory, Turn, VectorRecord } from '../memory/types';
import { flattenVersions, hasNestedVersions } from './legacy-versions';
import { BACKUP_COLLECTIONS, BackupCancelledError, BackupError, type BackupControl, type BackupPhase } from './backup-messages';
import {
  BACKUP_FORMAT,
  BACKUP_LIMITS,
  BACKUP_VERSION,
  FORBIDDEN_KEYS,
  base64ToFloat32,
  frameSchema,
  readableMemory,
  recordSchemas,
  type BackupData,
  type TealeafBackup,
} from './backup-format';

// ---------------------------------------------------------------------------------------------
// Progress and cancel

/** Reports progress at most every `everyMs` within a phase; a phase's first and last always. */
export class Reporter {
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
export const pause = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

// ---------------------------------------------------------------------------------------------
// Validation

/** Parsed, shape-checked and self-consistent backup, with vectors decoded. */
export interface ValidBackup {
  backup: TealeafBackup;
  vectors: VectorRecord[];
}

export const MAX_ISSUES = 20;

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
  // Turns from a file made before the branches were flat, made flat first (legacy-versions.ts):
  // the nesting that grew with each edit is what made such files too deep to import.
  let flatTurns: unknown[] | undefined;
  // Memories of a kind from a later version, read as notes (readableMemory).
  let readMemories: unknown[] | undefined;
  for (const name of BACKUP_COLLECTIONS) {
    const records = data[name] ?? [];
    const schema = recordSchemas[name];
    for (let i = 0; i < records.length; i++) {
      if (name === 'turns' && hasNestedVersions(records[i])) {
        flatTurns ??= [...records];
        flatTurns[i] = flattenVersions(records[i]);
      }
      if (name === 'memories' && readableMemory(records[i]) !== records[i]) {
        readMemories ??= [...records];
        readMemories[i] = readableMemory(records[i]);
      }
      const record = name === 'turns' && flatTurns ? flatTurns[i] : name === 'memories' && readMemories ? readMemories[i] : records[i];
      const at: WalkEntry = { parent: { parent: { parent: null, key: 'data' }, key: name }, key: i };
      // Limits before types: a huge or hostile value is named as such, not as a wrong type.
      const limitIssues = checkLimits(record, at);
      if (limitIssues.length > 0) throw new BackupError(limitIssues);
      const parsed = schema.safeParse(record);
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
  const file = root as TealeafBackup;
  const backup =
    flatTurns || readMemories
      ? {
          ...file,
          data: {
            ...file.data,
            ...(flatTurns ? { turns: flatTurns as Turn[] } : {}),
            ...(readMemories ? { memories: readMemories as Memory[] } : {}),
          },
        }
      : file;
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

/**
 * One record against the backup's rules (its limits, then its schema), with no file around it:
 * the gate synced records pass (src/services/sync/record-gate.ts). Problems are named by field.
 */
export function recordIssues(collection: (typeof BACKUP_COLLECTIONS)[number], record: unknown): string[] {
  const limitIssues = checkLimits(record, null);
  const parsed = limitIssues.length > 0 ? undefined : recordSchemas[collection].safeParse(record);
  const issues = parsed ? (parsed.error?.issues.slice(0, 3).map((issue) => formatIssue(issue, record)) ?? []) : limitIssues;
  return issues.map((s) => s.replace(/^the file/, 'the record'));
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
    if (value === undefined) return [`${where()}: missing (undefined is not a JSON value)`];
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
  unique(
    'sessions',
    data.sessions,
    (r) => r.id,
    (r) => `id ${JSON.stringify(r.id)}`,
  );
  unique(
    'turns',
    data.turns,
    (r) => r.id,
    (r) => `id ${JSON.stringify(r.id)}`,
  );
  unique(
    'turns',
    data.turns,
    (r) => JSON.stringify([r.sessionId, r.index]),
    (r) => `index ${r.index} in session ${JSON.stringify(r.sessionId)}`,
  );
  unique(
    'memories',
    data.memories,
    (r) => r.id,
    (r) => `id ${JSON.stringify(r.id)}`,
  );
  unique(
    'edges',
    data.edges,
    (r) => r.id,
    (r) => `id ${JSON.stringify(r.id)}`,
  );
  unique(
    'segments',
    data.segments,
    (r) => r.id,
    (r) => `id ${JSON.stringify(r.id)}`,
  );
  unique(
    'settings',
    data.settings,
    (r) => r.key,
    (r) => `key ${JSON.stringify(r.key)}`,
  );
  unique(
    'tombstones',
    data.tombstones ?? [],
    (r) => JSON.stringify([r.kind, r.id]),
    (r) => `${r.kind} ${JSON.stringify(r.id)}`,
  );
  unique(
    'vectors',
    data.vectors ?? [],
    (r) => JSON.stringify([r.unitId, r.modelId]),
    (r) => `vector for ${JSON.stringify(r.unitId)} and model ${JSON.stringify(r.modelId)}`,
  );
  return issues.slice(0, 20);
}
