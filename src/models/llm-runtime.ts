// Main-thread client of the LLM worker. Implements LanguageModel once a model is loaded.
// Imports no SDK: web-llm is only in llm.worker.ts, so the app shell stays small.

import { LlmStateHolder } from './llm-state';
import { errorText } from '../errors';
import { answerFinish, type ChatMessage, type GenerateOptions, type JsonSchema, type LanguageModel, type ModelWindow } from '../ports';
import { CHAT_LIMITS, JSON_LIMITS, outputCap, tokenBudget } from './call-limits';
import { LLM_MODELS, llmModelById, type LlmModelInfo } from './catalog';
import { classifyModelError, ModelRuntimeError, USER_MESSAGES, type ClassifiedError } from './errors';
import { buildModelRecord, resolveMirror, type LlmMirror } from './llm-config';
import type { LlmCacheBackend, LlmChatParams, LlmMethods, LlmNotice, ModelRecordLite } from './messages';
import { webLlmOverflow } from './overflow';
import { ProgressTracker, type ModelProgress } from './progress';
import { RpcClient, type WorkerLike } from './rpc';

export type { LlmState } from './llm-state';

export interface LlmRuntimeOptions {
  /** Self-hosted weights/libraries (relative URLs resolve against `baseHref`). */
  mirror?: LlmMirror;
  baseHref?: string;
  /** Where web-llm caches weights; Cache Storage by default. */
  cacheBackend?: LlmCacheBackend;
  /** The models load() accepts (default: the curated catalog). */
  models?: readonly LlmModelInfo[];
  /** Creates the worker; tests inject a fake, e2e may inject a scripted worker. */
  createWorker?: () => WorkerLike;
  /** For classifying download errors as "network" when offline. */
  isOnline?: () => boolean;
}

export interface LoadOptions {
  onProgress?: (p: ModelProgress) => void;
}

const defaultWorker = (): WorkerLike => new Worker(new URL('./llm.worker.ts', import.meta.url), { type: 'module', name: 'tealeaf-llm' });

export class LlmRuntime extends LlmStateHolder implements LanguageModel {
  /** web-llm keeps the KV cache of one conversation; any other request resets it. */
  readonly keepsConversation = true;
  private client?: RpcClient<LlmMethods, LlmNotice>;
  /** The loaded model's window (set by load, read while the model is ready). */
  private loadedWindow?: { modelId: string; window: ModelWindow };
  private readonly opts: Required<Pick<LlmRuntimeOptions, 'cacheBackend' | 'models' | 'createWorker' | 'isOnline'>> & {
    mirror?: LlmMirror;
  };

  constructor(options: LlmRuntimeOptions = {}) {
    super();
    const baseHref = options.baseHref ?? (typeof location !== 'undefined' ? location.href : 'http://localhost/');
    this.opts = {
      cacheBackend: options.cacheBackend ?? 'cache',
      models: options.models ?? LLM_MODELS,
      createWorker: options.createWorker ?? defaultWorker,
      isOnline: options.isOnline ?? (() => (typeof navigator === 'undefined' ? true : navigator.onLine)),
      mirror: resolveMirror(options.mirror, baseHref),
    };
  }

  private info(modelId: string): LlmModelInfo {
    const info = this.opts.models.find((m) => m.id === modelId) ?? llmModelById(modelId);
    if (!info) throw new ModelRuntimeError({ kind: 'unknown', message: `Unknown model "${modelId}".`, detail: `Unknown model ${modelId}` });
    return info;
  }

  private record(modelId: string): ModelRecordLite {
    return buildModelRecord(this.info(modelId), this.opts.mirror);
  }

  private worker(): RpcClient<LlmMethods, LlmNotice> {
    if (!this.client || !this.client.alive) {
      this.client = new RpcClient<LlmMethods, LlmNotice>(
        this.opts.createWorker(),
        (n) => this.onNotice(n),
        (err) => this.onCrash(err),
      );
    }
    return this.client;
  }

