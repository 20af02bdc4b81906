// The typed protocols between the main thread and the two model workers.
// Both use the same envelope (rpc.ts): calls with ids, streamed events per call, one result or
// error per call, an abort message, and unsolicited notices from the worker.

import type { ChatMessage } from '../ports';
import type { SerializedError } from './errors';
import type { CpuDtype, EmbeddingDtype, Pooling } from './onnx-models';
import type { WebLlmReport } from './progress';

/** A method: what the caller sends, what it gets back, and what streams in between. */
export interface MethodSpec {
  params: unknown;
  result: unknown;
  event: unknown;
}
export type MethodMap = { [method: string]: MethodSpec };

export type RpcRequest<M extends MethodMap> =
  | { [K in keyof M & string]: { kind: 'call'; id: number; method: K; params: M[K]['params'] } }[keyof M & string]
  | { kind: 'abort'; id: number };

export type RpcResponse<M extends MethodMap, N> =
  | { kind: 'event'; id: number; event: M[keyof M]['event'] }
  | { kind: 'result'; id: number; value: M[keyof M]['result'] }
  | { kind: 'error'; id: number; error: SerializedError }
  | { kind: 'notice'; notice: N };

// ---------------------------------------------------------------------------------------------
// LLM worker (web-llm).

/** The fields of web-llm's ModelRecord we use; structurally a ModelRecord. */
export interface ModelRecordLite {
  model: string;
  model_id: string;
  model_lib: string;
  vram_required_MB?: number;
  low_resource_required?: boolean;
  required_features?: string[];
  overrides?: { context_window_size?: number };
}

export type LlmCacheBackend = 'cache' | 'indexeddb';

export interface LlmLoadParams {
  record: ModelRecordLite;
  cacheBackend: LlmCacheBackend;
}

export interface LlmChatParams {
  messages: ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  /** JSON.stringify(schema): constrains output with web-llm's grammar (response_format json_object). */
  jsonSchema?: string;
  /** Qwen3 hybrid-thinking models: false prefixes an empty <think></think> block. */
  enableThinking?: boolean;
}

export type LlmFinishReason = 'stop' | 'length' | 'abort' | 'other';

export interface LlmChatResult {
  text: string;
  finishReason: LlmFinishReason;
  promptTokens?: number;
  /** Of promptTokens, those read (prefilled) anew: the rest came from the engine's cache. */
  readTokens?: number;
  completionTokens?: number;
}

// Type aliases (not interfaces) so they satisfy MethodMap's index signature.
export type LlmMethods = {
  /** countsTokens: whether countTokens works for this model (see webllm-tokens.ts). */
  load: { params: LlmLoadParams; result: { modelId: string; countsTokens: boolean }; event: WebLlmReport };
  chat: { params: LlmChatParams; result: LlmChatResult; event: { delta: string } };
  /** The prompt's tokens with the loaded model's tokenizer and template. */
  countTokens: { params: { messages: ChatMessage[] }; result: number; event: never };
  unload: { params: Record<string, never>; result: null; event: never };
  isCached: { params: { record: ModelRecordLite; cacheBackend: LlmCacheBackend }; result: boolean; event: never };
  deleteCached: { params: { record: ModelRecordLite; cacheBackend: LlmCacheBackend }; result: null; event: never };
};

/** The GPU device was lost outside a call (web-llm unloads the model when that happens). */
export type LlmNotice = { type: 'device-lost'; message: string };

// ---------------------------------------------------------------------------------------------
// Embedding worker (transformers.js).

export interface EmbedEnvSettings {
  /** URLs the app serves for ONNX Runtime's wasm build (Vite ?url imports). */
  wasmPaths?: { wasm: string; mjs: string };
  /** Mirror of the Hugging Face hub, e.g. "https://hf-mirror.example/" (default huggingface.co). */
  remoteHost?: string;
  /** Path template under remoteHost, default "{model}/resolve/{revision}/". */
  remotePathTemplate?: string;
  allowRemoteModels?: boolean;
  /** Look for models under localModelPath first (e.g. "/models/" served by the app). */
  allowLocalModels?: boolean;
  localModelPath?: string;
  /** Keep downloaded files in Cache Storage (default true in browsers). */
  useBrowserCache?: boolean;
  /** Threads for the wasm backend; 1 avoids needing cross-origin isolation. */
  numThreads?: number;
}

export interface EmbedInitParams {
  modelId: string;
  dtype: EmbeddingDtype;
  pooling: Pooling;
  env: EmbedEnvSettings;
}

export interface EmbedFileProgress {
  /** Bytes loaded and total across the files known so far. */
  loaded: number;
  total: number;
  file?: string;
}

export type EmbedMethods = {
  init: { params: EmbedInitParams; result: { dimension: number }; event: EmbedFileProgress };
  embed: { params: { texts: string[] }; result: Float32Array[]; event: never };
};

export type EmbedNotice = never;

// ---------------------------------------------------------------------------------------------
// CPU language-model worker (transformers.js text generation on ONNX Runtime's WASM backend).

export interface CpuModelRef {
  /** Hugging Face repository id (or a folder under localModelPath). */
  modelId: string;
  dtype: CpuDtype;
  env: EmbedEnvSettings;
}

export interface CpuChatParams {
  messages: ChatMessage[];
  /** New tokens at most. */
  maxTokens: number;
  /**
   * Prompt plus reply, in tokens. A longer prompt is refused (ContextOverflowError, nothing cut);
   * a reply stops at the window, as web-llm's does.
   */
  contextTokens: number;
  /** A reply cut short is no reply (JSON): refuse when all of maxTokens would not fit beside the prompt. */
  fullOutput?: boolean;
  /** 0 or absent: greedy decoding. */
  temperature?: number;
}

export type CpuLlmMethods = {
  load: { params: CpuModelRef; result: { modelId: string }; event: EmbedFileProgress };
  chat: { params: CpuChatParams; result: LlmChatResult; event: { delta: string } };
  /** The prompt's tokens with the loaded model's tokenizer and chat template. */
  countTokens: { params: { messages: ChatMessage[] }; result: number; event: never };
  unload: { params: Record<string, never>; result: null; event: never };
  isCached: { params: CpuModelRef; result: boolean; event: never };
  deleteCached: { params: CpuModelRef; result: null; event: never };
};
