// The small interfaces through which the memory core talks to models and storage.
// One real implementation each lives in src/models and src/store; tests may provide doubles.

export type ChatRole = 'system' | 'user' | 'assistant';
export interface ChatMessage {
  role: ChatRole;
  content: string;
}

export interface GenerateOptions {
  signal?: AbortSignal;
  maxTokens?: number;
  temperature?: number;
  /** Called with each new piece of text as it streams. */
  onToken?: (delta: string) => void;
  /** Called with what the engine says it read for this request, where it reports it (server-usage.ts). */
  onRead?: (read: EngineRead) => void;
  /**
   * Called once the engine says why the answer ended, where it says: 'length' when the output
   * reached its token limit or the window's end (the text stops mid-way), 'stop' when the model
   * finished. Not called for a stopped call, nor by engines that do not tell.
   */
  onFinish?: (finish: AnswerFinish) => void;
}

export type AnswerFinish = 'stop' | 'length';

/** An engine's own word for why an answer ended, as the port says it ('abort' and others: nothing). */
export function answerFinish(reason: string | null | undefined): AnswerFinish | undefined {
  return reason === 'length' || reason === 'stop' ? reason : undefined;
}

/** Tokens of a prompt as the engine itself reports them. */
export interface EngineRead {
  /** Read (prefilled) anew: the prompt less what the engine had cached. */
  readTokens: number;
  /** The whole prompt, where reported. */
  promptTokens?: number;
}

/** A JSON Schema object, passed to the runtime to constrain output. */
export type JsonSchema = Record<string, unknown>;

/**
 * What one model can read and write in one call, in its own tokens. Every builder of a model call
 * fits prompt plus its output into `contextTokens` (src/memory/fit/), because a real engine refuses
 * or silently cuts what does not fit: web-llm throws once the prompt passes its window, Ollama drops
 * the start of the prompt (the system prompt with the memories), a CPU model stops mid-answer.
 */
export interface ModelWindow {
  /** Prompt plus output, in tokens (web-llm's context_window_size, a server's context). */
  contextTokens: number;
  /** The most tokens one call may write (the engine's cap). */
  maxOutputTokens: number;
  /**
   * Tokens of these messages as the model reads them, its chat template included, from the model's
   * own tokenizer. Absent where the runtime has none: callers then use a safe estimate.
   */
  countTokens?(messages: ChatMessage[], signal?: AbortSignal): Promise<number>;
  /**
   * The engine asks for JSON in words, the schema in the prompt (withSchemaInstruction,
   * src/memory/fit/schema.ts): a JSON call's prompt is that much longer than its messages.
   */
  readonly schemaInPrompt?: boolean;
}

/**
 * How an engine asks for JSON: 'grammar' (decoding constrained by the schema: web-llm, a server's
 * response_format, the Prompt API's responseConstraint) or 'words' (the schema in the prompt, the
 * answer read and repaired: the CPU engine, a server without structured output).
 */
export type StructuredMode = 'grammar' | 'words';

export interface LanguageModel {
  readonly modelId: string;
  /**
   * The engine's structured mode now, where it offers both (a model server). Absent: one way only,
   * 'words' where `window.schemaInPrompt` says so, else 'grammar'.
   */
  readonly structuredMode?: StructuredMode;
  /** Switches the structured mode, where the engine offers both (the self-test chooses). */
  setStructuredMode?(mode: StructuredMode): void;
  /**
   * The model's window and output cap. Absent where a model cannot say: callers assume the
   * smallest window of the catalog (FALLBACK_WINDOW, src/memory/fit/window.ts).
   */
  readonly window?: ModelWindow;
  /**
   * The engine keeps the cache of one conversation only, and any other request throws it away
   * (web-llm): background calls wait for the chat to pause (services/models/conversation-first.ts).
   */
  readonly keepsConversation?: boolean;
  /** Streams a chat reply; resolves with the full text (what arrived, if aborted). */
  chat(messages: ChatMessage[], options?: GenerateOptions): Promise<string>;
  /**
   * One schema-constrained call. Resolves with the raw text: the caller parses it defensively,
   * because small models return truncated or invalid JSON.
   */
  json(messages: ChatMessage[], schema: JsonSchema, options?: GenerateOptions): Promise<string>;
}

