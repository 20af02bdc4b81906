// The CPU language-model worker: transformers.js text generation on ONNX Runtime's WASM backend,
// off the UI thread, for browsers without a usable WebGPU. Like the embedding worker it runs the
// ONNX Runtime wasm files bundled with the app (Vite ?url imports), so no CDN is ever contacted.
import { env, InterruptableStoppingCriteria, ModelRegistry, pipeline } from '@huggingface/transformers';
import ortWasmUrl from 'onnxruntime-web/ort-wasm-simd-threaded.wasm?url';
import ortMjsUrl from 'onnxruntime-web/ort-wasm-simd-threaded.mjs?url';
import { createCpuLlmWorkerCore } from './cpu-llm-worker-core';
import { serveRpc, type PortLike } from './rpc';
import type { CpuLlmMethods } from './messages';

const wasm = env.backends.onnx.wasm;
if (wasm) wasm.wasmPaths = { wasm: new URL(ortWasmUrl, self.location.href).href, mjs: new URL(ortMjsUrl, self.location.href).href };

// A message-channel round trip is a new task without setTimeout's 4 ms clamp: an abort posted by
// the page runs between two tokens at almost no cost.
const channel = new MessageChannel();
const waiting: Array<() => void> = [];
channel.port1.onmessage = () => waiting.shift()?.();
const yieldToEvents = (): Promise<void> =>
  new Promise((resolve) => {
    waiting.push(resolve);
    channel.port2.postMessage(null);
  });

serveRpc<CpuLlmMethods>(
  self as unknown as PortLike,
  createCpuLlmWorkerCore({ env, pipeline, InterruptableStoppingCriteria, ModelRegistry }, { device: 'wasm', yieldToEvents }),
);