  /** Throws the worker away; the next call starts a fresh one (fresh GPU device, fresh engine). */
  protected resetWorker(reason: Error): void {
    const c = this.client;
    this.client = undefined;
    c?.terminate(reason);
  }

  private classify(err: unknown): ClassifiedError {
    return classifyModelError(err, { online: this.opts.isOnline() });
  }

  /**
   * Downloads (or loads from cache) and prepares a model. Call probeWebGpu() first: web-llm
   * downloads the model library before it checks the GPU. Rejects with ModelRuntimeError.
   */
  async load(modelId: string, options: LoadOptions = {}): Promise<void> {
    const info = this.info(modelId);
    const seq = ++this.loadSeq;
    // A previous engine (or a lost device) is discarded with its worker: loading into a fresh
    // worker is the only reliable way to free GPU memory after an OOM.
    if (this.current.status !== 'idle') this.resetWorker(new Error('Model load was cancelled by a newer load.'));
    const tracker = new ProgressTracker(info.downloadMB);
    this.setState({ status: 'loading', modelId });
    let countsTokens: boolean;
    try {
      ({ countsTokens } = await this.worker().call(
        'load',
        { record: buildModelRecord(info, this.opts.mirror), cacheBackend: this.opts.cacheBackend },
        {
          onEvent: (report) => {
            if (seq !== this.loadSeq) return;
            const progress = tracker.update(report);
            this.setState({ status: 'loading', modelId, progress });
            options.onProgress?.(progress);
          },
        },
      ));
    } catch (err) {
      if (seq !== this.loadSeq) throw new ModelRuntimeError(cancelled(err));
      const c = this.classify(err);
      if (c.kind !== 'cancelled') {
        // Whatever the engine holds now is suspect (half-allocated buffers, lost device).
        this.resetWorker(new Error('Worker reset after a failed load.'));
        this.setState({ status: 'error', modelId, error: c });
      }
      throw new ModelRuntimeError(c);
    }
    if (seq !== this.loadSeq) throw new ModelRuntimeError(cancelled('superseded'));
    this.loadedWindow = { modelId, window: this.windowOf(info, countsTokens) };
    this.setState({ status: 'ready', modelId });
  }

  /**
   * The window of the model loaded: web-llm's context_window_size (the catalog's contextWindow,
   * set in llm-config.ts), a quarter of it as the output cap, and exact counting where the worker
   * reaches the model's tokenizer (webllm-tokens.ts). Undefined while no model is ready.
   */
  get window(): ModelWindow | undefined {
    const s = this.current;
    return s.status === 'ready' && this.loadedWindow?.modelId === s.modelId ? this.loadedWindow.window : undefined;
  }

  private windowOf(info: LlmModelInfo, countsTokens: boolean): ModelWindow {
    const window: ModelWindow = { contextTokens: info.contextWindow, maxOutputTokens: outputCap(info.contextWindow) };
    if (countsTokens) {
      window.countTokens = (messages, signal) => {
        const s = this.current;
        if (s.status !== 'ready' || s.modelId !== info.id) return Promise.reject(new Error(`${info.id} is no longer loaded.`));
        return this.worker().call('countTokens', { messages }, { signal });
      };
    }
    return window;
  }

  /** Frees the GPU memory. */
  async unload(): Promise<void> {
    if (this.current.status === 'loading') {
      this.cancel();
      return;
    }
    const c = this.client;
    this.setState({ status: 'idle' });
    if (c?.alive) {
      try {
        await c.call('unload', {});
      } catch {
        this.resetWorker(new Error('Worker reset after a failed unload.'));
      }
    }
  }

  /** Terminates the worker for good (page teardown, tests). */
  dispose(): void {
    this.loadSeq++;
    this.resetWorker(new Error('The model runtime was closed.'));
    this.dropListeners();
  }

