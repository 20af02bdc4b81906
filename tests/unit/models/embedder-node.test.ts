// The REAL embedding code path in Node, offline: the generated tiny ONNX model (scripts/
// make-test-assets.mjs) through transformers.js pipeline('feature-extraction') on
// onnxruntime-node, driven by the same worker core and EmbedderRuntime client the browser uses
// (only the worker is in-process and the device is 'cpu' instead of 'wasm').
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as transformers from '@huggingface/transformers';
import { TEST_EMBEDDING_MODEL } from '../../../src/models/catalog';
import { EmbedderRuntime } from '../../../src/models/embedder-runtime';
import { createEmbedWorkerCore } from '../../../src/models/embed-worker-core';
import type { EmbedEnvSettings, EmbedMethods } from '../../../src/models/messages';
import type { ModelProgress } from '../../../src/models/progress';
import { serveRpc } from '../../../src/models/rpc';
import { inProcessWorker } from '../../support/in-process-worker';

const ROOT = resolve(__dirname, '../../..');
const MODELS = join(ROOT, '.tmp', 'test-models');
const ENV: EmbedEnvSettings = { allowRemoteModels: false, allowLocalModels: true, localModelPath: `${MODELS}/` };

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);
const norm = (a: Float32Array) => Math.sqrt(cosine(a, a));

function runtime(opts: { model?: typeof TEST_EMBEDDING_MODEL; onProgress?: (p: ModelProgress) => void } = {}) {
  return new EmbedderRuntime({
    model: opts.model ?? TEST_EMBEDDING_MODEL,
    env: ENV,
    onProgress: opts.onProgress,
    createWorker: () =>
      inProcessWorker((port) =>
        serveRpc<EmbedMethods>(port, createEmbedWorkerCore({ env: transformers.env, pipeline: transformers.pipeline }, 'cpu')),
      ),
  });
}

let embedder: EmbedderRuntime;

beforeAll(() => {
  // The test models come from the global setup (tests/support/global-setup.ts).
  embedder = runtime();
});
afterAll(() => embedder?.dispose());

describe('static test embedder through transformers.js (Node, offline)', () => {
  it('generates the model files', () => {
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx', 'onnx/model_quantized.onnx']) {
      expect(existsSync(join(MODELS, 'tealeaf-test', 'static-embedder', f)), f).toBe(true);
    }
  });

  it('embeds texts into unit-length vectors of the declared dimension, in order', async () => {
    const texts = ['I adopted a puppy last week', 'The weather in Paris was lovely', 'My new job starts on Monday'];
    const out = await embedder.embed(texts);
    expect(out).toHaveLength(3);
    for (const v of out) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(embedder.dimension);
      expect(v.length).toBe(32);
      expect(norm(v)).toBeCloseTo(1, 5);
      expect(v.every(Number.isFinite)).toBe(true);
    }
    // Same text, same vector, wherever it sits in the batch.
    const again = await embedder.embed([texts[2], texts[0]]);
    expect(Array.from(again[1])).toEqual(Array.from(out[0]));
  });

  it('scores texts that share words above texts that do not', async () => {
    const [dog, dogWalk, markets, dinner] = await embedder.embed([
      'I love walking my dog in the park',
      'my dog loves long walks in the park',
      'stock markets fell sharply after the bank report',
      'we cooked pasta and salad for dinner',
    ]);
    expect(cosine(dog, dogWalk)).toBeGreaterThan(0.6);
    expect(cosine(dog, dogWalk)).toBeGreaterThan(cosine(dog, markets) + 0.3);
    expect(cosine(dog, dogWalk)).toBeGreaterThan(cosine(dog, dinner) + 0.3);
  });

  it('handles unknown words, empty batches and batches larger than one inference', async () => {
    const [weird] = await embedder.embed(['Zxqwv Blorfington']);
    expect(norm(weird)).toBeCloseTo(1, 5);
    expect(await embedder.embed([])).toEqual([]);
    const many = Array.from({ length: 70 }, (_, i) => `note number ${i} about my cat`);
    const vectors = await embedder.embed(many);
    expect(vectors).toHaveLength(70);
    expect(cosine(vectors[0], vectors[69])).toBeGreaterThan(0.5);
  });

  it('queues concurrent calls and returns each its own result', async () => {
    const [a, b] = await Promise.all([embedder.embed(['coffee in the morning']), embedder.embed(['basketball game tonight'])]);
    const [a2, b2] = await embedder.embed(['coffee in the morning', 'basketball game tonight']);
    expect(Array.from(a[0])).toEqual(Array.from(a2));
    expect(Array.from(b[0])).toEqual(Array.from(b2));
  });

  it('rejects an already-aborted call as cancelled', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(embedder.embed(['x'], ac.signal)).rejects.toMatchObject({ kind: 'cancelled' });
  });

  it('refuses a model whose vectors do not match the declared dimension', async () => {
    const wrong = runtime({ model: { ...TEST_EMBEDDING_MODEL, dimension: 384 } });
    await expect(wrong.embed(['hello'])).rejects.toThrow(/32-dimensional/);
    wrong.dispose();
  });

  it('never goes to the network for a missing model when remote models are off', async () => {
    const missing = runtime({ model: { ...TEST_EMBEDDING_MODEL, id: 'tealeaf-test/missing' } });
    const err = await missing.embed(['hello']).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'download-failed' });
    missing.dispose();
  });
});
