// Wires the memory method to the store and the models: keeps the live index and graph (built once
// at start, updated incrementally), prepares each turn, and has memorising jobs run in the background
// (job-runner.ts), one tab at a time.
import { errorText } from '../../errors';
import type { AppliedChange, ChangeSet, Embedder, LanguageModel, LineReads, Repository } from '../../ports';
import type { Edge, Id, Memory, Relation, Segment, Turn, VectorRecord } from '../../memory/types';
import { answerChange, changeEdge, editMemoryText, toggleSuperseded } from '../../memory/corrections';
import { Forgetting } from './forgetting';
import type { RepairLogEntry } from '../../memory/repair';
import { readRepairLog, writeRepair } from './repair-log';
import { sessionDeletion } from './session-deletion';
import { createHybridIndex } from '../../memory/retrieval/hybrid';
import { MemoryGraph } from '../../memory/graph';
import { RefineCache } from '../../memory/recall/refine';
import { SentChats } from '../../memory/recall/sent-chat';
import { REPLY_TOKENS } from '../../memory/recall/turn';
import { prepareReply } from './reply';
import { ChatVectors } from './chat-vectors';
import { instructionsFor, type InstructionFit } from '../../memory/recall/instructions';
import { windowOf } from '../../memory/fit';
import { memoryUnit } from '../../memory/ingest/memorise';
import { dialogueOf, memorylessPreparer, type PrepareInput, type ReplyPrompt, type TurnPreparer } from '../chat/reply-prompt';
import { Emitter } from '../emitter';
import { withJobLock, yieldToPage, type JobSnapshot } from './jobs';
import { MemoryTabs } from './memory-tabs';
import { readStoredMemory } from './stored-memory';
import { attachVectors, buildLiveMemory, mirrorChange } from './live-memory';
import { loadNounExtractor } from '../../models/nouns';
import type { NounExtractor } from '../../memory/retrieval/topics';
import { JobRunner } from './job-runner';
import { isStorageFullError } from '../../store/errors';
import type { SettingsService } from '../settings';

type MemoryEvents = {
  jobs: JobSnapshot[];
  graph: undefined;
  error: { message: string };
  /** Start-up found inconsistent records and repaired them (the lines are in the repair log). */
  repaired: { notes: string[] };
};

export class MemoryService extends Emitter<MemoryEvents> implements TurnPreparer {
  index = createHybridIndex();
  graph = new MemoryGraph();
  memories = new Map<Id, Memory>();
  segments = new Map<Id, Segment>();
  private refineCache = new RefineCache();
  /** Each chat's last reply prompt as sent: the next one extends it (the model reads only what is new). */
  private readonly sentChats = new SentChats();
  /** The chats' turns embedded for in-chat recall by meaning (chat-vectors.ts). */
  readonly chatVectors: ChatVectors;
  /** Whose vectors are in the index (undefined: none yet). */
  private vectorModelId?: string;
  /** Remote changes arrive in parts (500 records each in a first sync): see graphSoon. */
  private graphTimer?: ReturnType<typeof setTimeout>;
  private graphAt = 0;
  private switching: Promise<void> = Promise.resolve();
  /** The topic-nouns switch as the index was last built with it. */
  private topicsSwitch = false;
  /** Another tab changed the store since this tab last read it. */
  private stale = false;
  /** Repairs made at the last start, for Settings. */
  lastRepair: string[] = [];
  private seed = Math.floor(Math.random() * 2 ** 31);

  private readonly runner: JobRunner;
  /** Forgetting and what it would take (`preview`, shown before it acts): forgetting.ts. */
  readonly forgetting: Forgetting;
  private readonly tabs: MemoryTabs;
  private reloadTimer?: ReturnType<typeof setTimeout>;

