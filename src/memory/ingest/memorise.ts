// The memorise-session job, run when a session ends: explicit, idempotent steps
//   summarise -> embed -> link (one memory at a time) -> segment -> done
// Every step commits its results together with the updated Job record in ONE ChangeSet, so after
// a crash the store holds a step completely or not at all, and the job resumes at the recorded
// step. Memory ids are derived from (session, job creation time, index in the summary) and edge
// ids from their ends, so a replayed step cannot create duplicates. The live graph, memory map
// and index are updated only after a commit succeeded.
// Model calls: one summarising call per part of the session (one part unless the session is longer
// than the model's window allows, summary-plan.ts; the calls also choose the topics for the segment
// step) plus at most one labelling call per new memory; the segment step makes none.
import { errorText } from '../../errors';
import type { AppliedChange, ChangeSet, Embedder, LanguageModel, Repository } from '../../ports';
import { isJobGone } from '../../ports';
import type { Id, Job, JobStatus, Memory, Millis, Segment, Turn } from '../types';
import type { HybridIndex, IndexedUnit } from '../retrieval/types';
import { MemoryGraph } from '../graph';
import type { MemorySettings } from '../settings';
import { linkMemory } from './linking';
import { summariseNextPart, type SummaryRun } from './memorise-summary';
import { isStep, readState, topicRanges, type MemoriseState, type MemoriseStep } from './memorise-state';
import type { TurnRange } from './segments/parse';
import { isForgotten } from '../forget/lines';

export { MEMORISE_STEPS, topicRanges, type MemoriseState, type MemoriseStep } from './memorise-state';

/** Splits a session into segments (built elsewhere); the step commits what it returns. */
export type Segmenter = (input: {
  sessionId: Id;
  /** The session's turns, ordered by index. */
  turns: readonly Turn[];
  /**
   * The topics the summarising call chose, as positions in `turns` (a repaired contiguous cover),
   * or empty when it gave none usable. Always passed: the model has already been asked, so a
   * segmenter should use these (e.g. segmentSession's `ranges`) or its fallback, not call again.
   */
  ranges: readonly TurnRange[];
  /**
   * @deprecated Never passed any more (the summarising call chose the topics): a segmenter that
   * forwards it to segmentSession falls back to the splitter without a call. Kept so that
   * segmenters written against the older shape still compile.
   */
  llm?: LanguageModel;
  signal?: AbortSignal;
}) => Promise<Segment[]>;

export interface MemoriseDeps {
  repo: Repository;
  llm?: LanguageModel;
  embedder?: Embedder;
  index: HybridIndex;
  /** The live graph, kept in sync; built from the repository when absent. */
  graph?: MemoryGraph;
  /** The live memory map, kept in sync; built from the repository when absent. */
  memories?: Map<Id, Memory>;
  settings: MemorySettings;
  segmenter?: Segmenter;
  /** Ask for notes in the summary (docs/METHOD.md, section 3). Default true. */
  includeNotes?: boolean;
  onProgress?: (job: Job) => void;
  signal?: AbortSignal;
  /** Asked before each step: false (memory creation switched off) leaves the job waiting at it. */
  mayStartStep?: () => Promise<boolean>;
  now?: () => Millis;
}

export interface MemoriseOutcome {
  job: Job;
  /** cancelled: the job record went away or changed elsewhere (delete-all, import, another tab). */
  status: JobStatus | 'cancelled';
  /** Why the job is waiting (e.g. no language model loaded). */
  reason?: string;
  modelCalls: number;
  problems: string[];
}

export function createMemoriseJob(sessionId: Id, now: Millis): Job {
  return {
    id: `memorise:${sessionId}:${now.toString(36)}`,
    kind: 'memorise',
    sessionId,
    step: 'summarise',
    status: 'pending',
    attempts: 0,
    createdAt: now,
    updatedAt: now,
  };
}

/** Deterministic per (session, job, index in the summary); zero-padded so ids sort in summary order. */
export function memoryIdFor(job: Job, index: number): Id {
  return `mem:${job.sessionId}:${job.createdAt.toString(36)}:${String(index).padStart(4, '0')}`;
}

export function memoryUnit(m: Memory): IndexedUnit {
  return {
    id: m.id,
    kind: 'memory',
    text: m.text,
    indexText: m.context ? `${m.context} ${m.text}` : m.text,
    time: m.time,
    sessionId: m.sessionId,
    sourceTurnIds: m.sourceTurnIds,
    ...(m.subject ? { subject: m.subject } : {}),
  };
}

