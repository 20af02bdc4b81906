// The Evaluate view's service: runs TeaFarm (src/memory/eval) with the loaded model over the live
// memory of the space this tab shows. Read only: the pipeline gets no repository and the simulated
// sessions live in memory, so nothing reaches the user's chats or memories. Finished cases are kept
// for this tab's life, so a cancelled run, started again, continues where it stopped.
import { errorText } from '../../errors';
import { sourceChanged } from '../../memory/derived';
import type { Memory } from '../../memory/types';
import type { Embedder, LanguageModel } from '../../ports';
import type { ConditionId, TeaFarmCache, TeaFarmProgress, TeaFarmReport } from '../../memory/eval/teafarm';
import { CONDITIONS, type Condition } from '../../memory/eval/conditions';
import { Emitter } from '../emitter';
import { yieldToPage } from './jobs';
import type { MemoryService } from './memory';
import type { SettingsService } from '../settings';

export type { CaseResult, ConditionId, ConditionScore, TeaFarmProgress, TeaFarmReport } from '../../memory/eval/teafarm';
export type { Condition } from '../../memory/eval/conditions';
export const EVALUATION_CONDITIONS: readonly Condition[] = CONDITIONS;

export interface EvaluationSnapshot {
  state: 'idle' | 'running' | 'done' | 'cancelled' | 'failed';
  progress?: TeaFarmProgress;
  report?: TeaFarmReport;
  error?: string;
  /** Why the last report is gone (the memory it was made from changed). */
  notice?: string;
}

/** Why a run cannot start now, in words for the view; undefined when it can. */
export type Blocker = 'no-model' | 'no-memories';

export interface EvaluationOptions {
  questions: number;
  conditions: ConditionId[];
}

export class EvaluationService extends Emitter<{ state: EvaluationSnapshot }> {
  snapshot: EvaluationSnapshot = { state: 'idle' };
  private controller?: AbortController;
  private cache?: TeaFarmCache;

  constructor(
    private readonly memory: MemoryService,
    private readonly settings: SettingsService,
    private readonly getLlm: () => LanguageModel | undefined,
    private readonly getEmbedder: () => Embedder | undefined,
  ) {
    super();
    // The report repeats the memories it was made from (its questions, the replies): when one of
    // them is deleted, edited or stops being true, the report and the cached cases go.
    memory.on('graph', () => this.dropIfSourcesChanged());
  }

  /** The memories the last run was made from, as they were then. */
  private sources?: ReadonlyMap<string, Memory>;

  private dropIfSourcesChanged(): void {
    if (!this.sources || this.snapshot.state === 'running') return;
    for (const [id, before] of this.sources) {
      const now = this.memory.memories.get(id);
      if (now && !sourceChanged(before, now)) continue;
      this.sources = undefined;
      this.cache = undefined;
      this.set({ state: 'idle', notice: 'Your memory changed since the last evaluation, so its report was cleared. Run it again.' });
      return;
    }
  }

  blocker(): Blocker | undefined {
    if (!this.getLlm()) return 'no-model';
    if (this.memory.memories.size === 0) return 'no-memories';
    return undefined;
  }

  private set(next: EvaluationSnapshot): void {
    this.snapshot = next;
    this.emit('state', next);
  }

  async start(options: EvaluationOptions): Promise<void> {
    if (this.snapshot.state === 'running') return;
    const llm = this.getLlm();
    if (!llm || this.blocker()) return;
    const controller = new AbortController();
    this.controller = controller;
    this.set({ state: 'running', progress: { step: 'questions', done: 0, total: 0 } });
    try {
      // Loaded on first use: the main bundle does not carry the evaluation.
      const { runTeaFarm, MemoryTeaFarmCache } = await import('../../memory/eval/teafarm');
      this.cache ??= new MemoryTeaFarmCache();
      const report = await runTeaFarm({
        llm,
        index: this.memory.index,
        graph: this.memory.graph,
        // A copy: a memory the user edits meanwhile does not change the run half way.
        memoriesById: (this.sources = new Map(this.memory.memories)),
        embedder: this.getEmbedder(),
        settings: this.settings.value.memory,
        conditions: options.conditions,
        questions: options.questions,
        now: Date.now(),
        persona: this.settings.value.systemPrompt.trim() || undefined,
        cache: this.cache,
        signal: controller.signal,
        onProgress: (progress) => this.set({ state: 'running', progress }),
      });
      await yieldToPage();
      this.set({ state: report.status === 'cancelled' ? 'cancelled' : 'done', report });
      // Changed while it ran: what it says may already be untrue.
      this.dropIfSourcesChanged();
    } catch (e) {
      this.set(controller.signal.aborted ? { state: 'cancelled' } : { state: 'failed', error: errorText(e) });
    } finally {
      if (this.controller === controller) this.controller = undefined;
    }
  }

  cancel(): void {
    this.controller?.abort(new DOMException('The evaluation was cancelled.', 'AbortError'));
  }
}
