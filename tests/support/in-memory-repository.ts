// The Repository port in memory, for Node tests and benchmarks. Like the IndexedDB store it
// commits a ChangeSet all or nothing: the change is validated and copied first, then applied.
// Values are deep-copied on the way in and out, so callers cannot mutate the stored state.
// Every change is settled by the same integrity rule as the IndexedDB store (src/store/integrity.ts).
import type { AppliedChange, ChangeSet, LineReads, Repository } from '../../src/ports';
import { plainCopy, settle, type StoreReader } from '../../src/store/integrity';
import type { Edge, Id, Job, Memory, Segment, Session, Tombstone, Turn, VectorRecord } from '../../src/memory/types';

export interface InMemoryRepositoryOptions {
  /** Called with each change before it is applied; throwing here aborts it (crash simulation). */
  beforeApply?: (change: ChangeSet) => void;
}

const copy = <T>(v: T): T => structuredClone(v);

function vectorKey(unitId: Id, modelId: string): string {
  return `${unitId}\u0000${modelId}`;
}

export class InMemoryRepository implements Repository, LineReads {
  readonly sessions = new Map<Id, Session>();
  readonly turns = new Map<Id, Turn>();
  readonly memories = new Map<Id, Memory>();
  readonly edges = new Map<Id, Edge>();
  readonly segments = new Map<Id, Segment>();
  readonly vectors = new Map<string, VectorRecord>();
  readonly jobs = new Map<Id, Job>();
  readonly settings = new Map<string, unknown>();
  /** By `${kind}\u0000${id}`. */
  readonly tombstones = new Map<string, Tombstone>();
  /** Number of successful apply() calls. */
  commits = 0;

  constructor(private readonly options: InMemoryRepositoryOptions = {}) {}

  /** `remote`: another device's records (sync), as IdbRepository.apply takes them. */
  async apply(change: ChangeSet, opts: { remote?: boolean } = {}): Promise<AppliedChange> {
    this.options.beforeApply?.(change);
    const requested = plainCopy(change);
    this.validate(requested);
    const c = await settle(requested, this.reader(), { remote: opts.remote === true });
    this.checkPositions(c);
    for (const id of c.deleteSessions ?? []) this.sessions.delete(id);
    for (const id of c.deleteTurns ?? []) this.turns.delete(id);
    for (const id of c.deleteMemories ?? []) this.memories.delete(id);
    for (const id of c.deleteEdges ?? []) this.edges.delete(id);
    for (const id of c.deleteSegments ?? []) this.segments.delete(id);
    for (const [u, m] of c.deleteVectors ?? []) this.vectors.delete(vectorKey(u, m));
    for (const id of c.deleteJobs ?? []) this.jobs.delete(id);
    for (const [kind, id] of c.deleteTombstones ?? []) this.tombstones.delete(vectorKey(kind, id));
    for (const s of c.sessions ?? []) this.sessions.set(s.id, copy(s));
    for (const t of c.turns ?? []) this.turns.set(t.id, copy(t));
    for (const m of c.memories ?? []) this.memories.set(m.id, copy(m));
    for (const e of c.edges ?? []) this.edges.set(e.id, copy(e));
    for (const s of c.segments ?? []) this.segments.set(s.id, copy(s));
    for (const v of c.vectors ?? []) this.vectors.set(vectorKey(v.unitId, v.modelId), copy(v));
    for (const j of c.jobs ?? []) this.jobs.set(j.id, copy(j));
    for (const t of c.tombstones ?? []) this.tombstones.set(vectorKey(t.kind, t.id), copy(t));
    this.commits++;
    return copy(c);
  }

  /** Reads of the current state, for the integrity rule (applied synchronously after it). */
  private reader(): StoreReader {
    return {
      memory: async (id) => this.memories.get(id),
      hasSession: async (id) => this.sessions.has(id),
      hasSegment: async (id) => this.segments.has(id),
      job: async (id) => this.jobs.get(id),
      edgesTouching: async (id) => [...this.edges.values()].filter((e) => e.from === id || e.to === id).map((e) => e.id),
      vectorKeysOf: async (id) =>
        [...this.vectors.values()].filter((v) => v.unitId === id).map((v) => [v.unitId, v.modelId] as [Id, string]),
      supersededBy: async (id) => [...this.memories.values()].filter((m) => m.supersededBy === id),
      turn: async (id) => this.turns.get(id),
      turnsDrewOn: async (id) => [...this.turns.values()].filter((t) => t.drewOn?.includes(id)),
      segmentsOfTurn: async (id) => [...this.segments.values()].filter((s) => s.turnIds.includes(id)),
      tombstone: async (kind, id) => this.tombstones.has(vectorKey(kind, id)),
    };
  }

