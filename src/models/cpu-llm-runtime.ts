// Main-thread client of the CPU language-model worker (transformers.js on WASM). Implements
// LanguageModel once a model is loaded, like LlmRuntime does for web-llm. Imports no SDK.
// Structured output has no grammar here: the schema goes into the prompt, the answer is read with
// the same defensive JSON reader the memory core uses, and one repair call follows if it fails.
import { LlmStateHolder } from './llm-state';
import { errorText } from '../errors';
import { extractJson } from '../memory/llm-output';
import { schemaInstruction, withSchemaInstruction } from '../memory/fit/schema';
import {
  answerFinish,
  isContextOverflow,
  type ChatMessage,
  type GenerateOptions,
  type JsonSchema,
  type LanguageModel,
  type ModelWindow,
} from '../ports';
import { CPU_MODELS, cpuModelById, type CpuModelInfo } from './catalog';
import { classifyModelError, ModelRuntimeError, USER_MESSAGES, type ClassifiedError } from './errors';
import type { LoadOptions } from './llm-runtime';
import type { CpuLlmMethods, CpuModelRef, EmbedEnvSettings } from './messages';
import { workerOverflow } from './overflow';
import { embedProgress } from './progress';
import { RpcClient, type WorkerLike } from './rpc';

export interface CpuLlmRuntimeOptions {
  /** transformers.js settings (hub mirror, local models for tests, wasm paths, threads). */
  env?: EmbedEnvSettings;
  /** The models load() accepts (default: the CPU catalog). */
  models?: readonly CpuModelInfo[];
  createWorker?: () => WorkerLike;
  isOnline?: () => boolean;
  now?: () => number;
}

const defaultWorker = (): WorkerLike =>
  new Worker(new URL('./cpu-llm.worker.ts', import.meta.url), { type: 'module', name: 'tealeaf-cpu-llm' });

/** Asks for JSON in words: the CPU engine has no constrained decoding. */
export const jsonInstruction = schemaInstruction;

function repairMessages(schema: JsonSchema, broken: string): ChatMessage[] {
  return [
    { role: 'system', content: 'You repair broken JSON. Reply with the corrected JSON only.' },
    { role: 'user', content: `${jsonInstruction(schema)}\n\nThe text to repair:\n${broken}` },
  ];
}

export class CpuLlmRuntime extends LlmStateHolder implements LanguageModel {
  /** The worker keeps the cache of the last reply only; any other request frees it. */
  readonly keepsConversation = true;
  private client?: RpcClient<CpuLlmMethods>;
  private readonly models: readonly CpuModelInfo[];
  private loadedWindow?: { modelId: string; window: ModelWindow };

  constructor(private readonly opts: CpuLlmRuntimeOptions = {}) {
    super();
    this.models = opts.models ?? CPU_MODELS;
  }

  info(modelId: string): CpuModelInfo {
    const info = cpuModelById(modelId, this.models);
    if (!info)
      throw new ModelRuntimeError({ kind: 'unknown', message: `Unknown model "${modelId}".`, detail: `Unknown CPU model ${modelId}` });
    return info;
  }

  private ref(modelId: string): CpuModelRef {
    const info = this.info(modelId);
    return { modelId: info.id, dtype: info.dtype, env: this.opts.env ?? {} };
  }

  private worker(): RpcClient<CpuLlmMethods> {
    if (!this.client || !this.client.alive) {
      this.client = new RpcClient<CpuLlmMethods>((this.opts.createWorker ?? defaultWorker)(), undefined, (err) => this.onCrash(err));
    }
    return this.client;
  }

  protected resetWorker(reason: Error): void {
    const c = this.client;
    this.client = undefined;
    c?.terminate(reason);
  }

  private classify(err: unknown): ClassifiedError {
    const online = this.opts.isOnline?.() ?? (typeof navigator === 'undefined' ? true : navigator.onLine);
    return classifyModelError(err, { online });
  }

  /** Downloads (or reads from the browser cache) and prepares a model. Rejects with ModelRuntimeError. */
  async load(modelId: string, options: LoadOptions = {}): Promise<void> {
    const ref = this.ref(modelId);
    const seq = ++this.loadSeq;
    const now = this.opts.now ?? (() => Date.now());
    let start: { t: number; bytes: number } | undefined;
    this.setState({ status: 'loading', modelId });
    try {
      await this.worker().call('load', ref, {
        onEvent: ({ loaded, total }) => {
          if (seq !== this.loadSeq) return;
          const t = now();
          start ??= { t, bytes: loaded };
          const secs = (t - start.t) / 1000;
          const rate = secs >= 1 ? (loaded - start.bytes) / secs : 0;
          const progress = embedProgress(loaded, total, rate > 0 ? Math.round((total - loaded) / rate) : undefined);
          this.setState({ status: 'loading', modelId, progress });
          options.onProgress?.(progress);
        },
      });
    } catch (err) {
      const c = seq !== this.loadSeq ? cancelled(err) : this.classify(err);
      if (seq === this.loadSeq && c.kind !== 'cancelled') this.setState({ status: 'error', modelId, error: c });
      // The worker reported the failure (a bad file included) and is still up, but ONNX Runtime's
      // WASM build may hang on the next session it creates there (seen in Chromium after a
      // malformed file): the next load starts a fresh worker.
      if (c.kind !== 'cancelled') this.resetWorker(new Error('CPU worker reset after a failed load.'));
      throw new ModelRuntimeError(c);
    }
    if (seq !== this.loadSeq) throw new ModelRuntimeError(cancelled('superseded'));
    this.setState({ status: 'ready', modelId });
  }