class MemoriseRun implements SummaryRun {
  modelCalls = 0;
  readonly problems: string[] = [];
  readonly now: () => Millis;

  constructor(
    readonly deps: MemoriseDeps,
    private readonly graph: MemoryGraph,
    readonly memories: Map<Id, Memory>,
  ) {
    this.now = deps.now ?? Date.now;
  }

  memoryId(job: Job, index: number): Id {
    return memoryIdFor(job, index);
  }

  adopt(memories: readonly Memory[]): void {
    for (const m of memories) {
      this.memories.set(m.id, m);
      this.graph.addMemory(m.id, m.time, m.createdAt);
      this.deps.index.upsert(memoryUnit(m));
    }
  }

  advance(job: Job, patch: Partial<Job>, state: MemoriseState): Job {
    return {
      ...job,
      ...patch,
      state: { ...state },
      status: patch.status ?? 'running',
      attempts: 0,
      lastError: undefined,
      updatedAt: this.version(job),
    };
  }

  /** A new updatedAt, later than the job's last one even within the same millisecond. */
  version(job: Job): Millis {
    return Math.max(this.now(), job.updatedAt + 1);
  }

  /** The job's version in the store: each commit expects it unchanged (see ChangeSet.expectJob). */
  stored?: { id: Id; updatedAt: Millis };

  /**
   * Commits a step's results with the advanced job record, only if the job is still as this run
   * last saw it. Returns what the store actually wrote: records whose references went away
   * meanwhile (a memory the user deleted during a model call) are left out by the store.
   */
  async commitApplied(change: ChangeSet, job: Job): Promise<{ job: Job; applied: AppliedChange }> {
    // Stopped (memory creation switched off, an import): a model that answered after the stop
    // must not get its step written.
    if (this.deps.signal?.aborted) throw this.deps.signal.reason ?? new Error('aborted');
    const applied = await this.deps.repo.apply({ ...change, jobs: [job], ...(this.stored ? { expectJob: this.stored } : {}) });
    this.stored = { id: job.id, updatedAt: job.updatedAt };
    this.deps.onProgress?.(job);
    return { job, applied };
  }

  private async commit(change: ChangeSet, job: Job): Promise<Job> {
    return (await this.commitApplied(change, job)).job;
  }

  /** Puts the job's memories into the index if it lacks them (after a reload, or a crash). */
  ensureIndexed(state: MemoriseState): void {
    for (const id of state.memoryIds) {
      const m = this.memories.get(id);
      if (m && !this.deps.index.has(id)) this.deps.index.upsert(memoryUnit(m));
    }
  }

  async runStep(step: MemoriseStep, job: Job): Promise<Job> {
    const state = readState(job);
    switch (step) {
      case 'summarise':
        return this.summarise(job, state);
      case 'embed':
        return this.embed(job, state);
      case 'link':
        return this.link(job, state);
      case 'segment':
        return this.segment(job, state);
      case 'done':
        return this.finish(job, state);
    }
  }

  /**
   * The turns to memorise. Lines the user forgot are never read by a model again; the segment
   * step takes them (`withForgotten`) only to keep their place in the passages, without their words.
   */
  private async sessionTurns(job: Job, withForgotten = false): Promise<Turn[]> {
    const turns = await this.deps.repo.listTurns(job.sessionId!);
    // Memory commands and their answers are done (src/services/commands/): not memorised twice.
    const byIndex = new Map(turns.map((t) => [t.index, t]));
    const command = (t: Turn) => t.command !== undefined || byIndex.get(t.index + 1)?.command !== undefined;
    return turns.filter((t) => t.text.trim() !== '' && t.status !== 'error' && !command(t) && (withForgotten || !isForgotten(t)));
  }

  private async summarise(job: Job, state: MemoriseState): Promise<Job> {
    const turns = await this.sessionTurns(job);
    if (turns.length === 0) {
      return this.commit({}, this.advance(job, { step: 'segment', progress: { done: 0, total: 0, label: 'nothing to remember' } }, state));
    }
    return summariseNextPart(this, job, state, turns);
  }

  private batch(state: MemoriseState): Memory[] {
    return state.memoryIds.map((id) => this.memories.get(id)).filter((m): m is Memory => m !== undefined);
  }