  /**
   * The IndexedDB store's unique (session, index) index: a change that would leave two turns of a
   * chat at one position is refused whole, with the same error name (ConstraintError).
   */
  private checkPositions(c: AppliedChange): void {
    if (!c.turns?.length) return;
    const sessions = new Set(c.turns.map((t) => t.sessionId));
    const replaced = new Set([...(c.deleteTurns ?? []), ...c.turns.map((t) => t.id)]);
    const taken = new Map<string, Id>();
    for (const t of this.turns.values()) {
      if (sessions.has(t.sessionId) && !replaced.has(t.id)) taken.set(`${t.sessionId}\u0000${t.index}`, t.id);
    }
    for (const t of c.turns) {
      const key = `${t.sessionId}\u0000${t.index}`;
      const other = taken.get(key);
      if (other !== undefined && other !== t.id) {
        throw Object.assign(new Error(`turn ${t.id}: index ${t.index} of session ${t.sessionId} is taken by ${other}`), {
          name: 'ConstraintError',
        });
      }
      taken.set(key, t.id);
    }
  }

  private validate(c: ChangeSet): void {
    const lists: Array<[string, Array<{ id?: unknown }> | undefined]> = [
      ['session', c.sessions],
      ['turn', c.turns],
      ['memory', c.memories],
      ['edge', c.edges],
      ['segment', c.segments],
      ['job', c.jobs],
    ];
    for (const [name, list] of lists) {
      for (const item of list ?? []) {
        if (typeof item.id !== 'string' || item.id === '') throw new Error(`invalid ${name}: missing id`);
      }
    }
    for (const v of c.vectors ?? []) {
      if (!(v.vector instanceof Float32Array)) throw new Error(`invalid vector for ${v.unitId}`);
    }
  }

  async getSession(id: Id) {
    return copy(this.sessions.get(id));
  }
  async listSessions() {
    return copy([...this.sessions.values()].sort((a, b) => a.startedAt - b.startedAt));
  }
  async listTurns(sessionId: Id) {
    return copy([...this.turns.values()].filter((t) => t.sessionId === sessionId).sort((a, b) => a.index - b.index));
  }
  async getTurns(ids: Id[]) {
    return copy(ids.map((id) => this.turns.get(id)).filter((t): t is Turn => t !== undefined));
  }
  async getMemory(id: Id) {
    return copy(this.memories.get(id));
  }
  async listMemories() {
    return copy([...this.memories.values()]);
  }
  async listEdges() {
    return copy([...this.edges.values()]);
  }
  async listSegments() {
    return copy([...this.segments.values()]);
  }
  async listSegmentsBySession(sessionId: Id) {
    return copy([...this.segments.values()].filter((s) => s.sessionId === sessionId));
  }
  async listSegmentsOfTurn(turnId: Id) {
    return copy([...this.segments.values()].filter((s) => s.turnIds.includes(turnId)));
  }
  async listTurnsDrewOn(id: Id) {
    return copy([...this.turns.values()].filter((t) => t.drewOn?.includes(id)));
  }
  async listVectors(modelId: string) {
    return copy([...this.vectors.values()].filter((v) => v.modelId === modelId));
  }
  async listVectorsOfUnit(unitId: Id) {
    return copy([...this.vectors.values()].filter((v) => v.unitId === unitId));
  }
  async getJob(id: Id) {
    return copy(this.jobs.get(id));
  }
  async listJobs() {
    return copy([...this.jobs.values()]);
  }
  async listTombstones(kind: Tombstone['kind']) {
    return copy([...this.tombstones.values()].filter((t) => t.kind === kind));
  }
  async getSetting<T>(key: string): Promise<T | undefined> {
    return copy(this.settings.get(key) as T | undefined);
  }
  async putSetting<T>(key: string, value: T): Promise<void> {
    this.settings.set(key, copy(value));
  }
  async updateSetting<T>(key: string, fn: (stored: unknown) => T): Promise<T> {
    const value = fn(copy(this.settings.get(key)));
    this.settings.set(key, copy(value));
    return copy(value);
  }
}
