// Domain model shared by every layer (docs/ARCHITECTURE.md, "Data model").
// Pure types: no DOM, no IndexedDB, no SDKs.

export type Id = string;
/** Milliseconds since the Unix epoch. */
export type Millis = number;

export type Role = 'user' | 'assistant';

export type SessionStatus = 'open' | 'ended' | 'memorised';

export interface Session {
  id: Id;
  title: string;
  startedAt: Millis;
  /** Time of the last turn; the idle-gap rule compares against it. */
  lastActivityAt: Millis;
  endedAt?: Millis;
  status: SessionStatus;
  /** Why the session ended: the button, a new chat, the idle gap, or an import. */
  endReason?: 'button' | 'new-chat' | 'idle' | 'import';
  /**
   * The device the chat was started on, while sync was on (docs/SYNC.md, "Job ownership"): only
   * that device continues it, ends it and memorises it. Absent for chats started with sync off.
   */
  deviceId?: string;
  /**
   * The ended chat this one follows on from: a message sent under an ended chat starts this one,
   * and its replies see that chat's messages as dialogue (src/services/chat/follow-on.ts). Each
   * chat is remembered on its own.
   */
  follows?: Id;
}

/**
 * complete: fully generated. streaming: being written now (if found after a reload, the tab closed
 * mid-reply: treated as interrupted). stopped: the user pressed stop. error: generation failed.
 */
export type TurnStatus = 'complete' | 'streaming' | 'interrupted' | 'stopped' | 'error';

export interface Turn {
  id: Id;
  sessionId: Id;
  index: number;
  role: Role;
  text: string;
  time: Millis;
  status: TurnStatus;
  modelId?: string;
  /** What memory the reply drew on (assistant turns). */
  usedMemory?: UsedMemory;
  /** How the reply started (assistant turns answered by a model). */
  start?: ReplyStart;
  /**
   * Derived by the store on every write: the memories any version's `usedMemory` names
   * (src/memory/derived.ts), indexed, so a memory that changes finds the replies built from it.
   */
  drewOn?: Id[];
  /** Free-form origin, e.g. a LoCoMo dia_id for imported conversations. */
  externalId?: string;
  /**
   * The other versions of this turn (an edited message, a regenerated reply), kept to flip
   * through; the shown version is the turn's own fields. Absent on turns with one version.
   */
  versions?: TurnVersion[];
  /** Where the shown version sits among all versions (0-based); absent = last. */
  shown?: number;
  /**
   * The turns put away with this turn's other versions (the branches of the conversation that
   * follow them), flat: every turn of every branch below this one, at any depth, each naming the
   * version of the turn it followed (src/services/turn-versions.ts). However often the user edits,
   * a record nests no deeper. Absent when there is none.
   */
  branches?: BranchTurn[];
  /**
   * The answer to a memory command ("remember that …", src/services/commands/), made from the
   * store with no model call. The memories it made, asks about or lists are in `usedMemory`, so
   * they follow the memories (src/memory/derived.ts). The user turn before it is the command.
   */
  command?: CommandAnswer;
  /**
   * The user forgot a memory drawn from this line, or that this reply quoted or drew on
   * (src/memory/forget/): the chat still shows it, marked, but no prompt, passage or summary uses
   * it again. Absent on a line that is not forgotten.
   */
  forgotten?: Forgotten;
}

/**
 * Why a line is forgotten: when, and the memories whose forgetting marked it. Undoing one forget
 * takes its ids out; the line comes back only when none is left.
 */
export interface Forgotten {
  at: Millis;
  by: Id[];
}

export const COMMAND_KINDS = ['remember', 'forget', 'recall'] as const;
/**
 * done: remembered or listed. asked: a forget card waiting for the user; then forgotten or kept.
 * undone: Undo took it back. none: nothing matched. temporary: a temporary chat, nothing done.
 */
export const COMMAND_STATES = ['done', 'asked', 'forgotten', 'kept', 'undone', 'none', 'temporary'] as const;
export interface CommandAnswer {
  kind: (typeof COMMAND_KINDS)[number];
  state: (typeof COMMAND_STATES)[number];
  /**
   * A forget card: the user's messages it offers to forget besides the memories (in usedMemory),
   * found in past chats' passages or the chat itself (a fact not memorised yet, or a memory worded
   * otherwise). Absent when there are none.
   */
  lines?: Id[];
}

/** A version of a turn that is not shown now. */
/**
 * How a reply started: the wait before its first word, and the tokens of its prompt the model had
 * to read for it (the rest it kept from the chat's previous request, where it extended it).
 */
export interface ReplyStart {
  waitMs: number;
  promptTokens: number;
  readTokens: number;
}

export interface TurnVersion {
  text: string;
  time: Millis;
  status: TurnStatus;
  modelId?: string;
  usedMemory?: UsedMemory;
  start?: ReplyStart;
}

/**
 * A turn put away in a branch: it followed version `follows.version` (a position among all
 * versions, which never moves) of the turn `follows.turnId`. Its session and position are those of
 * the turn that holds it; it takes them back when its branch is shown again.
 */
export interface BranchTurn {
  id: Id;
  role: Role;
  text: string;
  time: Millis;
  status: TurnStatus;
  modelId?: string;
  usedMemory?: UsedMemory;
  externalId?: string;
  versions?: TurnVersion[];
  shown?: number;
  follows: { turnId: Id; version: number };
  command?: CommandAnswer;
}

/**
 * instruction: a standing instruction the user gave Tealeaf for every later reply ("Keep your
 * answers short."), kept in the user's words; it goes into every reply's instructions while it is
 * current (src/memory/recall/instructions.ts), not through retrieval.
 */
