// The LLM worker's logic, independent of web-llm so it runs in Node tests with a fake backend:
// one generation at a time (web-llm's interruptGenerate stops whatever runs, so an abort for a
// queued call must not reach it), JSON mode, Qwen3 thinking off, device-lost detection.

import { errorText } from '../errors';
import type { ChatMessage } from '../ports';
import type { Handlers } from './rpc';
import type { LlmChatParams, LlmChatResult, LlmFinishReason, LlmMethods, ModelRecordLite, LlmCacheBackend } from './messages';
import type { WebLlmReport } from './progress';

/** One streamed chunk, the subset of web-llm's ChatCompletionChunk we read. */
export interface ChunkLite {
  choices: Array<{ delta?: { content?: string | null }; finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

/** The request we send, a subset of web-llm's ChatCompletionRequestStreaming. */
export interface StreamRequest {
  messages: LlmChatParams['messages'];
  stream: true;
  stream_options: { include_usage: boolean };
  max_tokens?: number;
  temperature?: number;
  response_format?: { type: 'json_object'; schema: string };
  extra_body?: { enable_thinking: boolean };
}

/** What the worker needs from web-llm; llm.worker.ts implements it with MLCEngine. */
export interface LlmBackend {
  load(record: ModelRecordLite, cacheBackend: LlmCacheBackend, onProgress: (r: WebLlmReport) => void): Promise<void>;
  unload(): Promise<void>;
  stream(request: StreamRequest): Promise<AsyncIterable<ChunkLite>>;
  interrupt(): void;
  isCached(record: ModelRecordLite, cacheBackend: LlmCacheBackend): Promise<boolean>;
  deleteCached(record: ModelRecordLite, cacheBackend: LlmCacheBackend): Promise<void>;
  /**
   * The prompt's tokens as the loaded model reads it (template included), or undefined where the
   * model's tokenizer cannot be reached (webllm-tokens.ts). Throws where web-llm would refuse it.
   */
  countTokens?(messages: ChatMessage[], thinkingOff: boolean): number | undefined;
}

// web-llm unloads the model when the device is lost after loading, so the next call fails with
// "Model not loaded ..." although we never unloaded: that too means the device was lost.
const NOT_LOADED_RE = /Model not loaded before|not loaded before trying|EngineNotLoaded|ModelNotLoaded/i;
const DEVICE_LOST_RE = /device (was |is )?lost|DeviceLostError|Instance dropped/i;

export interface LlmWorkerCore {
  handlers: Handlers<LlmMethods>;
  /** The glue saw the device go away outside a call: forget the loaded model. */
  deviceLost(): void;
}

export function createLlmWorkerCore(backend: LlmBackend): LlmWorkerCore {
  let loadedId: string | undefined;
  let hybridThinking = false;
  let queue: Promise<unknown> = Promise.resolve();

  const runChat = async (params: LlmChatParams, emit: (e: { delta: string }) => void, signal: AbortSignal): Promise<LlmChatResult> => {
    if (signal.aborted) return { text: '', finishReason: 'abort' };
    if (!loadedId) throw new Error('Model not loaded before trying to complete a chat. Load a model first.');
    const request: StreamRequest = {
      messages: params.messages,
      stream: true,
      stream_options: { include_usage: true },
    };
    if (params.maxTokens !== undefined) request.max_tokens = params.maxTokens;
    if (params.temperature !== undefined) request.temperature = params.temperature;
    if (params.jsonSchema !== undefined) request.response_format = { type: 'json_object', schema: params.jsonSchema };
    // Qwen3 would otherwise spend hundreds of tokens "thinking" before every reply and JSON call.
    if (hybridThinking || params.enableThinking !== undefined) request.extra_body = { enable_thinking: params.enableThinking ?? false };

    const onAbort = (): void => backend.interrupt();
    signal.addEventListener('abort', onAbort, { once: true });
    let text = '';
    let finish: LlmFinishReason = 'stop';
    let promptTokens: number | undefined;
    let completionTokens: number | undefined;
    try {
      const stream = await backend.stream(request);
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        const delta = choice?.delta?.content;
        if (delta) {
          text += delta;
          emit({ delta });
        }
        if (choice?.finish_reason) finish = mapFinish(choice.finish_reason);
        if (chunk.usage) {
          promptTokens = chunk.usage.prompt_tokens ?? promptTokens;
          completionTokens = chunk.usage.completion_tokens ?? completionTokens;
        }
      }
    } catch (err) {
      const msg = errorText(err);
      if (NOT_LOADED_RE.test(msg) || DEVICE_LOST_RE.test(msg)) {
        loadedId = undefined;
        throw new Error(`The WebGPU device was lost during generation (${msg})`, { cause: err });
      }
      throw err;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    if (signal.aborted) finish = 'abort';
    return { text, finishReason: finish, promptTokens, completionTokens };
  };

  /** Whether counting works for the model just loaded (the tokenizer is web-llm's private part). */
  const canCount = (): boolean => {
    try {
      const n = backend.countTokens?.([{ role: 'user', content: 'Hello' }], hybridThinking);
      return n !== undefined && Number.isInteger(n) && n > 0;
    } catch {
      return false;
    }
  };

  const handlers: Handlers<LlmMethods> = {
    async load({ record, cacheBackend }, ctx) {
      loadedId = undefined;
      await backend.load(record, cacheBackend, (r) => ctx.emit({ progress: r.progress, timeElapsed: r.timeElapsed, text: r.text }));
      loadedId = record.model_id;
      hybridThinking = /^Qwen3-/i.test(record.model_id);
      return { modelId: record.model_id, countsTokens: canCount() };
    },

    async countTokens({ messages }) {
      if (!loadedId) throw new Error('No model is loaded to count tokens with.');
      const n = backend.countTokens?.(messages, hybridThinking);
      if (n === undefined) throw new Error("The model's tokenizer cannot be reached.");
      return n;
    },

    chat(params, ctx) {
      // Serialise: each call waits for the previous one, whatever its outcome.
      const run = queue.then(() => runChat(params, ctx.emit, ctx.signal));
      queue = run.catch(() => undefined);
      return run;
    },

    async unload() {
      loadedId = undefined;
      await backend.unload();
      return null;
    },

    isCached: ({ record, cacheBackend }) => backend.isCached(record, cacheBackend),

    async deleteCached({ record, cacheBackend }) {
      if (loadedId === record.model_id) {
        loadedId = undefined;
        await backend.unload();
      }
      await backend.deleteCached(record, cacheBackend);
      return null;
    },
  };

  return {
    handlers,
    deviceLost: () => {
      loadedId = undefined;
    },
  };
}

function mapFinish(reason: string): LlmFinishReason {
  return reason === 'stop' || reason === 'length' || reason === 'abort' ? reason : 'other';
}
