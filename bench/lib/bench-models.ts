// An embedding model from a local folder for the Node benchmarks (--embedder), run by the app's own
// embedding worker core and EmbedderRuntime through transformers.js on onnxruntime-node, fully
// offline. (A model behind a server, --endpoint: serverModel in qa/model-cache.ts.)
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import * as transformers from '@huggingface/transformers';
import {
  EMBEDDING_MODELS,
  TEST_EMBEDDING_MODEL,
  type EmbeddingDtype,
  type EmbeddingModelInfo,
  type Pooling,
} from '../../src/models/catalog';
import { EmbedderRuntime } from '../../src/models/embedder-runtime';
import { createEmbedWorkerCore } from '../../src/models/embed-worker-core';
import type { EmbedMethods } from '../../src/models/messages';
import { serveRpc } from '../../src/models/rpc';
import { inProcessWorker } from '../../tests/support/in-process-worker';

/**
 * What runs the model in `folder` (a transformers.js model folder: config.json, tokenizer files,
 * onnx/model*.onnx). A folder named like a catalog model (".../Xenova/bge-small-en-v1.5") runs with
 * that model's pooling and precision (fp32 where the folder has only those weights); any other with
 * `pooling` (default mean), its dimension read from config.json and q8 weights where
 * onnx/model_quantized.onnx exists.
 */
export function embeddingModelOf(folder: string, pooling?: Pooling): { info: EmbeddingModelInfo; localModelPath: string } {
  const dir = resolve(folder);
  const need = ['config.json', 'tokenizer.json'];
  for (const f of need)
    if (!existsSync(join(dir, f)))
      throw new Error(`${dir} is not a transformers.js model folder: ${f} is missing (it needs ${need.join(', ')} and onnx/).`);
  // The weights the folder has: q8 where onnx/model_quantized.onnx is there, else fp32.
  const has = (dtype: EmbeddingDtype) => existsSync(join(dir, 'onnx', dtype === 'q8' ? 'model_quantized.onnx' : 'model.onnx'));
  if (!has('q8') && !has('fp32')) throw new Error(`${dir}/onnx has neither model_quantized.onnx nor model.onnx.`);
  const twoLevels = `${basename(dirname(dir))}/${basename(dir)}`;
  const known = [...EMBEDDING_MODELS, TEST_EMBEDDING_MODEL].find((m) => m.id === twoLevels);
  if (known) {
    const dtype = has(known.dtype) ? known.dtype : known.dtype === 'q8' ? 'fp32' : 'q8';
    return { info: { ...known, dtype, pooling: pooling ?? known.pooling }, localModelPath: `${dirname(dirname(dir))}/` };
  }
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as { hidden_size?: number; dim?: number };
  const dimension = config.hidden_size ?? config.dim;
  if (!dimension) throw new Error(`${dir}/config.json names no hidden_size: the embedding dimension is unknown.`);
  return {
    info: {
      id: basename(dir),
      label: basename(dir),
      dimension,
      dtype: has('q8') ? 'q8' : 'fp32',
      pooling: pooling ?? 'mean',
      downloadMB: 0,
      description: dir,
    },
    localModelPath: `${dirname(dir)}/`,
  };
}

/** The app's embedding runtime over the model in `folder`, in this process, offline. */
export function localEmbedder(folder: string, pooling?: Pooling): EmbedderRuntime {
  const { info, localModelPath } = embeddingModelOf(folder, pooling);
  return new EmbedderRuntime({
    model: info,
    env: { allowRemoteModels: false, allowLocalModels: true, localModelPath },
    createWorker: () =>
      inProcessWorker((port) =>
        serveRpc<EmbedMethods>(port, createEmbedWorkerCore({ env: transformers.env, pipeline: transformers.pipeline }, 'cpu')),
      ),
  });
}
