// The embedding worker's logic. The transformers.js module is injected, so the same code runs in
// the browser worker (web build, WASM backend) and in Node tests (Node build, onnxruntime-node).
// Only type imports from the SDK here; the values come from the caller.

import type { FeatureExtractionPipeline, ProgressInfo, env as TransformersEnv, pipeline as PipelineFn } from '@huggingface/transformers';
import type { EmbedEnvSettings, EmbedFileProgress, EmbedInitParams, EmbedMethods } from './messages';
import type { Handlers } from './rpc';

export interface TransformersModule {
  pipeline: typeof PipelineFn;
  env: typeof TransformersEnv;
}

/** 'wasm' in browsers (served ONNX Runtime wasm); 'cpu' in Node (onnxruntime-node). */
export type EmbedDevice = 'wasm' | 'cpu';

/** Texts per inference call: bounds memory (the batch is padded to its longest text). */
const BATCH = 32;

export function applyEnv(tf: TransformersModule, s: EmbedEnvSettings): void {
  const env = tf.env;
  const wasm = env.backends.onnx.wasm;
  // The env object's wasm settings are ONNX Runtime's own (transformers copies the reference).
  if (wasm) {
    if (s.wasmPaths) wasm.wasmPaths = { wasm: s.wasmPaths.wasm, mjs: s.wasmPaths.mjs };
    if (s.numThreads !== undefined) wasm.numThreads = s.numThreads;
  }
  if (s.remoteHost) env.remoteHost = s.remoteHost.endsWith('/') ? s.remoteHost : `${s.remoteHost}/`;
  if (s.remotePathTemplate) env.remotePathTemplate = s.remotePathTemplate;
  if (s.allowRemoteModels !== undefined) env.allowRemoteModels = s.allowRemoteModels;
  if (s.allowLocalModels !== undefined) env.allowLocalModels = s.allowLocalModels;
  if (s.localModelPath) env.localModelPath = s.localModelPath;
  if (s.useBrowserCache !== undefined) env.useBrowserCache = s.useBrowserCache;
}

/**
 * A transformers.js progress_callback that reports bytes over all files, for both model workers.
 * Its "progress_total" events carry the sum; older per-file "progress" events are summed here.
 */
export function downloadReporter(emit: (p: EmbedFileProgress) => void): (p: ProgressInfo) => void {
  const files = new Map<string, { loaded: number; total: number }>();
  let sawTotal = false;
  return (p) => {
    if (p.status === 'progress_total') {
      sawTotal = true;
      emit({ loaded: p.loaded, total: p.total });
    } else if (p.status === 'progress' && !sawTotal) {
      files.set(p.file, { loaded: p.loaded, total: p.total });
      let loaded = 0;
      let total = 0;
      for (const f of files.values()) {
        loaded += f.loaded;
        total += f.total;
      }
      emit({ loaded, total, file: p.file });
    }
  };
}

export function createEmbedWorkerCore(tf: TransformersModule, device: EmbedDevice): Handlers<EmbedMethods> {
  let extractor: FeatureExtractionPipeline | undefined;
  let current: EmbedInitParams | undefined;
  let dimension = 0;
  // One inference at a time: calls queue behind each other whatever their outcome.
  let queue: Promise<unknown> = Promise.resolve();

  const serial = <T>(task: () => Promise<T>): Promise<T> => {
    const run = queue.then(task);
    queue = run.catch(() => undefined);
    return run;
  };

  const infer = async (texts: string[]): Promise<Float32Array[]> => {
    if (!extractor || !current) throw new Error('The embedding model is not initialised.');
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      const batch = texts.slice(i, i + BATCH);
      const tensor = await extractor(batch, { pooling: current.pooling, normalize: true });
      const data = tensor.data;
      if (!(data instanceof Float32Array)) throw new Error(`Unexpected embedding type ${tensor.type}`);
      const dim = tensor.dims[tensor.dims.length - 1];
      for (let j = 0; j < batch.length; j++) out.push(data.slice(j * dim, (j + 1) * dim));
      tensor.dispose();
    }
    return out;
  };

  return {
    init(params, ctx) {
      return serial(async () => {
        if (extractor && current && current.modelId === params.modelId && current.dtype === params.dtype) {
          current = params;
          return { dimension };
        }
        applyEnv(tf, params.env);
        if (extractor) await extractor.dispose();
        extractor = undefined;
        extractor = await tf.pipeline('feature-extraction', params.modelId, {
          device,
          dtype: params.dtype,
          progress_callback: downloadReporter(ctx.emit),
        });
        current = params;
        // One real inference: tells the dimension and compiles the session before the first user call.
        const [probe] = await infer(['hello']);
        dimension = probe.length;
        return { dimension };
      });
    },

    embed({ texts }, ctx) {
      return serial(async () => {
        if (ctx.signal.aborted) throw new Error('Embedding was cancelled.');
        if (texts.length === 0) return [];
        const vectors = await infer(texts);
        ctx.transfer(vectors.map((v) => v.buffer as ArrayBuffer));
        return vectors;
      });
    },
  };
}
