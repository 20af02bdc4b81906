// The LLM worker: web-llm's MLCEngine lives here, off the UI thread. The main thread talks to it
// through the typed protocol in messages.ts (LlmMethods); nothing else imports web-llm.
import { onDeviceLostLog } from './llm-console-hook';
import { MLCEngine, deleteModelAllInfoInCache, hasModelInCache, type AppConfig, type ChatCompletionChunk } from '@mlc-ai/web-llm';
import { serveRpc, type PortLike } from './rpc';
import { createLlmWorkerCore, type ChunkLite, type LlmBackend } from './llm-worker-core';
import { webLlmCounter, type PromptCounter } from './webllm-tokens';
import type { LlmCacheBackend, LlmMethods, LlmNotice, ModelRecordLite } from './messages';

let engine: MLCEngine | undefined;
/** The loaded model's token counter, where web-llm's private parts let us reach it. */
let counter: PromptCounter | undefined;

const appConfigFor = (record: ModelRecordLite, cacheBackend: LlmCacheBackend): AppConfig => ({
  model_list: [record],
  cacheBackend,
});

const backend: LlmBackend = {
  async load(record, cacheBackend, onProgress) {
    counter = undefined;
    if (engine) await engine.unload();
    engine = new MLCEngine({ appConfig: appConfigFor(record, cacheBackend), initProgressCallback: onProgress });
    await engine.reload(record.model_id);
    counter = webLlmCounter(engine, record.model_id);
  },
  async unload() {
    counter = undefined;
    await engine?.unload();
  },
  countTokens: (messages, thinkingOff) => counter?.(messages, thinkingOff),
  async stream(request) {
    if (!engine) throw new Error('Model not loaded before trying to complete a chat.');
    const chunks: AsyncIterable<ChatCompletionChunk> = await engine.chat.completions.create(request);
    return chunks as AsyncIterable<ChunkLite>;
  },
  interrupt() {
    engine?.interruptGenerate();
  },
  isCached: (record, cacheBackend) => hasModelInCache(record.model_id, appConfigFor(record, cacheBackend)),
  deleteCached: (record, cacheBackend) => deleteModelAllInfoInCache(record.model_id, appConfigFor(record, cacheBackend)),
};

const core = createLlmWorkerCore(backend);
const server = serveRpc<LlmMethods, LlmNotice>(self as unknown as PortLike, core.handlers);

onDeviceLostLog((message) => {
  core.deviceLost();
  server.notify({ type: 'device-lost', message });
});
