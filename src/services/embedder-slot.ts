// The embedding model as the Models service holds it: which one the settings choose, its
// download and start with progress, and the switch to another (memories are then re-embedded in
// the background by the memory service).
import { errorText } from '../errors';
import type { Embedder } from '../ports';
import { DEFAULT_EMBEDDING_MODEL_ID, embeddingModelById, TEST_EMBEDDING_MODEL, type EmbeddingModelInfo } from '../models/catalog';
import { EmbedderRuntime } from '../models/embedder-runtime';
import type { ModelsSnapshot } from './model-snapshot';
import { IS_E2E, transformersEnv } from './model-env';
import type { SettingsService } from './settings';

export interface EmbedderSlotEvents {
  onState: (state: ModelsSnapshot['embedder']) => void;
  onReady: (embedder: Embedder) => void;
  /** A load ended (ready or failed): storage use changed. */
  onSettled: () => void;
}

export class EmbedderSlot {
  private runtime?: EmbedderRuntime;
  private ready = false;

  constructor(
    private readonly settings: SettingsService,
    private readonly events: EmbedderSlotEvents,
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

  /** Downloads (once) and starts the chosen model. */
  async load(): Promise<void> {
    const model = this.model();
    if (!this.runtime || this.runtime.modelId !== model.id) {
      this.runtime?.dispose();
      this.ready = false;
      this.runtime = new EmbedderRuntime({
        model,
        env: transformersEnv(this.settings.value.modelMirror),
        onProgress: (p) => this.events.onState({ state: 'loading', modelId: model.id, fraction: p.fraction, sizeMB: model.downloadMB }),
      });
    }
    this.events.onState({ state: 'loading', modelId: model.id, fraction: 0, sizeMB: model.downloadMB });
    try {
      await this.runtime.ready();
      this.ready = true;
      this.events.onState({ state: 'ready', modelId: model.id, sizeMB: model.downloadMB });
      if (this.settings.value.embeddingModelId !== model.id) await this.settings.update({ embeddingModelId: model.id });
      this.events.onReady(this.runtime);
    } catch (e) {
      this.events.onState({ state: 'error', modelId: model.id, message: errorText(e), sizeMB: model.downloadMB });
    } finally {
      this.events.onSettled();
    }
  }

  /** Switches to model `id` and starts it; false when it is unknown or already the one. */
  async choose(id: string): Promise<boolean> {
    if (!embeddingModelById(id) || id === this.model().id) return false;
    await this.settings.update({ embeddingModelId: id });
    await this.load();
    return true;
  }
}
