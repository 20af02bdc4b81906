// Runs the memorising jobs in the background: one tab at a time (Web Locks), each job against the
// live memory as it is when the job starts, and the vectors a new embedding model lacks after them.
// MemoryService owns the live memory and hands the runner what it needs (JobRunnerHost).
import { errorText } from '../../errors';
import type { Embedder, LanguageModel, Repository } from '../../ports';
import type { Id, Memory, Segment } from '../../memory/types';
import type { MemoryGraph } from '../../memory/graph';
import { runMemoriseJob, type Segmenter } from '../../memory/ingest/memorise';
import { segmentSession } from '../../memory/ingest/segments';
import { segmentUnit } from '../../memory/retrieval/units';
import { hasLines } from '../../memory/forget/lines';
import { jobSnapshot, withJob, withJobLock, type JobSnapshot } from './jobs';
import type { LiveIndex } from './live-memory';
import { embedMissing } from './reembed';
import type { SettingsService } from '../settings';

export interface JobRunnerHost {
  readonly repo: Repository;
  readonly settings: SettingsService;
  getLlm(): LanguageModel | undefined;
  getEmbedder(): Embedder | undefined;
  /** The live memory, read at each job (catching up with another tab replaces it). */
  live(): { index: LiveIndex; graph: MemoryGraph; memories: Map<Id, Memory>; segments: Map<Id, Segment> };
  /** Reads what other tabs wrote since this tab last read the store; called before each job. */
  catchUp(): Promise<void>;
  /** A job finished: the views repaint and other tabs are told. */
  jobFinished(): void;
  /** The run ended (the lock is free again). */
  idle(): void;
  jobs(list: JobSnapshot[]): void;
  error(message: string): void;
}

export class JobRunner {
  running = false;
  private again = false;
  /** Aborts the job run in progress (import and delete-all stop it before they write). */
  private controller?: AbortController;
  private run?: Promise<void>;
  private published: JobSnapshot[] = [];
  /** The memorise job this runner works on now. */
  private activeId?: Id;
  /** The model the job running now calls (and its model id, which a runtime may change). */
  private using?: { llm: LanguageModel; modelId: string };

  constructor(private readonly host: JobRunnerHost) {}

