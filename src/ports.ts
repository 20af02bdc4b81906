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
}

/** A JSON Schema object, passed to the runtime to constrain output. */
export type JsonSchema = Record<string, unknown>;

export interface LanguageModel {
  readonly modelId: string;
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

import type { Edge, Id, Job, Memory, Segment, Session, Turn, VectorRecord } from './memory/types';

/**
 * Everything that changes together goes in one ChangeSet and is written in one transaction:
 * after a crash the store holds all of it or none of it. Deletes run before puts.
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
}

/** The memory repository: reads plus one atomic write. */
export interface Repository {
  apply(change: ChangeSet): Promise<void>;
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
  getJob(id: Id): Promise<Job | undefined>;
  listJobs(): Promise<Job[]>;
  getSetting<T>(key: string): Promise<T | undefined>;
  putSetting<T>(key: string, value: T): Promise<void>;
}
