// The embedding model ("memory search model") as the Models service holds it: which one the
// settings choose, its download and start with progress, the switch to another (memories are then
// re-embedded in the background by the memory service), and when it loads by itself: with the
// first chat model the user loads, and at start where it was loaded before, unless turned off.
import { errorText } from '../../errors';
import type { Embedder } from '../../ports';
import { DEFAULT_EMBEDDING_MODEL_ID, embeddingModelById, TEST_EMBEDDING_MODEL, type EmbeddingModelInfo } from '../../models/catalog';
import { EmbedderRuntime, type EmbedderRuntimeOptions } from '../../models/embedder-runtime';
import type { EmbedderSnapshot } from './model-snapshot';
import { buildOptions, IS_E2E, transformersEnv } from './model-env';
import type { SettingsService } from '../settings';

export interface EmbedderSlotEvents {
  onState: (state: EmbedderSnapshot) => void;
  /** The embedder became ready, or (undefined) is no longer used. */
  onChange: (embedder: Embedder | undefined) => void;
  /** A load ended (ready or failed): storage use changed. */
  onSettled: () => void;
}

/** What the slot needs of a runtime (EmbedderRuntime; a fake in unit tests). */
export interface SlotRuntime extends Embedder {
  ready(): Promise<void>;
  dispose(): void;
}

export class EmbedderSlot {
  private runtime?: SlotRuntime;
  private ready = false;
  private loading?: Promise<void>;
  private state: EmbedderSnapshot['state'] = 'none';
  /** Bumped by a cancel or a turn-off: a load started before it no longer counts. */
  private generation = 0;

  constructor(
    private readonly settings: SettingsService,
    private readonly events: EmbedderSlotEvents,
    private readonly createRuntime: (o: EmbedderRuntimeOptions) => SlotRuntime = (o) => new EmbedderRuntime(o),
  ) {}

  /** The started embedder, once ready. */
  get embedder(): Embedder | undefined {
    return this.ready ? this.runtime : undefined;
  }

  /** The model the settings choose (the e2e build: its test model). */
  model(): EmbeddingModelInfo {
    if (IS_E2E) return TEST_EMBEDDING_MODEL;
    return (
      embeddingModelById(this.settings.value.embeddingModelId ?? DEFAULT_EMBEDDING_MODEL_ID) ??
      embeddingModelById(DEFAULT_EMBEDDING_MODEL_ID)!
    );
  }

  private emit(patch: Omit<EmbedderSnapshot, 'sizeMB' | 'label'>): void {
    this.state = patch.state;
    const model = this.model();
    this.events.onState({ ...patch, sizeMB: model.downloadMB, label: model.label });
  }

  /** The state before anything loads: wanted (it comes with a chat model) or turned off. */
  initial(): EmbedderSnapshot {
    const model = this.model();
    this.state = this.settings.value.memorySearchModel ? 'none' : 'off';
    return { state: this.state, sizeMB: model.downloadMB, label: model.label };
  }

  /** At start: loads the model used before when models load by themselves and it is not off. */
  resume(): void {
    const s = this.settings.value;
    if (s.embeddingModelId && s.autoLoadModel && s.memorySearchModel) void this.load();
  }

  /**
   * A chat model is being loaded or put to use (any engine): the memory search model comes along
   * the first time in this tab, unless the user turned it off. A failure is not retried here: the
   * Models view offers the retry, and the next start tries again.
   */
  withChatModel(): void {
    if (buildOptions.searchModelWithChat && this.settings.value.memorySearchModel && this.state === 'none') void this.load();
  }

  /** The user asks for it (Download, Turn on, Retry): it is wanted from now on. */
  async turnOn(): Promise<void> {
    if (!this.settings.value.memorySearchModel) await this.settings.update({ memorySearchModel: true });
    await this.load();
  }

  /**
   * The user says no: a download in progress stops (what was fetched stays in the browser's cache),
   * a ready model is no longer used (recall uses words only), and it does not come back by itself.
   */
  async turnOff(): Promise<void> {
    this.generation++;
    this.loading = undefined;
    const wasReady = this.ready;
    this.ready = false;
    // A ready runtime may be embedding for a job right now: it is left to finish, not killed.
    if (!wasReady) {
      this.runtime?.dispose();
      this.runtime = undefined;
    }
    this.emit({ state: 'off' });
    if (wasReady) this.events.onChange(undefined);
    await this.settings.update({ memorySearchModel: false });
  }

  /** Downloads (once) and starts the chosen model; a second call joins the load under way. */
  load(): Promise<void> {
    if (!this.loading) {
      const run: Promise<void> = this.run().finally(() => {
        if (this.loading === run) this.loading = undefined;
      });
      this.loading = run;
    }
    return this.loading;
  }

  private async run(): Promise<void> {
    const model = this.model();
    const generation = this.generation;
    const current = () => generation === this.generation;
    if (this.ready && this.runtime?.modelId === model.id) return;
    if (!this.runtime || this.runtime.modelId !== model.id) {
      this.runtime?.dispose();
      this.ready = false;
      this.runtime = this.createRuntime({
        model,
        env: transformersEnv(this.settings.value.modelMirror),
        onProgress: (p) => {
          if (current() && !this.ready)
            this.emit({ state: 'loading', modelId: model.id, fraction: p.fraction, loadedMB: p.loadedMB, totalMB: p.totalMB });
        },
      });
    }
    if (!this.ready) this.emit({ state: 'loading', modelId: model.id, fraction: 0 });
    try {
      await this.runtime.ready();
      if (!current()) return;
      this.ready = true;
      this.emit({ state: 'ready', modelId: model.id });
      if (this.settings.value.embeddingModelId !== model.id) await this.settings.update({ embeddingModelId: model.id });
      this.events.onChange(this.runtime);
    } catch (e) {
      if (current()) this.emit({ state: 'error', modelId: model.id, message: errorText(e) });
    } finally {
      this.events.onSettled();
    }
  }

  /** Switches to model `id` and starts it; false when it is unknown or already the one. */
  async choose(id: string): Promise<boolean> {
    if (!embeddingModelById(id) || id === this.model().id) return false;
    // A load of the model chosen before no longer counts.
    this.generation++;
    this.loading = undefined;
    await this.settings.update({ embeddingModelId: id, memorySearchModel: true });
    await this.load();
    return true;
  }
}