  private async embed(job: Job, state: MemoriseState): Promise<Job> {
    const next = this.advance(job, { step: 'link', progress: { done: 0, total: state.memoryIds.length, label: 'linking' } }, state);
    const embedder = this.deps.embedder;
    const batch = this.batch(state);
    if (!embedder || batch.length === 0) return this.commit({}, next);
    const vectors = await embedder.embed(
      batch.map((m) => memoryUnit(m).indexText ?? m.text),
      this.deps.signal,
    );
    if (vectors.length !== batch.length) throw new Error(`embedder returned ${vectors.length} vectors for ${batch.length} texts`);
    const { job: out, applied } = await this.commitApplied(
      { vectors: batch.map((m, i) => ({ unitId: m.id, modelId: embedder.modelId, vector: vectors[i] })) },
      next,
    );
    for (const v of applied.vectors ?? []) if (this.deps.index.has(v.unitId)) this.deps.index.setVector(v.unitId, v.vector);
    return out;
  }

  private async excerpt(m: Memory): Promise<string | undefined> {
    if (m.sourceTurnIds.length === 0) return undefined;
    const turns = (await this.deps.repo.getTurns(m.sourceTurnIds)).filter((t) => !isForgotten(t)).slice(0, 2);
    const text = turns
      .map((t) => t.text)
      .join(' / ')
      .replace(/\s+/g, ' ')
      .trim();
    return text === '' ? undefined : text.length > 200 ? `${text.slice(0, 197)}...` : text;
  }

  private async link(job: Job, state: MemoriseState): Promise<Job> {
    const { settings, embedder, signal } = this.deps;
    const batchIds = new Set(state.memoryIds);
    const total = state.memoryIds.length;
    // Vectors of this batch: embedded again (cheap, deterministic) rather than reading every
    // stored vector back from the store.
    const vectors = new Map<Id, Float32Array>();
    const pending = this.batch(state);
    if (embedder && state.linked < total && pending.length > 0) {
      const vs = await embedder.embed(
        pending.map((m) => memoryUnit(m).indexText ?? m.text),
        signal,
      );
      pending.forEach((m, i) => vs[i] && vectors.set(m.id, vs[i]));
    }
    let current = job;
    for (let i = state.linked; i < total; i++) {
      if (signal?.aborted) throw signal.reason ?? new Error('aborted');
      const memory = this.memories.get(state.memoryIds[i]);
      const done = i + 1;
      const last = done === total;
      const nextState: MemoriseState = { ...state, linked: done };
      const patch: Partial<Job> = last
        ? { step: 'segment', progress: { done, total, label: 'segmenting' } }
        : { progress: { done, total, label: 'linking' } };
      if (!memory) {
        // Deleted by the user meanwhile: nothing to link.
        current = await this.commit({}, this.advance(current, patch, nextState));
        state = nextState;
        continue;
      }
      const plan = await linkMemory({
        memory,
        graph: this.graph,
        index: this.deps.index,
        lookup: (id) => this.memories.get(id),
        settings,
        llm: this.deps.llm,
        vector: vectors.get(memory.id),
        vectorOf: (id) => vectors.get(id),
        batch: batchIds,
        excerpt: (m) => this.excerpt(m),
        now: this.now(),
        signal,
      });
      this.modelCalls += plan.modelCalls;
      this.problems.push(...plan.problems);
      // Ends are re-checked by the store inside the commit: the labelling call took time, and the
      // user may have deleted a candidate meanwhile. Supersession is a patch, so an edit the user
      // made to the older trait during the call is kept.
      const committed = await this.commitApplied(
        { edges: plan.edges, memoryPatches: plan.superseded.map((m) => ({ id: m.id, supersededBy: m.supersededBy ?? null })) },
        this.advance(current, patch, nextState),
      );
      current = committed.job;
      state = nextState;
      for (const e of committed.applied.edges ?? []) if (this.graph.has(e.from) && this.graph.has(e.to)) this.graph.addEdge(e);
      for (const m of committed.applied.memories ?? []) this.memories.set(m.id, m);
    }
    if (current.step === 'link' && state.linked >= total) {
      current = await this.commit(
        {},
        this.advance(current, { step: 'segment', progress: { done: total, total, label: 'segmenting' } }, state),
      );
    }
    return current;
  }

