import { describe, expect, it } from 'vitest';
import { LlmRuntime, type LlmState } from '../../../src/models/llm-runtime';
import { CHAT_LIMITS, JSON_LIMITS } from '../../../src/models/call-limits';
import { createLlmWorkerCore, type ChunkLite, type LlmBackend, type StreamRequest } from '../../../src/models/llm-worker-core';
import { serveRpc } from '../../../src/models/rpc';
import type { LlmMethods, LlmNotice, ModelRecordLite } from '../../../src/models/messages';
import { ModelRuntimeError } from '../../../src/models/errors';
import { inProcessWorker, type InProcessWorker } from '../../support/in-process-worker';
import { isContextOverflow, type ChatMessage } from '../../../src/ports';
import { until } from '../../support/until';

/** A stand-in tokenizer: a word is a token, each message costs 4 more (its role markers). */
const words = (messages: ChatMessage[]) => messages.reduce((n, m) => n + 4 + (m.content.match(/\S+/g)?.length ?? 0), 0);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A web-llm stand-in: scripted progress, replies streamed word by word, failures on demand. */
class FakeBackend implements LlmBackend {
  loads: ModelRecordLite[] = [];
  requests: StreamRequest[] = [];
  interrupts = 0;
  loadError?: string;
  streamError?: string;
  reply = 'Hello there, how are you today?';
  tokenDelayMs = 5;
  /** A load waits here before it finishes (a test that cancels a load never lets it go). */
  loadHold?: Promise<void>;
  private interrupted = false;
  cached = new Set<string>();
  /** The model's tokenizer as the worker reaches it (absent: web-llm's private shape differed). */
  counter?: (messages: ChatMessage[], thinkingOff: boolean) => number;
  /** web-llm's context_window_size: a longer prompt is refused as web-llm refuses it. */
  windowTokens = 4096;