export type MemoryKind = 'event' | 'user-trait' | 'assistant-trait' | 'note' | 'instruction';

export interface Memory {
  id: Id;
  kind: MemoryKind;
  text: string;
  /** Who the memory is about (e.g. "user", "assistant", or a name in imported data). */
  subject?: string;
  /** When the memory formed: the time of its latest source turn. */
  time: Millis;
  sourceTurnIds: Id[];
  sessionId: Id;
  /**
   * Set when a newer memory changed this one through a "Changed" edge (kept, not deleted): a newer
   * trait, or an event that tells the change ("You moved from Oslo to Bergen"); true until its time.
   */
  supersededBy?: Id;
  /**
   * When the user said this stopped being true ("No longer true"), with or without a newer trait
   * that replaces it. The memory is kept and treated as the past: "until <date>".
   */
  endedAt?: Millis;
  /** The user edited the text by hand. */
  edited: boolean;
  createdAt: Millis;
  /** For notes (docs/METHOD.md, section 3): why the user said it. */
  context?: string;
  /**
   * The summarising call judged a source message worth remembering (conditional memory); absent
   * when it gave no judgement (older memories, imported ones).
   */
  worthRemembering?: boolean;
}

export const RELATIONS = ['Changed', 'Cause', 'Reason', 'HinderedBy', 'React', 'Want', 'SameTopic'] as const;
export type Relation = (typeof RELATIONS)[number];
/** What the labeller may answer: a relation, or None (no edge). */
export type RelationLabel = Relation | 'None';

export type EdgeOrigin = 'model' | 'similarity' | 'user';

export interface Edge {
  id: Id;
  /** The older memory. */
  from: Id;
  /** The newer memory. */
  to: Id;
  relation: Relation;
  origin: EdgeOrigin;
  createdAt: Millis;
  /**
   * The linker read a change here but was not sure (src/memory/ingest/change.ts): the older memory
   * stays current, and the memory notice asks the user whether it is no longer true. Cleared by the
   * answer or by the user relabelling the edge. Absent otherwise.
   */
  askEnded?: boolean;
}

export interface Segment {
  id: Id;
  sessionId: Id;
  /** Turn indexes within the session, inclusive. */
  firstTurn: number;
  lastTurn: number;
  turnIds: Id[];
  /** The original words, for the prompt. */
  text: string;
  /** A denoised copy, for the index. */
  indexText: string;
  time: Millis;
}

export interface VectorRecord {
  unitId: Id;
  modelId: string;
  vector: Float32Array;
}

export type JobKind = 'memorise' | 'reembed';
export type JobStatus = 'pending' | 'running' | 'done' | 'failed';

export interface Job {
  id: Id;
  kind: JobKind;
  sessionId?: Id;
  /** Name of the next step to run; steps are idempotent. */
  step: string;
  status: JobStatus;
  attempts: number;
  lastError?: string;
  /** Step-local state carried across reloads (e.g. ids of memories created so far). */
  state?: Record<string, unknown>;
  progress?: { done: number; total: number; label: string };
  createdAt: Millis;
  updatedAt: Millis;
}

/**
 * The user deleted this chat or memory: an import or a job does not bring it back (a history
 * export holds every chat again; a memorise job makes the same memory ids again). Exported in backups.
 */
export interface Tombstone {
  kind: 'session' | 'memory';
  id: Id;
  deletedAt: Millis;
}

export interface Setting<T = unknown> {
  key: string;
  value: T;
}

/** A linear path through the memory graph, oldest first. */
export interface Timeline {
  memoryIds: Id[];
  /** Relations between consecutive memories (length = memoryIds.length - 1). */
  relations: Relation[];
  /** The retrieved memory this timeline was untangled through. */
  through: Id;
}

export interface RetrievalScore {
  unitId: Id;
  unitKind: 'memory' | 'segment' | 'turn';
  lexical?: number;
  dense?: number;
  fused: number;
  lexicalRank?: number;
  denseRank?: number;
  /** LD-Agent's topic overlap with the query (0..1), where topic nouns are on. */
  topic?: number;
  topicRank?: number;
}

/** Stored with an assistant turn: what it remembered and why. */
export interface UsedMemory {
  memoryIds: Id[];
  segmentIds: Id[];
  timelines: Timeline[];
  /** The refined note per timeline (same order), when refinement ran. */
  refined?: string[];
  scores: RetrievalScore[];
  /**
   * What every reply is told whatever it asks (not retrieved for this query): the current traits
   * the persona banks put in the prompt, and the standing instructions sent (kind instruction).
   */
  personaIds?: Id[];
  /**
   * Self-reflection (seed 002), when it ran and was read: what was found first was enough, or not
   * and a second search ran ('searched'), or not but the model wrote no keywords. Absent on replies
   * stored before it ran in the refinement call.
   */
  reflected?: ReflectionOutcome;
  /** The keywords the second search used. (Stored alone, without `reflected`, by older versions.) */
  requery?: string;
  /**
   * The memories and passages the reflection was shown when it wrote `requery`: the keywords were
   * written from them, so they go when one of them is deleted or changes (src/memory/derived.ts).
   */
  reflectedOn?: Id[];
  /** Turns of this chat from before the reply's window of recent messages, recalled into its prompt. */
  earlierTurnIds?: Id[];
  /**
   * How the newest message's earlier turns were found: by meaning and words (the search model had
   * embedded them and the message), by words only with the model in use but the turns not yet
   * embedded ('unread'), or by words only. Absent where none was recalled.
   */
  earlierBy?: 'meaning' | 'words' | 'unread';
}

export const REFLECTION_OUTCOMES = ['enough', 'searched', 'no-keywords'] as const;
export type ReflectionOutcome = (typeof REFLECTION_OUTCOMES)[number];
