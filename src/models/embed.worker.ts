// The embedding worker: transformers.js (feature-extraction) on ONNX Runtime's WASM backend,
// off the UI thread. The ONNX Runtime wasm files are bundled with the app (Vite ?url imports
// of the exact onnxruntime-web version transformers depends on), so no CDN is ever contacted.
import { env, pipeline } from '@huggingface/transformers';
import ortWasmUrl from 'onnxruntime-web/ort-wasm-simd-threaded.wasm?url';
import ortMjsUrl from 'onnxruntime-web/ort-wasm-simd-threaded.mjs?url';
import { createEmbedWorkerCore } from './embed-worker-core';
import { serveRpc, type PortLike } from './rpc';
import type { EmbedMethods, EmbedNotice } from './messages';

// Default before anything can load: transformers otherwise points at jsDelivr. init() may override.
const wasm = env.backends.onnx.wasm;
if (wasm) wasm.wasmPaths = { wasm: new URL(ortWasmUrl, self.location.href).href, mjs: new URL(ortMjsUrl, self.location.href).href };

serveRpc<EmbedMethods, EmbedNotice>(self as unknown as PortLike, createEmbedWorkerCore({ env, pipeline }, 'wasm'));