  async load(record: ModelRecordLite, _c: string, onProgress: (r: { progress: number; timeElapsed: number; text: string }) => void) {
    this.loads.push(record);
    onProgress({ progress: 0, timeElapsed: 0, text: 'Start to fetch params' });
    onProgress({ progress: 0.5, timeElapsed: 1, text: 'Fetching param cache[1/2]: 400MB fetched. 50% completed, 1 secs elapsed.' });
    if (this.loadHold) await this.loadHold;
    if (this.loadError) throw new Error(this.loadError);
    onProgress({ progress: 1, timeElapsed: 2, text: 'Fetching param cache[2/2]: 800MB fetched. 100% completed, 2 secs elapsed.' });
    onProgress({ progress: 1, timeElapsed: 3, text: 'Finish loading on WebGPU - fake' });
    this.cached.add(record.model_id);
  }
  async unload() {}
  countTokens(messages: ChatMessage[], thinkingOff: boolean): number | undefined {
    return this.counter?.(messages, thinkingOff);
  }
  async stream(req: StreamRequest): Promise<AsyncIterable<ChunkLite>> {
    this.requests.push(req);
    const n = this.counter?.(req.messages, false) ?? 0;
    if (n > this.windowTokens) {
      // web-llm 0.2.86's ContextWindowSizeExceededError, thrown before the first token.
      const e = new Error(
        `Prompt tokens exceed context window size: number of prompt tokens: ${n}; context window size: ${this.windowTokens}\n` +
          'Consider shortening the prompt, or increase `context_window_size`, or using sliding window via `sliding_window_size`.',
      );
      e.name = 'ContextWindowSizeExceededError';
      throw e;
    }
    this.interrupted = false;
    const words = this.reply.split(/(?<= )/);
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the generator below has its own `this`
    const self = this;
    return (async function* () {
      for (const w of words) {
        await sleep(self.tokenDelayMs);
        if (self.streamError) throw new Error(self.streamError);
        if (self.interrupted) {
          yield { choices: [{ delta: {}, finish_reason: 'abort' }] };
          return;
        }
        yield { choices: [{ delta: { content: w }, finish_reason: null }] };
      }
      yield { choices: [{ delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 7, completion_tokens: words.length } };
    })();
  }
  interrupt() {
    this.interrupts++;
    this.interrupted = true;
  }
  async isCached(r: ModelRecordLite) {
    return this.cached.has(r.model_id);
  }
  async deleteCached(r: ModelRecordLite) {
    this.cached.delete(r.model_id);
  }
}

function setup(opts: { mirror?: { modelBaseUrl?: string; libBaseUrl?: string } } = {}) {
  const backend = new FakeBackend();
  const workers: InProcessWorker[] = [];
  let notify: ((n: LlmNotice) => void) | undefined;
  const runtime = new LlmRuntime({
    baseHref: 'http://127.0.0.1:4173/',
    mirror: opts.mirror,
    isOnline: () => true,
    createWorker: () => {
      const w = inProcessWorker((port) => {
        const core = createLlmWorkerCore(backend);
        notify = serveRpc<LlmMethods, LlmNotice>(port, core.handlers).notify;
      });
      workers.push(w);
      return w;
    },
  });
  const states: LlmState['status'][] = [];
  runtime.subscribe((s) => states.push(s.status));
  return { backend, workers, runtime, states, notice: (n: LlmNotice) => notify?.(n) };
}

const QWEN = 'Qwen2.5-1.5B-Instruct-q4f16_1-MLC';
const USER = [{ role: 'user' as const, content: 'Hi' }];

describe('LlmRuntime', () => {
  it('loads a model with parsed progress and becomes a LanguageModel', async () => {
    const { runtime, backend, states } = setup();
    const progress: number[] = [];
    expect(runtime.modelId).toBe('');
    await runtime.load(QWEN, { onProgress: (p) => progress.push(p.fraction) });
    expect(runtime.modelId).toBe(QWEN);
    expect(runtime.state).toEqual({ status: 'ready', modelId: QWEN });
    expect(backend.loads[0].model_id).toBe(QWEN);
    expect(backend.loads[0].required_features).toEqual(['shader-f16']);
    expect(progress.at(-1)).toBe(1);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(states).toEqual(['idle', 'loading', 'loading', 'loading', 'loading', 'loading', 'ready']);
  });

  it('streams a reply token by token and resolves with the full text', async () => {
    const { runtime, backend } = setup();
    await runtime.load(QWEN);
    const tokens: string[] = [];
    const text = await runtime.chat(USER, { onToken: (t) => tokens.push(t), maxTokens: 64, temperature: 0.2 });
    expect(text).toBe(backend.reply);
    expect(tokens.join('')).toBe(backend.reply);
    expect(tokens.length).toBeGreaterThan(3);
    expect(backend.requests[0]).toMatchObject({ stream: true, max_tokens: 64, temperature: 0.2, messages: USER });
    expect(backend.requests[0].response_format).toBeUndefined();
    expect(backend.requests[0].extra_body).toBeUndefined();
  });

  it('constrains json() with the schema as a json_object response format', async () => {
    const { runtime, backend } = setup();
    await runtime.load(QWEN);
    backend.reply = '{"ok": true}';
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
    expect(await runtime.json(USER, schema)).toBe('{"ok": true}');
    expect(backend.requests[0].response_format).toEqual({ type: 'json_object', schema: JSON.stringify(schema) });
  });

  it("bounds every call by the window's output cap, also when the caller names none", async () => {
    const { runtime, backend } = setup();
    await runtime.load(QWEN);
    const cap = runtime.window!.maxOutputTokens;
    expect(cap).toBeLessThan(Math.min(JSON_LIMITS.maxTokens, CHAT_LIMITS.maxTokens));
    await runtime.json(USER, { type: 'object' });
    await runtime.chat(USER);
    await runtime.json(USER, { type: 'object' }, { maxTokens: 10 ** 9 });
    await runtime.chat(USER, { maxTokens: 100 });
    expect(backend.requests.map((r) => r.max_tokens)).toEqual([cap, cap, cap, 100]);
  });

  it('turns Qwen3 thinking off', async () => {
    const { runtime, backend } = setup();
    await runtime.load('Qwen3-1.7B-q4f16_1-MLC');
    await runtime.chat(USER);
    expect(backend.requests[0].extra_body).toEqual({ enable_thinking: false });
  });

  it('stops on abort and resolves with what had arrived', async () => {
    const { runtime, backend } = setup();
    await runtime.load(QWEN);
    const ac = new AbortController();
    const tokens: string[] = [];
    // Stopped once two words have arrived, whatever the time they took.
    const onToken = (t: string) => tokens.push(t) === 2 && ac.abort();
    const text = await runtime.chat(USER, { signal: ac.signal, onToken });
    expect(backend.interrupts).toBe(1);
    expect(text.length).toBeGreaterThan(0);
    expect(text.length).toBeLessThan(backend.reply.length);
    expect(text).toBe(tokens.join(''));
  });

  it('runs calls one at a time; aborting a queued call does not interrupt the running one', async () => {
    const { runtime, backend } = setup();
    await runtime.load(QWEN);
    const ac = new AbortController();
    // The second call, queued behind the first, is aborted while the first writes its first word.
    const first = runtime.chat(USER, { onToken: () => ac.abort() });
    const second = runtime.chat(USER, { signal: ac.signal });
    expect(await first).toBe(backend.reply);
    expect(await second).toBe('');
    expect(backend.interrupts).toBe(0);
    expect(backend.requests.length).toBe(1);
  });

  it('refuses to chat before a model is loaded', async () => {
    const { runtime } = setup();
    await expect(runtime.chat(USER)).rejects.toMatchObject({ kind: 'not-loaded' });
  });

  it('classifies a failed load, shows it in the state, and retries in a fresh worker', async () => {
    const { runtime, backend, workers } = setup();
    backend.loadError = "Unable to find a compatible GPU. This issue might be because your computer doesn't have a GPU";
    const err = await runtime.load(QWEN).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelRuntimeError);
    expect((err as ModelRuntimeError).kind).toBe('no-adapter');
    expect(runtime.state.status).toBe('error');
    expect(workers[0].terminated).toBe(true);
    backend.loadError = undefined;
    await runtime.load(QWEN);
    expect(workers.length).toBe(2);
    expect(runtime.state.status).toBe('ready');
  });

  it('cancels a load by terminating the worker', async () => {
    const { runtime, backend, workers } = setup();
    backend.loadHold = new Promise(() => undefined);
    const loading = runtime.load(QWEN);
    await until('the load under way', () => backend.loads.length === 1);
    expect(runtime.state.status).toBe('loading');
    runtime.cancel();
    await expect(loading).rejects.toMatchObject({ kind: 'cancelled' });
    expect(workers[0].terminated).toBe(true);
    expect(runtime.state.status).toBe('idle');
  });

  it('recreates the engine after the GPU device is lost mid-reply', async () => {
    const { runtime, backend, workers } = setup();
    await runtime.load(QWEN);
    backend.streamError = 'Model not loaded before trying to complete ChatCompletionRequest';
    await expect(runtime.chat(USER)).rejects.toMatchObject({ kind: 'device-lost' });
    expect(runtime.state).toMatchObject({ status: 'error', modelId: QWEN, error: { kind: 'device-lost' } });
    expect(workers[0].terminated).toBe(true);
    backend.streamError = undefined;
    await runtime.load(QWEN);
    expect(await runtime.chat(USER)).toBe(backend.reply);
    expect(workers.length).toBe(2);
  });

  it('turns out-of-memory during generation into a typed error', async () => {
    const { runtime, backend } = setup();
    await runtime.load(QWEN);
    backend.streamError = 'GPUBuffer creation failed: Out of memory';
    const err = (await runtime.chat(USER).catch((e: unknown) => e)) as ModelRuntimeError;
    expect(err.kind).toBe('out-of-memory');
    expect(err.message).toMatch(/smaller model/);
  });

  it('reacts to a device-lost notice from the worker', async () => {
    const { runtime, workers, notice } = setup();
    await runtime.load(QWEN);
    notice({ type: 'device-lost', message: 'Device was lost. This can happen due to insufficient memory' });
    await until('the notice taken', () => runtime.state.status === 'error');
    expect(runtime.state).toMatchObject({ status: 'error', error: { kind: 'device-lost' } });
    expect(workers[0].terminated).toBe(true);
  });

  it('checks and deletes cached models with mirror-rewritten records', async () => {
    const { runtime, backend } = setup({ mirror: { modelBaseUrl: '/mirror/', libBaseUrl: '/mirror/libs/' } });
    expect(await runtime.isCached(QWEN)).toBe(false);
    await runtime.load(QWEN);
    expect(backend.loads[0].model).toBe('http://127.0.0.1:4173/mirror/mlc-ai/Qwen2.5-1.5B-Instruct-q4f16_1-MLC');
    expect(backend.loads[0].model_lib).toBe('http://127.0.0.1:4173/mirror/libs/Qwen2-1.5B-Instruct-q4f16_1_cs1k-webgpu.wasm');
    expect(await runtime.isCached(QWEN)).toBe(true);
    await runtime.deleteCached(QWEN);
    expect(await runtime.isCached(QWEN)).toBe(false);
    expect(runtime.state.status).toBe('idle');
  });

  it('rejects unknown model ids', async () => {
    const { runtime } = setup();
    await expect(runtime.load('Nope-7B')).rejects.toThrow(/Unknown model/);
  });

  it("has web-llm's window once a model is ready: context_window_size, a quarter of it out", async () => {
    const { runtime } = setup();
    expect(runtime.window).toBeUndefined();
    await runtime.load(QWEN);
    expect(runtime.window).toMatchObject({ contextTokens: 4096, maxOutputTokens: 1024 });
    // No tokenizer reached in the worker: callers estimate.
    expect(runtime.window!.countTokens).toBeUndefined();
    await runtime.unload();
    expect(runtime.window).toBeUndefined();
  });

  it("counts a prompt with the loaded model's tokenizer in the worker, Qwen3's thinking block included", async () => {
    const { runtime, backend } = setup();
    backend.counter = (messages, thinkingOff) => words(messages) + (thinkingOff ? 6 : 0);
    await runtime.load(QWEN);
    const prompt: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'How are you today?' },
    ];
    expect(await runtime.window!.countTokens!(prompt)).toBe(4 + 2 + 4 + 4);
    await runtime.load('Qwen3-1.7B-q4f16_1-MLC');
    expect(await runtime.window!.countTokens!(prompt)).toBe(14 + 6);
  });

  it('turns a tokenizer that throws at load into no counting, not a failed load', async () => {
    const { runtime, backend } = setup();
    backend.counter = () => {
      throw new TypeError('tokenizer.encode is not a function');
    };
    await runtime.load(QWEN);
    expect(runtime.state.status).toBe('ready');
    expect(runtime.window!.countTokens).toBeUndefined();
  });

  it("turns web-llm's refusal of a prompt past the window into ContextOverflowError; the engine carries on", async () => {
    const { runtime, backend, workers } = setup();
    backend.counter = words;
    await runtime.load(QWEN);
    const long: ChatMessage[] = [{ role: 'user', content: 'word '.repeat(5000) }];
    const err = await runtime.chat(long).catch((e: unknown) => e);
    expect(isContextOverflow(err)).toBe(true);
    expect(err).toMatchObject({ promptTokens: 5004, contextTokens: 4096 });
    await expect(runtime.json(long, { type: 'object' })).rejects.toMatchObject({ name: 'ContextOverflowError' });
    // Not a model failure: no error state, no fresh worker, the next call works.
    expect(runtime.state.status).toBe('ready');
    expect(workers).toHaveLength(1);
    expect(workers[0].terminated).toBe(false);
    expect(await runtime.chat(USER)).toBe(backend.reply);
  });
});