  constructor(
    private readonly repo: Repository & LineReads,
    private readonly settings: SettingsService,
    private readonly getLlm: () => LanguageModel | undefined,
    private readonly getEmbedder: () => Embedder | undefined,
  ) {
    super();
    this.chatVectors = new ChatVectors(getEmbedder);
    this.forgetting = new Forgetting({ repo, live: () => this, applyLive: (c) => this.applyLive(c) });
    this.runner = new JobRunner({
      repo,
      settings,
      getLlm,
      getEmbedder,
      live: () => this,
      catchUp: () => this.catchUp(),
      jobFinished: () => {
        this.emit('graph', undefined);
        this.tabs.announce();
      },
      // Another tab's change arrived while the run went on: catch up with it now.
      idle: () => void (this.stale && this.refreshFromOtherTab()),
      jobs: (list) => this.emit('jobs', list),
      error: (message) => this.emit('error', { message }),
    });
    this.tabs = new MemoryTabs({
      cancelJobs: () => this.runner.cancel(),
      // Another tab memorised or corrected something: rebuild from the store so this tab's
      // retrieval and linking see it too.
      changed: (change) => {
        // What another device wrote here, as written (SyncService): mirrored, not a reload of
        // everything (about 3 s of this thread per remote edit at 100k memories: bench:sync:browser).
        // Not while a job runs or a reload is owed: those catch up from the store.
        if (change && !this.stale && !this.runner.running) {
          mirrorChange(this, change, this.vectorModelId);
          this.refineCache = new RefineCache();
          this.graphSoon((change.memories?.length ?? 0) + (change.edges?.length ?? 0) > 100);
          return;
        }
        this.stale = true;
        clearTimeout(this.reloadTimer);
        this.reloadTimer = setTimeout(() => void this.refreshFromOtherTab(), 100);
      },
    });
  }

  /**
   * Catches up with another tab's change. A job run in progress is not stopped for it: that would
   * throw away the model call in flight (a summary can take a minute on a small GPU). The run
   * catches up before its next job and when it ends instead.
   */
  private async refreshFromOtherTab(): Promise<void> {
    if (this.runner.running) return;
    try {
      await this.catchUp();
    } catch (e) {
      this.emit('error', { message: `Could not read what another tab changed: ${errorText(e)}. Reload the page.` });
    }
    this.kick();
  }

  /** Rebuilds from the store when another tab changed it since this tab last read it. */
  private async catchUp(): Promise<void> {
    if (!this.stale) return;
    this.stale = false;
    await this.load();
  }

  /**
   * The views hear of a remote change 100 ms after it, and of large parts (a first sync) at most
   * every 1.5 s: the Memory view rebuilds its picture of all memories each time (a first sync of
   * 100k took 49 s instead of 30 with the view hearing of every part: bench:sync:browser).
   */
  private graphSoon(large: boolean): void {
    if (this.graphTimer) return;
    const wait = large ? Math.max(100, this.graphAt + 1500 - Date.now()) : 100;
    this.graphTimer = setTimeout(() => {
      this.graphTimer = undefined;
      this.graphAt = Date.now();
      this.emit('graph', undefined);
    }, wait);
  }

  /**
   * Builds the index and graph from the store (once per start, and after an import). What does not
   * fit together is repaired first (planRepair), never refused: the app always starts.
   */
  async load(): Promise<void> {
    // Notes cached from the memory as it was are not reused for the memory as it is now.
    this.refineCache = new RefineCache();
    const embedder = this.getEmbedder();
    const repair = await readStoredMemory(this.repo, embedder);
    if (repair.notes.length > 0) await this.recordRepair(repair.change, repair.notes);
    await yieldToPage();
    await this.rebuild(repair.memories, repair.edges, repair.segments, embedder, repair.vectors);
    this.emit('graph', undefined);
    await this.publishJobs();
  }

  /** Writes a start-up repair and keeps it in the repair log; a failing write must not stop the start. */
  private async recordRepair(change: ChangeSet, notes: string[]): Promise<void> {
    this.lastRepair = notes;
    try {
      await writeRepair(this.repo, change, notes);
      this.emit('repaired', { notes });
    } catch (e) {
      this.emit('error', {
        message: `Tealeaf found inconsistent records and could not repair them in storage (${errorText(e)}); they are left out for now.`,
      });
    }
  }

  private async attach(embedder: Embedder, vectors: readonly VectorRecord[]): Promise<void> {
    await attachVectors(this.index, embedder, vectors);
    this.vectorModelId = embedder.modelId;
  }

  /** The repair log, newest last. */
  repairLog(): Promise<RepairLogEntry[]> {
    return readRepairLog(this.repo);
  }

  /**
   * Jobs that failed last time get a fresh round of attempts when the app opens again; with `id`,
   * that one failed job now ("Try again now"), and the runner starts on it.
   */
  async retryFailedJobs(id?: Id): Promise<void> {
    const failed = (await this.repo.listJobs()).filter((j) => j.status === 'failed' && (id === undefined || j.id === id));
    try {
      if (failed.length)
        await this.repo.apply({ jobs: failed.map((j) => ({ ...j, status: 'pending', attempts: 0, updatedAt: Date.now() })) });
    } catch (e) {
      // A full disk must not stop the start: they get their round at a later one.
      if (id !== undefined || !isStorageFullError(e)) throw e;
    }
    if (id === undefined) return;
    await this.publishJobs();
    this.kick();
  }