  /** Runs pending jobs in the background; safe to call often. */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.run = this.loop();
  }

  /** Stops the job running now: it wrote nothing of the step it was in and resumes from it later. */
  cancel(): void {
    // No second round either: whoever cancels kicks again when it is done.
    this.again = false;
    this.controller?.abort(new DOMException('Memorising was stopped for an import or a deletion.', 'AbortError'));
  }

  /**
   * The chat model changed (another model, the server's model, none): a job calling the old one
   * stops its call now (a call that never ends would otherwise hold memorising) and runs again
   * with the new one. An aborted step wrote nothing and counts as no failed attempt.
   */
  modelChanged(llm: LanguageModel | undefined): void {
    const using = this.using;
    if (!using || (llm === using.llm && llm.modelId === using.modelId)) return this.kick();
    this.controller?.abort(new DOMException('The chat model changed.', 'AbortError'));
    this.again = true;
  }

  /** Resolves when the run in progress (if any) has stopped. */
  async settled(): Promise<void> {
    await this.run?.catch(() => undefined);
  }

  private async loop(): Promise<void> {
    const { repo, getEmbedder } = this.host;
    this.running = true;
    try {
      do {
        this.again = false;
        // Wait for the lock rather than give up: the tab holding it may have listed its jobs
        // before this tab queued one.
        await withJobLock(async () => {
          const controller = new AbortController();
          this.controller = controller;
          try {
            const ran = await this.runPending(controller.signal);
            const embedded = await this.embedMissing(controller.signal);
            // New vectors made the packed copy stale: repack now, while idle, so the next start
            // reads a few packs instead of every vector.
            const embedder = getEmbedder();
            if ((ran || embedded) && embedder && !controller.signal.aborted) await repo.listVectors(embedder.modelId);
          } catch (e) {
            // Stopped on purpose (import, delete-all, memory creation off, the model server gone):
            // not a failure to report; the list shows the job as waiting again.
            if (!controller.signal.aborted) throw e;
            await this.publishJobs();
          } finally {
            if (this.controller === controller) this.controller = undefined;
          }
        }, true);
      } while (this.again);
    } catch (e) {
      this.host.error(`Memorising failed: ${errorText(e)}`);
    } finally {
      this.running = false;
      this.host.idle();
    }
  }

  /** Runs every runnable job; true when at least one ran. */
  private async runPending(signal: AbortSignal): Promise<boolean> {
    const { repo, settings } = this.host;
    const tried = new Set<Id>();
    // Re-list after every job: another tab may have queued one meanwhile.
    for (;;) {
      if (signal.aborted) break;
      // Memory creation switched off (in any tab: read from the store): queued jobs wait,
      // persisted, until it is on again.
      if (!(await settings.refresh()).memoryCreation) break;
      // Link against what other tabs wrote meanwhile (their memories, the user's corrections).
      await this.host.catchUp();
      const job = (await repo.listJobs())
        .filter((j) => (j.status === 'pending' || j.status === 'running') && !tried.has(j.id))
        .sort((a, b) => a.createdAt - b.createdAt)[0];
      if (!job) break;
      const llm = this.host.getLlm();
      if (!llm) break; // memorising needs the model; jobs wait, persisted, until one is loaded
      tried.add(job.id);
      this.using = { llm, modelId: llm.modelId };
      // Shown as under way from its first step on (the record says "running" only after it).
      this.activeId = job.id;
      this.publish(jobSnapshot({ ...job, status: 'running' }));
      // Topic ranges come from the summarising call; no separate segmentation call.
      const segmenter: Segmenter = ({ turns, ranges, signal }) => segmentSession(turns, { ranges, signal });
      const live = this.host.live();
      // A failure is not told here: the chat, its list entry and the header show it, with "Try again now".
      await runMemoriseJob(job, {
        repo,
        llm,
        embedder: this.host.getEmbedder(),
        index: live.index,
        graph: live.graph,
        memories: live.memories,
        settings: settings.value.memory,
        segmenter,
        signal,
        // Read again before each step: a switch-off in another tab starts no further step here.
        mayStartStep: async () => (await settings.refresh()).memoryCreation,
        onProgress: (j) => this.publish(jobSnapshot(j)),
      }).finally(() => {
        this.activeId = undefined;
        this.using = undefined;
      });
      // Segments written by the job join the index here (memories were added by the job itself).
      for (const s of job.sessionId ? await repo.listSegmentsBySession(job.sessionId) : []) {
        if (!live.segments.has(s.id)) {
          live.segments.set(s.id, s);
          if (hasLines(s)) live.index.upsert(segmentUnit(s));
        }
      }
      this.host.jobFinished();
      await this.publishJobs();
    }
    await this.publishJobs();
    return tried.size > 0;
  }

  /** Embeds what has no vector for the current embedding model (reembed.ts); true when any was. */
  private async embedMissing(signal: AbortSignal): Promise<boolean> {
    const embedder = this.host.getEmbedder();
    if (!embedder) return false;
    const live = this.host.live();
    const done = await embedMissing({
      embedder,
      stillCurrent: () => this.host.getEmbedder() === embedder,
      unitIds: [...live.memories.keys(), ...live.segments.keys()],
      index: live.index,
      repo: this.host.repo,
      signal,
      onProgress: (job) => this.publish(job),
    });
    if (done) await this.publishJobs();
    return done;
  }

  async publishJobs(): Promise<void> {
    const jobs = await this.host.repo.listJobs();
    this.published = jobs.filter((j) => j.status !== 'done').map((j) => this.marked(jobSnapshot(j)));
    this.host.jobs(this.published);
  }

  /** A job's progress replaces its entry in the list published last: every job stays listed. */
  private publish(snap: JobSnapshot): void {
    this.host.jobs((this.published = withJob(this.published, this.marked(snap))));
  }

  /** The job this runner works on now is marked active (and shown as running between attempts). */
  private marked(snap: JobSnapshot): JobSnapshot {
    if (snap.id !== this.activeId) return snap;
    return { ...snap, active: true, status: snap.status === 'pending' ? 'running' : snap.status };
  }
}
