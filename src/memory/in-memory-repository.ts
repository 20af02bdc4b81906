// The Repository port in memory, for Node tests and benchmarks. Like the IndexedDB store it
// commits a ChangeSet all or nothing: the change is validated and copied first, then applied.
// Values are deep-copied on the way in and out, so callers cannot mutate the stored state.
import type { ChangeSet, Repository } from '../ports';
import type { Edge, Id, Job, Memory, Segment, Session, Turn, VectorRecord } from './types';

export interface InMemoryRepositoryOptions {
  /** Reject a change that would leave an edge pointing at a missing memory (default true). */
  checkEdgeEnds?: boolean;
  /** Called with each change before it is applied; throwing here aborts it (crash simulation). */
  beforeApply?: (change: ChangeSet) => void;
}

const copy = <T>(v: T): T => structuredClone(v);

function vectorKey(unitId: Id, modelId: string): string {
  return `${unitId}\u0000${modelId}`;
}

export class InMemoryRepository implements Repository {
  readonly sessions = new Map<Id, Session>();
  readonly turns = new Map<Id, Turn>();
  readonly memories = new Map<Id, Memory>();
  readonly edges = new Map<Id, Edge>();
  readonly segments = new Map<Id, Segment>();
  readonly vectors = new Map<string, VectorRecord>();
  readonly jobs = new Map<Id, Job>();
  readonly settings = new Map<string, unknown>();
  /** Number of successful apply() calls. */
  commits = 0;

  constructor(private readonly options: InMemoryRepositoryOptions = {}) {}

  async apply(change: ChangeSet): Promise<void> {
    this.options.beforeApply?.(change);
    const c = copy(change);
    this.validate(c);
    for (const id of c.deleteSessions ?? []) this.sessions.delete(id);
    for (const id of c.deleteTurns ?? []) this.turns.delete(id);
    for (const id of c.deleteMemories ?? []) this.memories.delete(id);
    for (const id of c.deleteEdges ?? []) this.edges.delete(id);
    for (const id of c.deleteSegments ?? []) this.segments.delete(id);
    for (const [u, m] of c.deleteVectors ?? []) this.vectors.delete(vectorKey(u, m));
    for (const id of c.deleteJobs ?? []) this.jobs.delete(id);
    for (const s of c.sessions ?? []) this.sessions.set(s.id, s);
    for (const t of c.turns ?? []) this.turns.set(t.id, t);
    for (const m of c.memories ?? []) this.memories.set(m.id, m);
    for (const e of c.edges ?? []) this.edges.set(e.id, e);
    for (const s of c.segments ?? []) this.segments.set(s.id, s);
    for (const v of c.vectors ?? []) this.vectors.set(vectorKey(v.unitId, v.modelId), v);
    for (const j of c.jobs ?? []) this.jobs.set(j.id, j);
    this.commits++;
  }

  private validate(c: ChangeSet): void {
    const lists: Array<[string, Array<{ id?: unknown }> | undefined]> = [
      ['session', c.sessions], ['turn', c.turns], ['memory', c.memories], ['edge', c.edges],
      ['segment', c.segments], ['job', c.jobs],
    ];
    for (const [name, list] of lists) {
      for (const item of list ?? []) {
        if (typeof item.id !== 'string' || item.id === '') throw new Error(`invalid ${name}: missing id`);
      }
    }
    for (const v of c.vectors ?? []) {
      if (!(v.vector instanceof Float32Array)) throw new Error(`invalid vector for ${v.unitId}`);
    }
    if (this.options.checkEdgeEnds ?? true) {
      const deleted = new Set(c.deleteMemories ?? []);
      const added = new Set((c.memories ?? []).map((m) => m.id));
      const exists = (id: Id) => added.has(id) || (this.memories.has(id) && !deleted.has(id));
      for (const e of c.edges ?? []) {
        if (!exists(e.from) || !exists(e.to)) throw new Error(`edge ${e.id} points at a missing memory`);
      }
    }
  }

  async getSession(id: Id) { return copy(this.sessions.get(id)); }
  async listSessions() { return copy([...this.sessions.values()].sort((a, b) => a.startedAt - b.startedAt)); }
  async listTurns(sessionId: Id) {
    return copy([...this.turns.values()].filter((t) => t.sessionId === sessionId).sort((a, b) => a.index - b.index));
  }
  async getTurns(ids: Id[]) {
    return copy(ids.map((id) => this.turns.get(id)).filter((t): t is Turn => t !== undefined));
  }
  async getMemory(id: Id) { return copy(this.memories.get(id)); }
  async listMemories() { return copy([...this.memories.values()]); }
  async listEdges() { return copy([...this.edges.values()]); }
  async listSegments() { return copy([...this.segments.values()]); }
  async listSegmentsBySession(sessionId: Id) { return copy([...this.segments.values()].filter((s) => s.sessionId === sessionId)); }
  async listVectors(modelId: string) { return copy([...this.vectors.values()].filter((v) => v.modelId === modelId)); }
  async getJob(id: Id) { return copy(this.jobs.get(id)); }
  async listJobs() { return copy([...this.jobs.values()]); }
  async getSetting<T>(key: string): Promise<T | undefined> { return copy(this.settings.get(key) as T | undefined); }
  async putSetting<T>(key: string, value: T): Promise<void> { this.settings.set(key, copy(value)); }
}
