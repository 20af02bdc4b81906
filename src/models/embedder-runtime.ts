// Main-thread client of the embedding worker; implements the Embedder port.
// One runtime (and one worker) per model, so calls queue one at a time per model.
// Imports no SDK: transformers.js lives in embed.worker.ts.

import type { Embedder } from '../ports';
import { DEFAULT_EMBEDDING_MODEL_ID, embeddingModelById, type EmbeddingModelInfo } from './catalog';
import { classifyModelError, ModelRuntimeError, USER_MESSAGES } from './errors';
import type { EmbedEnvSettings, EmbedMethods } from './messages';
import { embedProgress, type ModelProgress } from './progress';
import { RpcClient, type WorkerLike } from './rpc';

export interface EmbedderRuntimeOptions {
  /** The model to run (default: the catalog's default). Its dimension is what `dimension` reports. */
  model?: EmbeddingModelInfo;
  /**
   * transformers.js settings: hub mirror (remoteHost/remotePathTemplate), local models
   * (allowLocalModels + localModelPath, e.g. "/models/"), wasmPaths (default: the files bundled
   * with the app), threads.
   */
  env?: EmbedEnvSettings;
  onProgress?: (p: ModelProgress) => void;
  createWorker?: () => WorkerLike;
  now?: () => number;
}

const defaultWorker = (): WorkerLike =>
  new Worker(new URL('./embed.worker.ts', import.meta.url), { type: 'module', name: 'tealeaf-embed' });

export class EmbedderRuntime implements Embedder {
  readonly modelId: string;
  readonly dimension: number;
  readonly model: EmbeddingModelInfo;
  private client?: RpcClient<EmbedMethods>;
  private readying?: Promise<void>;
  private readonly opts: EmbedderRuntimeOptions;

  constructor(options: EmbedderRuntimeOptions = {}) {
    const model = options.model ?? embeddingModelById(DEFAULT_EMBEDDING_MODEL_ID);
    if (!model) throw new Error('No embedding model configured.');
    this.model = model;
    this.modelId = model.id;
    this.dimension = model.dimension;
    this.opts = options;
  }

  private worker(): RpcClient<EmbedMethods> {
    if (!this.client || !this.client.alive) {
      this.client = new RpcClient<EmbedMethods>((this.opts.createWorker ?? defaultWorker)());
      this.readying = undefined;
    }
    return this.client;
  }

  /** Downloads (first time) and prepares the model. Safe to call many times. */
  ready(): Promise<void> {
    if (this.readying && this.client?.alive) return this.readying;
    const client = this.worker();
    const now = this.opts.now ?? (() => Date.now());
    let start: { t: number; bytes: number } | undefined;
    const run = client
      .call(
        'init',
        { modelId: this.model.id, dtype: this.model.dtype, pooling: this.model.pooling, env: this.opts.env ?? {} },
        {
          onEvent: ({ loaded, total }) => {
            const t = now();
            start ??= { t, bytes: loaded };
            const secs = (t - start.t) / 1000;
            const rate = secs >= 1 ? (loaded - start.bytes) / secs : 0;
            const eta = rate > 0 ? Math.round((total - loaded) / rate) : undefined;
            this.opts.onProgress?.(embedProgress(loaded, total, eta));
          },
        },
      )
      .then(({ dimension }) => {
        if (dimension !== this.dimension) {
          const detail = `Model ${this.model.id} produced ${dimension}-dimensional vectors, expected ${this.dimension}.`;
          throw new ModelRuntimeError({
            kind: 'unknown',
            message: `The embedding model does not match its description: ${detail}`,
            detail,
          });
        }
        this.opts.onProgress?.({ phase: 'ready', fraction: 1, text: 'Ready' });
      })
      .catch((err: unknown) => {
        // Let the next call retry from a fresh worker.
        this.readying = undefined;
        this.client?.terminate(new Error('Embedding worker reset after a failed start.'));
        this.client = undefined;
        throw new ModelRuntimeError(classifyModelError(err, { online: typeof navigator === 'undefined' ? undefined : navigator.onLine }));
      });
    this.readying = run;
    return run;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const abortError = (): ModelRuntimeError =>
      new ModelRuntimeError({ kind: 'cancelled', message: USER_MESSAGES.cancelled, detail: 'Embedding was cancelled.' });
    if (signal?.aborted) throw abortError();
    if (texts.length === 0) return [];
    await this.ready();
    if (signal?.aborted) throw abortError();
    try {
      const out = await this.worker().call('embed', { texts }, { signal });
      if (signal?.aborted) throw abortError();
      return out;
    } catch (err) {
      if (err instanceof ModelRuntimeError) throw err;
      throw new ModelRuntimeError(classifyModelError(err));
    }
  }

  dispose(): void {
    this.client?.terminate(new Error('The embedding runtime was closed.'));
    this.client = undefined;
    this.readying = undefined;
  }
}