  /**
   * Builds a new index and graph, then swaps them in: readers never see a half-built index.
   */
  private async rebuild(
    memories: Memory[],
    edges: Edge[],
    segments: Segment[],
    embedder?: Embedder,
    vectors: readonly VectorRecord[] = [],
  ): Promise<void> {
    // What the switch said at this build: a tagger that failed to load is not retried at every
    // settings change (each retry would stop the running job), only when the switch is flipped.
    this.topicsSwitch = this.settings.value.memory.topicNouns;
    const live = await buildLiveMemory(memories, edges, segments, embedder, vectors, await this.nounsIfOn());
    this.vectorModelId = embedder?.modelId;
    this.index = live.index;
    this.graph = live.graph;
    this.memories = live.memories;
    this.segments = live.segments;
  }

  /** The tagger for LD-Agent's topic nouns when that switch is on; without it the switch stays off, said once. */
  private async nounsIfOn(): Promise<NounExtractor | undefined> {
    if (!this.settings.value.memory.topicNouns) return undefined;
    try {
      return await loadNounExtractor();
    } catch (e) {
      this.emit('error', {
        message: `Topic matching could not start (${errorText(e)}); memories are found without it. Reload to try again.`,
      });
      return undefined;
    }
  }

  /** Whether the index keeps topic nouns; the switch changing rebuilds it (settingsChanged). */
  get topicsIndexed(): boolean {
    return this.index.hasTopics === true;
  }

  /** The topic-nouns switch changed: the index is built again with (or without) the nouns. */
  settingsChanged(): Promise<void> {
    // One rebuild at a time: a second change waits for the first and then checks again.
    this.switching = this.switching.then(async () => {
      if (this.settings.value.memory.topicNouns === this.topicsSwitch) return;
      try {
        await this.reload();
      } catch (e) {
        this.emit('error', { message: `Could not rebuild the memory index: ${errorText(e)}. Reload the page.` });
      }
      this.kick();
    });
    return this.switching;
  }

  /** Vectors of the current embedding model, when one is loaded. */
  async attachVectors(): Promise<void> {
    const embedder = this.getEmbedder();
    if (embedder) await this.attach(embedder, await this.repo.listVectors(embedder.modelId));
  }

  /**
   * An embedding model became ready. At start-up the index was built without vectors, so they are
   * just attached; only a switch from another model's vectors needs a rebuild.
   */
  async embedderChanged(): Promise<void> {
    const id = this.getEmbedder()?.modelId;
    if (this.vectorModelId === undefined) await this.attachVectors();
    else if (this.vectorModelId !== id) await this.reload();
    this.kick();
  }

  /**
   * Rebuilds from the store. A job running in this tab holds the graph and memory map it started
   * with: it is stopped first (it resumes from its recorded step on the next kick), so no job
   * keeps writing against a graph that is no longer the live one.
   */
  async reload(): Promise<void> {
    this.runner.cancel();
    await this.runner.settled();
    await this.load();
  }

  /** The prompt without memory (use switched off, a temporary chat): the user's persona only. */
  readonly memoryless = memorylessPreparer(() => this.settings.value.systemPrompt.trim() || undefined);

  prepare(input: PrepareInput): Promise<ReplyPrompt> {
    const { settings, memoryless, index, graph, memories, refineCache, seed, sentChats, chatVectors } = this;
    const deps = { settings, memoryless, index, graph, memories, refineCache, seed, sentChats, chatVectors };
    return prepareReply({ ...deps, embedder: this.getEmbedder() }, input);
  }

  /** A chat's turns as shown (opened, or a message said): embedded in the background for in-chat recall. */
  noteChat(turns: readonly Turn[]): void {
    if (this.getEmbedder()) this.chatVectors.note(dialogueOf(turns));
  }

  /**
   * Writes a change and mirrors what the store actually wrote (cascades included, references that
   * went away left out) into the live index and graph: retrieval respects it at once.
   */
  async applyLive(requested: ChangeSet): Promise<AppliedChange> {
    const change = await this.repo.apply(requested);
    mirrorChange(this, change, this.getEmbedder()?.modelId);
    this.refineCache = new RefineCache();
    this.emit('graph', undefined);
    this.tabs.announce();
    // Lines forgotten or back: the passages rebuilt lost their vectors, made again in the background.
    if (requested.turnPatches?.length) this.kick();
    return change;
  }