  chat(messages: ChatMessage[], options: GenerateOptions = {}): Promise<string> {
    return this.generate({ messages }, options);
  }

  json(messages: ChatMessage[], schema: JsonSchema, options: GenerateOptions = {}): Promise<string> {
    return this.generate({ messages, jsonSchema: JSON.stringify(schema) }, options);
  }

  private async generate(params: LlmChatParams, options: GenerateOptions): Promise<string> {
    if (this.current.status !== 'ready') {
      throw new ModelRuntimeError({ kind: 'not-loaded', message: USER_MESSAGES['not-loaded'], detail: `state ${this.current.status}` });
    }
    const modelId = this.current.modelId;
    if (options.signal?.aborted) return '';
    const full: LlmChatParams = { ...params };
    const info = this.info(modelId);
    // Bounded even when the caller names no limit: a model stuck writing JSON whitespace would
    // otherwise hold the GPU (and the memorising job) until the context window is full.
    const limits = params.jsonSchema !== undefined ? JSON_LIMITS : CHAT_LIMITS;
    full.maxTokens = Math.min(tokenBudget(options.maxTokens, limits), outputCap(info.contextWindow));
    if (options.temperature !== undefined) full.temperature = options.temperature;
    let received = '';
    try {
      const result = await this.worker().call('chat', full, {
        signal: options.signal,
        onEvent: ({ delta }) => {
          received += delta;
          options.onToken?.(delta);
        },
      });
      const finish = answerFinish(result.finishReason);
      if (finish) options.onFinish?.(finish);
      return result.text;
    } catch (err) {
      // A prompt past the window is the caller's to shorten: the engine and its worker are fine.
      const overflow = webLlmOverflow(err, info.contextWindow);
      if (overflow) throw overflow;
      const c = this.classify(err);
      if (c.kind === 'cancelled' || options.signal?.aborted) return received;
      if (c.kind === 'device-lost' || c.kind === 'out-of-memory') {
        // Recreate the engine: a fresh worker on the next load; the UI offers reload or a smaller model.
        this.resetWorker(new Error('Worker reset after the GPU failed.'));
        this.setState({ status: 'error', modelId, error: c });
      }
      throw new ModelRuntimeError(c);
    }
  }

  /** Whether the model's weights are in the browser cache (no download needed). */
  async isCached(modelId: string): Promise<boolean> {
    try {
      return await this.worker().call('isCached', { record: this.record(modelId), cacheBackend: this.opts.cacheBackend });
    } catch (err) {
      throw new ModelRuntimeError(this.classify(err));
    }
  }

  /** Deletes the model's weights, library and config from the cache (unloading it if loaded). */
  async deleteCached(modelId: string): Promise<void> {
    if (this.current.status === 'loading' && this.current.modelId === modelId) this.cancel();
    try {
      await this.worker().call('deleteCached', { record: this.record(modelId), cacheBackend: this.opts.cacheBackend });
    } catch (err) {
      throw new ModelRuntimeError(this.classify(err));
    }
    if ((this.current.status === 'ready' || this.current.status === 'error') && this.current.modelId === modelId) {
      this.setState({ status: 'idle' });
    }
  }

  private onNotice(n: LlmNotice): void {
    if (n.type !== 'device-lost') return;
    const s = this.current;
    if (s.status !== 'ready') return; // during a load the load itself rejects
    this.resetWorker(new Error('Worker reset after the GPU device was lost.'));
    this.setState({ status: 'error', modelId: s.modelId, error: this.classify(new Error(n.message)) });
  }

  private onCrash(err: Error): void {
    const s = this.current;
    if (s.status === 'idle') return;
    this.client = undefined;
    this.setState({ status: 'error', modelId: s.modelId, error: this.classify(err) });
  }
}

function cancelled(err: unknown): ClassifiedError {
  return { kind: 'cancelled', message: USER_MESSAGES.cancelled, detail: errorText(err) };
}