export interface Embedder {
  readonly modelId: string;
  readonly dimension: number;
  /** Unit-length vectors, one per text, in order. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

import type { Edge, Forgotten, Id, Job, Memory, MemoryKind, Millis, Segment, Session, Tombstone, Turn, VectorRecord } from './memory/types';

/**
 * A change to some fields of a stored memory, applied to the record as it is inside the write's
 * transaction (not to a copy read earlier): a patch never resurrects a deleted memory and never
 * undoes another writer's change to the fields it does not name. `supersededBy: null` clears it.
 */
export interface MemoryPatch {
  id: Id;
  text?: string;
  edited?: boolean;
  /** The person moved it between a standing instruction and a fact (with its text and subject). */
  kind?: MemoryKind;
  subject?: string;
  /** `null` clears it. */
  context?: string | null;
  supersededBy?: Id | null;
  /** `null` clears it (the trait is current again). */
  endedAt?: Millis | null;
}

/**
 * A change to a stored turn's forgotten mark (src/memory/forget/), applied to the record as it is
 * inside the write's transaction, like a MemoryPatch: `forget` adds its memories to the mark,
 * `unforget` (an undo) takes them out; the mark goes when none is left. The store then rebuilds
 * every passage holding the line (src/store/forgotten-lines.ts).
 */
export interface TurnPatch {
  id: Id;
  forget?: Forgotten;
  unforget?: Id[];
}

/** Indexed reads a forget needs (src/memory/forget/plan.ts): lookups, never a scan of the store. */
export interface LineReads {
  /** Turns whose `drewOn` names the memory or passage (the replies built from it). */
  listTurnsDrewOn(id: Id): Promise<Turn[]>;
  /** The passages (segments) holding a turn. */
  listSegmentsOfTurn(turnId: Id): Promise<Segment[]>;
}

/**
 * Everything that changes together goes in one ChangeSet and is written in one transaction:
 * after a crash the store holds all of it or none of it. Deletes run before puts.
 *
 * The store settles every change against what it holds inside that transaction (src/store/
 * integrity.ts): deleting a memory also deletes its edges and vectors and clears supersededBy
 * pointing at it; an edge, vector, segment, turn or job whose referenced record is missing is not
 * written; and a change with `expectJob` is written only while that job record is unchanged.
 */
export interface ChangeSet {
  sessions?: Session[];
  turns?: Turn[];
  memories?: Memory[];
  edges?: Edge[];
  segments?: Segment[];
  vectors?: VectorRecord[];
  jobs?: Job[];
  deleteSessions?: Id[];
  deleteTurns?: Id[];
  deleteMemories?: Id[];
  deleteEdges?: Id[];
  deleteSegments?: Id[];
  /** [unitId, modelId] keys. */
  deleteVectors?: Array<[Id, string]>;
  deleteJobs?: Id[];
  /** What the user deleted, remembered (written with the delete itself). */
  tombstones?: Tombstone[];
  /** [kind, id] keys: the user brought the record back (an undo). */
  deleteTombstones?: Array<[Tombstone['kind'], Id]>;
  memoryPatches?: MemoryPatch[];
  /** Forgotten marks set or cleared; settled into `turns` (what a write reports holds none). */
  turnPatches?: TurnPatch[];
  /**
   * A job step's precondition: the job record still exists with this `updatedAt` (the version
   * the step started from). Otherwise the whole change is refused with JobGoneError: the job was
   * cancelled, deleted (delete-all, a replace import) or advanced by another tab. A job's change
   * also never replaces a memory the user edited or ended, nor brings back one the user deleted.
   */
  expectJob?: { id: Id; updatedAt: Millis };
}

/** What a change actually wrote, after settling (see ChangeSet). */
export interface AppliedChange extends ChangeSet {
  /** Why parts of the change were not written (e.g. "edge e1: memory m2 is gone"). */
  dropped: string[];
  /**
   * The `turnPatches` it applied, to turns it wrote: sync keeps each forget and undo as an entry of
   * its own, which no other write of the turn clears (src/services/sync/forget-marks.ts).
   */
  marks?: TurnPatch[];
}

/** A job step's write was refused: its job no longer exists in the state the step started from. */
export class JobGoneError extends Error {
  override readonly name = 'JobGoneError';
  constructor(readonly jobId: Id) {
    super(`job ${jobId} was cancelled or changed elsewhere`);
  }
}

/**
 * A prompt too long for the model's window, from whichever engine said so (web-llm's
 * ContextWindowSizeExceededError, a server's 400, a CPU worker's count). Callers build the call
 * again smaller (src/memory/fit/call.ts); the user never sees this raw.
 */
export class ContextOverflowError extends Error {
  override readonly name = 'ContextOverflowError';
  constructor(
    /** Tokens of the prompt as the engine counted them (0 when it did not say). */
    readonly promptTokens: number,
    readonly contextTokens: number,
    detail = '',
  ) {
    super(
      `The prompt (${promptTokens || 'too many'} tokens) does not fit this model's window of ${contextTokens} tokens${detail ? ` (${detail})` : ''}.`,
    );
  }
}

/** Also across a worker boundary, where only the name and message survive. */
export function isContextOverflow(e: unknown): e is ContextOverflowError {
  return e instanceof Error && e.name === 'ContextOverflowError';
}

export function isJobGone(e: unknown): e is JobGoneError {
  return e instanceof Error && e.name === 'JobGoneError';
}

/** The memory repository: reads plus one atomic write. */
export interface Repository {
  apply(change: ChangeSet): Promise<AppliedChange>;
  getSession(id: Id): Promise<Session | undefined>;
  listSessions(): Promise<Session[]>;
  /** A session's turns ordered by index. */
  listTurns(sessionId: Id): Promise<Turn[]>;
  getTurns(ids: Id[]): Promise<Turn[]>;
  getMemory(id: Id): Promise<Memory | undefined>;
  listMemories(): Promise<Memory[]>;
  listEdges(): Promise<Edge[]>;
  listSegments(): Promise<Segment[]>;
  listSegmentsBySession(sessionId: Id): Promise<Segment[]>;
  listVectors(modelId: string): Promise<VectorRecord[]>;
  /** Every vector of one unit, whatever model made it. */
  listVectorsOfUnit(unitId: Id): Promise<VectorRecord[]>;
  getJob(id: Id): Promise<Job | undefined>;
  listJobs(): Promise<Job[]>;
  /** What the user deleted, of one kind. */
  listTombstones(kind: Tombstone['kind']): Promise<Tombstone[]>;
  getSetting<T>(key: string): Promise<T | undefined>;
  putSetting<T>(key: string, value: T): Promise<void>;
  /**
   * Reads a setting and writes `fn(stored)` in ONE transaction; returns what was written. Two
   * writers patching different fields both keep their change (a put of a copy read earlier would not).
   */
  updateSetting<T>(key: string, fn: (stored: unknown) => T): Promise<T>;
}