  async editMemory(id: Id, text: string): Promise<void> {
    const m = this.memories.get(id);
    const patch = m && editMemoryText(m, text);
    if (!m || !patch?.text) return;
    const change: ChangeSet = { memoryPatches: [patch] };
    const embedder = this.getEmbedder();
    if (embedder) {
      // Re-embedded so that search by meaning finds the corrected text.
      const [vector] = await embedder.embed([memoryUnit({ ...m, text: patch.text }).indexText ?? patch.text]).catch(() => [undefined]);
      if (vector) change.vectors = [{ unitId: id, modelId: embedder.modelId, vector }];
    }
    await this.applyLive(change);
  }

  /** Deletes a memory (the store takes its edges and vectors along); returns the change that undoes it. */
  deleteMemory(id: Id): Promise<ChangeSet | undefined> {
    return this.deleteMemories([id]);
  }

  /**
   * Forgets memories and every copy of them (forgetting.ts), with `also` written in the same
   * change (a chat's answer saying so); returns the change that undoes it all.
   */
  deleteMemories(ids: Id[], also: ChangeSet = {}): Promise<ChangeSet | undefined> {
    return this.forgetting.forget(ids, also);
  }

  /**
   * Runs `fn` (an import, delete-all) with every memorise job stopped, in this tab and in others,
   * holding the job lock so no job starts until it is done. A job stopped mid-step wrote nothing
   * of that step; it resumes from its recorded step afterwards if its records still exist.
   */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    this.tabs.cancelJobs();
    this.runner.cancel();
    await this.runner.settled();
    let result: { value: T } | undefined;
    await withJobLock(async () => {
      result = { value: await fn() };
    }, true);
    if (!result) throw new Error('The operation did not run.');
    this.tabs.announce();
    return result.value;
  }

  /**
   * Memory creation was switched off, or the model server stopped answering: the job running now
   * stops at once (it wrote nothing of the step it was in and resumes from its recorded step when
   * creation is on again, or the model is back).
   */
  pauseJobs(): void {
    this.runner.cancel();
  }

  /**
   * Deletes a chat: its turns, passages (segments) and memorising job; its memories too when asked.
   * Kept memories keep pointing at the deleted turns (the explorer says "source deleted"). A chat
   * whose memorising had not finished takes what its job had made so far with it: that was never a
   * finished set, and the user was told the chat would not be memorised. Runs as
   * an exclusive operation: a memorise job of this chat (in any tab) is stopped and has finished
   * its step before anything is deleted, and its record goes in the same change, so it can neither
   * write after the delete nor resume.
   */
  async deleteSession(sessionId: Id, { deleteMemories }: { deleteMemories: boolean }): Promise<AppliedChange> {
    const applied = await this.exclusive(async () => this.applyLive(await sessionDeletion(this.repo, sessionId, deleteMemories)));
    // Other chats' jobs were stopped too: they resume from their recorded step.
    this.kick();
    await this.publishJobs();
    return applied;
  }

  /** How many memories were made from a chat. */
  memoriesOfSession(sessionId: Id): number {
    let n = 0;
    for (const m of this.memories.values()) if (m.sessionId === sessionId) n++;
    return n;
  }

  async changeEdge(id: Id, relation: Relation | null): Promise<void> {
    const edge = this.graph.getEdge(id);
    if (!edge) return;
    await this.applyLive(changeEdge(edge, relation, this.memories, Date.now()));
  }

  /** "No longer true" (ended at `at`, else at the change it links to, else now) or "Mark current". */
  async toggleSuperseded(id: Id, at?: number): Promise<string | undefined> {
    const r = toggleSuperseded(id, this.memories, this.graph, Date.now(), at);
    if (r.change) await this.applyLive(r.change);
    return r.error;
  }

  /** The user's answer to a change the linker was unsure of (the memory notice's question). */
  async answerChange(edgeId: Id, ended: boolean): Promise<void> {
    const edge = this.graph.getEdge(edgeId);
    const change = edge && answerChange(edge, ended, this.memories);
    if (change) await this.applyLive(change);
  }

  /** The standing instructions every reply is sent with the model in use, and those that do not fit. */
  instructionFit(): InstructionFit {
    return instructionsFor(this.memories.values(), windowOf(this.getLlm()), REPLY_TOKENS);
  }

  /** The chat model changed: a job calling the old one stops that call and runs again (JobRunner). */
  modelChanged(llm: LanguageModel | undefined): void {
    this.runner.modelChanged(llm);
  }

  /** Runs pending jobs in the background; safe to call often. */
  kick(): void {
    this.runner.kick();
  }

  publishJobs(): Promise<void> {
    return this.runner.publishJobs();
  }
}