  /** Frees the model's memory once the reply being written (if any) has finished. */
  async unload(): Promise<void> {
    if (this.current.status === 'loading') return this.cancel();
    const c = this.client;
    this.setState({ status: 'idle' });
    if (c?.alive) await c.call('unload', {}).catch(() => this.resetWorker(new Error('CPU worker reset after a failed unload.')));
  }

  dispose(): void {
    this.loadSeq++;
    this.resetWorker(new Error('The model runtime was closed.'));
    this.dropListeners();
  }

  /**
   * The loaded model's window: its catalog contextTokens (2,048) and maxReplyTokens (384), counted
   * exactly with its tokenizer and chat template in the worker. Undefined while none is ready.
   */
  get window(): ModelWindow | undefined {
    const s = this.current;
    if (s.status !== 'ready') return undefined;
    const cached = this.loadedWindow;
    if (cached?.modelId === s.modelId) return cached.window;
    const info = this.info(s.modelId);
    const window: ModelWindow = {
      contextTokens: info.contextTokens,
      maxOutputTokens: info.maxReplyTokens,
      schemaInPrompt: true,
      countTokens: (messages, signal) => {
        const now = this.current;
        if (now.status !== 'ready' || now.modelId !== info.id) return Promise.reject(new Error(`${info.id} is no longer loaded.`));
        return this.worker().call('countTokens', { messages }, { signal });
      },
    };
    this.loadedWindow = { modelId: s.modelId, window };
    return window;
  }

  async chat(messages: ChatMessage[], options: GenerateOptions = {}): Promise<string> {
    return this.generate(messages, options);
  }

  /**
   * The schema goes in the prompt (beyond what the caller counted), and a JSON answer cut short is
   * no answer: a call whose whole output cap does not fit beside it is refused as an overflow, so
   * the caller builds it again smaller.
   */
  async json(messages: ChatMessage[], schema: JsonSchema, options: GenerateOptions = {}): Promise<string> {
    const quiet = { ...options, onToken: undefined, temperature: options.temperature ?? 0 };
    const first = await this.generate(withSchemaInstruction(messages, schema), quiet, true);
    if (options.signal?.aborted || extractJson(first).found) return first;
    // The repair prompt holds the broken answer and the schema: if it does not fit, the first stands.
    const repaired = await this.generate(repairMessages(schema, first), quiet, true).catch((e: unknown) => {
      if (isContextOverflow(e)) return first;
      throw e;
    });
    return extractJson(repaired).found ? repaired : first;
  }

  private async generate(messages: ChatMessage[], options: GenerateOptions, fullOutput = false): Promise<string> {
    if (this.current.status !== 'ready') {
      throw new ModelRuntimeError({ kind: 'not-loaded', message: USER_MESSAGES['not-loaded'], detail: `state ${this.current.status}` });
    }
    if (options.signal?.aborted) return '';
    const info = this.info(this.current.modelId);
    let received = '';
    try {
      const result = await this.worker().call(
        'chat',
        {
          messages,
          maxTokens: Math.min(options.maxTokens ?? info.maxReplyTokens, info.maxReplyTokens),
          contextTokens: info.contextTokens,
          ...(fullOutput ? { fullOutput } : {}),
          ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        },
        {
          signal: options.signal,
          onEvent: ({ delta }) => {
            received += delta;
            options.onToken?.(delta);
          },
        },
      );
      // The worker's count of what it read anew (the rest was in its cache) is the engine's figure.
      if (result.promptTokens !== undefined && result.readTokens !== undefined)
        options.onRead?.({ readTokens: result.readTokens, promptTokens: result.promptTokens });
      const finish = answerFinish(result.finishReason);
      if (finish) options.onFinish?.(finish);
      return result.text;
    } catch (err) {
      // Too long a prompt is the caller's to shorten; the worker is fine.
      const overflow = workerOverflow(err, info.contextTokens);
      if (overflow) throw overflow;
      const c = this.classify(err);
      if (c.kind === 'cancelled' || options.signal?.aborted) return received;
      throw new ModelRuntimeError(c);
    }
  }

  async isCached(modelId: string): Promise<boolean> {
    try {
      return await this.worker().call('isCached', this.ref(modelId));
    } catch (err) {
      throw new ModelRuntimeError(this.classify(err));
    }
  }

  async deleteCached(modelId: string): Promise<void> {
    if (this.current.status === 'loading' && this.current.modelId === modelId) this.cancel();
    try {
      await this.worker().call('deleteCached', this.ref(modelId));
    } catch (err) {
      throw new ModelRuntimeError(this.classify(err));
    }
    if (this.current.status !== 'idle' && this.current.status !== 'loading' && this.current.modelId === modelId)
      this.setState({ status: 'idle' });
  }

  private onCrash(err: Error): void {
    const s = this.current;
    if (s.status === 'idle') return;
    this.client = undefined;
    this.setState({ status: 'error', modelId: s.modelId, error: this.classify(err) });
  }
}

/** The JSON instruction goes at the end of the last user message, where small models heed it. */
function cancelled(err: unknown): ClassifiedError {
  return { kind: 'cancelled', message: USER_MESSAGES.cancelled, detail: errorText(err) };
}
