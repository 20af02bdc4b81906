// bench:cpu — speed and memory of the CPU chat engine on this machine: the real CpuLlmRuntime and
// worker core (in-process worker) running transformers.js text generation on the generated tiny
// causal LM (scripts/make-test-assets.mjs: random weights, 48 tanh layers of width 256 on one
// token, ~6.3 M multiply-adds per token). No real model can be downloaded here, so this measures
// the engine's own overhead per token (tokenizer, sampling, streaming, RPC, the yield that makes
// Stop work) plus a fixed known amount of compute, not what a 135M-1.5B model would do.
// Node runs ONNX Runtime's native CPU backend (onnxruntime-node); browsers run its WASM build.
//
// Usage: npm run bench:cpu [-- --runs 7 --tokens 256 --json]
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import * as transformers from '@huggingface/transformers';
import { TEST_CPU_MODEL } from '../src/models/catalog';
import { CpuLlmRuntime } from '../src/models/cpu-llm-runtime';
import { createCpuLlmWorkerCore } from '../src/models/cpu-llm-worker-core';
import type { CpuLlmMethods } from '../src/models/messages';
import { serveRpc } from '../src/models/rpc';
import type { ChatMessage } from '../src/ports';
import { inProcessWorker } from '../tests/support/in-process-worker';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const RUNS = arg('--runs', 7);
const TOKENS = arg('--tokens', 256);
const ROOT = resolve(import.meta.dirname, '..');
const MODELS = join(ROOT, '.tmp', 'test-models');
const MB = 2 ** 20;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main(): Promise<void> {
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'make-test-assets.mjs')], { stdio: 'pipe' });
  const tf = {
    env: transformers.env,
    pipeline: transformers.pipeline,
    InterruptableStoppingCriteria: transformers.InterruptableStoppingCriteria,
    ModelRegistry: transformers.ModelRegistry,
  };
  // The model needs stopping only by max tokens: ask for more than it may write.
  const model = { ...TEST_CPU_MODEL, maxReplyTokens: TOKENS, contextTokens: TOKENS + 512 };
  const rt = new CpuLlmRuntime({
    models: [model],
    env: { allowRemoteModels: false, allowLocalModels: true, localModelPath: `${MODELS}/` },
    createWorker: () => inProcessWorker((port) => serveRpc<CpuLlmMethods>(port, createCpuLlmWorkerCore(tf, { device: 'cpu' }))),
  });
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  await rt.load(model.id);
  const loadMs = performance.now() - t0;
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are a kind companion. Memories: the user adopted a puppy named Biscuit.' },
    { role: 'user', content: 'How is Biscuit doing with the red ball in the park?' },
  ];
  await rt.chat(messages, { maxTokens: 16 }); // warm-up
  const rates: number[] = [];
  const firstTokenMs: number[] = [];
  let peakRss = process.memoryUsage().rss;
  for (let r = 0; r < RUNS; r++) {
    let tokens = 0;
    let first = 0;
    const start = performance.now();
    await rt.chat(messages, {
      maxTokens: TOKENS,
      onToken: () => {
        if (tokens++ === 0) first = performance.now() - start;
      },
    });
    const secs = (performance.now() - start) / 1000;
    // Deltas are per token (TokenStreamer), except where a character spans two byte tokens.
    rates.push(tokens / secs);
    firstTokenMs.push(first);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }
  rt.dispose();
  const result = {
    model: `${TEST_CPU_MODEL.id} (generated, random weights)`,
    backend: 'onnxruntime-node (CPU), transformers.js 4.3.1',
    runs: RUNS,
    tokensPerRun: TOKENS,
    loadMs: Math.round(loadMs),
    medianTokensPerSecond: Math.round(median(rates)),
    tokensPerSecond: rates.map((x) => Math.round(x)),
    medianFirstTokenMs: Math.round(median(firstTokenMs)),
    rssBeforeLoadMB: Math.round(rss0 / MB),
    peakRssMB: Math.round(peakRss / MB),
  };
  if (process.argv.includes('--json')) console.log(JSON.stringify(result, null, 2));
  else
    console.log(
      `${result.model} on ${result.backend}: load ${result.loadMs} ms, median ${result.medianTokensPerSecond} tokens/s ` +
        `over ${RUNS} runs of ${TOKENS} tokens (${result.tokensPerSecond.join(', ')}), first token ${result.medianFirstTokenMs} ms, ` +
        `RSS ${result.rssBeforeLoadMB} MB before load, ${result.peakRssMB} MB peak`,
    );
}

await main();