  private async segment(job: Job, state: MemoriseState): Promise<Job> {
    const next = this.advance(job, { step: 'done', progress: { done: 0, total: 1, label: 'finishing' } }, state);
    if (!this.deps.segmenter) return this.commit({}, next);
    const turns = (await this.sessionTurns(job, true)).sort((a, b) => a.index - b.index);
    // No model here: the summarising call chose the topics; none usable means the fallback splitter.
    const ranges = topicRanges(state.topics, turns);
    const segments = await this.deps.segmenter({ sessionId: job.sessionId!, turns, ranges, signal: this.deps.signal });
    return this.commit({ segments }, next);
  }

  private async finish(job: Job, state: MemoriseState): Promise<Job> {
    const session = await this.deps.repo.getSession(job.sessionId!);
    const done = this.advance(job, { step: 'done', status: 'done', progress: { done: 1, total: 1, label: 'memorised' } }, state);
    return this.commit(session ? { sessions: [{ ...session, status: 'memorised' }] } : {}, done);
  }
}

function needsModel(step: MemoriseStep, settings: MemorySettings): boolean {
  return step === 'summarise' || (step === 'link' && settings.relationAwareLinking);
}

/**
 * Runs (or resumes) a memorise job until it is done, fails, or waits for a model. A failing step
 * is retried up to settings.maxStepAttempts times in a row (Job.attempts counts the failures
 * since the last progress), then the job is reported failed with lastError. Calling this again
 * on a failed job starts a new round of attempts from the recorded step. Aborting throws.
 */
export async function runMemoriseJob(job: Job, deps: MemoriseDeps): Promise<MemoriseOutcome> {
  if (job.kind !== 'memorise' || !job.sessionId) throw new Error(`not a memorise job: ${job.id}`);
  const memories = deps.memories ?? new Map((await deps.repo.listMemories()).map((m) => [m.id, m]));
  const graph = deps.graph ?? MemoryGraph.from(memories.values(), await deps.repo.listEdges());
  const run = new MemoriseRun(deps, graph, memories);
  run.stored = { id: job.id, updatedAt: job.updatedAt };
  let current: Job = job.status === 'failed' ? { ...job, status: 'pending', attempts: 0 } : { ...job };
  run.ensureIndexed(readState(current));
  const outcome = (status: MemoriseOutcome['status'], reason?: string): MemoriseOutcome => ({
    job: current,
    status,
    ...(reason ? { reason } : {}),
    modelCalls: run.modelCalls,
    problems: run.problems,
  });

  for (;;) {
    if (current.status === 'done') return outcome('done');
    if (deps.signal?.aborted) throw deps.signal.reason ?? new Error('aborted');
    const step = current.step;
    if (!isStep(step)) {
      current = { ...current, status: 'failed', lastError: `unknown step ${step}`, updatedAt: run.version(current) };
      try {
        await run.commitApplied({}, current);
      } catch (err) {
        if (isJobGone(err)) return outcome('cancelled', 'the job was cancelled');
        throw err;
      }
      return outcome('failed', current.lastError);
    }
    if (needsModel(step, deps.settings) && !deps.llm) {
      return outcome('pending', `waiting for a language model (step ${step})`);
    }
    if (deps.mayStartStep && !(await deps.mayStartStep())) return outcome('pending', `memory creation is off (step ${step})`);
    try {
      current = await run.runStep(step, current);
    } catch (err) {
      if (deps.signal?.aborted) throw err;
      // Deleted, replaced or advanced elsewhere: nothing of this step was written; stop quietly.
      if (isJobGone(err)) return outcome('cancelled', 'the job was cancelled');
      const attempts = current.attempts + 1;
      const failed = attempts >= deps.settings.maxStepAttempts;
      current = {
        ...current,
        attempts,
        lastError: errorText(err),
        status: failed ? 'failed' : 'pending',
        updatedAt: run.version(current),
      };
      try {
        await run.commitApplied({}, current);
      } catch (e) {
        if (isJobGone(e)) return outcome('cancelled', 'the job was cancelled');
        // The store itself is failing: nothing more can be recorded; the in-memory job reports it.
      }
      deps.onProgress?.(current);
      if (failed) return outcome('failed', current.lastError);
      // Reload the recorded progress: a partly run link step committed memory by memory.
      const stored = await deps.repo.getJob(current.id).catch(() => undefined);
      if (stored && stored.step === current.step) current = { ...current, state: stored.state, progress: stored.progress };
    }
  }
}
