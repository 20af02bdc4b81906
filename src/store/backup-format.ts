// The backup file format, version 1: its header, limits, record schemas (strict: an unknown field
// is an error) and the encoding of vectors. What the app can store must fit these (round trip is
// a law: src/memory/limits.ts sets both).
import { z } from 'zod';
import { COMMAND_KINDS, COMMAND_STATES, REFLECTION_OUTCOMES, RELATIONS } from '../memory/types';
import type { Edge, Id, Memory, Segment, Session, Setting, Tombstone, Turn, VectorRecord } from '../memory/types';
import { MAX_TEXT, MAX_TIME, MIN_TIME } from '../memory/limits';
import { BACKUP_COLLECTIONS } from './backup-messages';

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

export const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

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
  /** What the user deleted (absent in files made by older versions). */
  tombstones?: Tombstone[];
  vectors?: BackupVector[];
}

export interface TealeafBackup {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_VERSION;
  exportedAt: number;
  data: BackupData;
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
  deviceId: id.optional(),
  follows: refId.optional(),
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
      topic: z.number().min(0).max(1).optional(),
      topicRank: position.optional(),
    }),
  ),
  personaIds: list(refId).optional(),
  reflected: z.enum(REFLECTION_OUTCOMES).optional(),
  requery: text.optional(),
  reflectedOn: list(refId).optional(),
  earlierTurnIds: list(refId).optional(),
  earlierBy: z.enum(['meaning', 'words', 'unread']).optional(),
});

const turnStatus = z.enum(['complete', 'streaming', 'interrupted', 'stopped', 'error']);
const count = z.number().int().nonnegative().max(100_000_000);
const replyStartSchema = z.strictObject({ waitMs: count, promptTokens: count, readTokens: count });
// The answer to a memory command (src/services/commands/).
const commandSchema = z.strictObject({ kind: z.enum(COMMAND_KINDS), state: z.enum(COMMAND_STATES), lines: list(refId).optional() });

// Versions of a turn, and the turns put away with them, flat (src/services/turn-versions.ts): a
// branch turn names the version it followed. Files with the older nested form (`after` inside a
// version) are made flat before these checks (legacy-versions.ts).
const turnVersionSchema = z.strictObject({
  text,
  time,
  status: turnStatus,
  modelId: text.optional(),
  usedMemory: usedMemorySchema.optional(),
  start: replyStartSchema.optional(),
});

const branchTurnSchema = z.strictObject({
  id,
  role: z.enum(['user', 'assistant']),
  text,
  time,
  status: turnStatus,
  modelId: text.optional(),
  usedMemory: usedMemorySchema.optional(),
  start: replyStartSchema.optional(),
  externalId: text.optional(),
  versions: list(turnVersionSchema).optional(),
  shown: position.optional(),
  follows: z.strictObject({ turnId: refId, version: position }),
  command: commandSchema.optional(),
});

const turnSchema = z.strictObject({
  id,
  sessionId: id,
  index: position,
  role: z.enum(['user', 'assistant']),
  text,
  time,
  status: turnStatus,
  modelId: text.optional(),
  usedMemory: usedMemorySchema.optional(),
  start: replyStartSchema.optional(),
  // Derived (src/memory/derived.ts): an import recomputes it rather than trusting the file.
  drewOn: list(refId).optional(),
  externalId: text.optional(),
  versions: list(turnVersionSchema).optional(),
  shown: position.optional(),
  branches: list(branchTurnSchema).optional(),
  command: commandSchema.optional(),
  // A forgotten line (src/memory/forget/): kept for the user to read, never recalled. The file's
  // passages are already rebuilt without it, and an import keeps the mark.
  forgotten: z.strictObject({ at: time, by: list(refId) }).optional(),
});

/** The memory kinds this version stores (a kind added later is a plain addition here). */
export const BACKUP_MEMORY_KINDS = ['event', 'user-trait', 'assistant-trait', 'note', 'instruction'] as const;

/**
 * A memory of a kind this version does not know (a file from a later version) is read as a note:
 * its words are kept and searched, and the rest of the file imports. Anything else is unchanged.
 */
export function readableMemory(record: unknown): unknown {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return record;
  const kind = (record as { kind?: unknown }).kind;
  if (typeof kind !== 'string' || (BACKUP_MEMORY_KINDS as readonly string[]).includes(kind)) return record;
  // Only what reads as a kind's name (lower-case words joined by dashes, as every kind is named):
  // anything else is a damaged record, refused like any other bad field.
  if (!/^[a-z]+(-[a-z]+)*$/.test(kind) || kind.length > 40) return record;
  return { ...record, kind: 'note' };
}

const memorySchema = z.strictObject({
  id,
  kind: z.enum(BACKUP_MEMORY_KINDS),
  text,
  subject: text.optional(),
  time,
  sourceTurnIds: list(refId),
  sessionId: id,
  supersededBy: id.optional(),
  endedAt: time.optional(),
  edited: z.boolean(),
  createdAt: time,
  context: text.optional(),
  worthRemembering: z.boolean().optional(),
});

const edgeSchema = z.strictObject({
  id,
  from: id,
  to: id,
  relation,
  origin: z.enum(['model', 'similarity', 'user']),
  createdAt: time,
  askEnded: z.boolean().optional(),
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

const tombstoneSchema = z.strictObject({ kind: z.enum(['session', 'memory']), id, deletedAt: time });

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
export const frameSchema = z.strictObject({
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
    tombstones: list(z.unknown()).optional(),
    vectors: list(z.unknown()).optional(),
  }),
});

export const recordSchemas: Record<(typeof BACKUP_COLLECTIONS)[number], z.ZodType> = {
  sessions: sessionSchema,
  turns: turnSchema,
  memories: memorySchema,
  edges: edgeSchema,
  segments: segmentSchema,
  settings: settingSchema,
  tombstones: tombstoneSchema,
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
  Same<z.infer<typeof tombstoneSchema>, Tombstone>,
] = [true, true, true, true, true, true, true];
void schemaMatchesTypes;
