// The REAL CPU chat-model path in Node, offline: the generated tiny causal LM (scripts/
// make-test-assets.mjs, random weights, gibberish) through transformers.js text generation on
// onnxruntime-node, driven by the same worker core and CpuLlmRuntime client the browser uses
// (only the worker is in-process and the device is 'cpu' instead of 'wasm'). Mechanics only:
// tokens stream, Stop stops, a bad model file gets a clear error and the worker carries on, and a
// reply that extends the one before reads only its new tokens and writes what a fresh run writes.
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as transformers from '@huggingface/transformers';
import { BROKEN_TEST_CPU_MODEL, TEST_CPU_MODEL, type CpuModelInfo } from '../../../src/models/catalog';
import { CpuLlmRuntime } from '../../../src/models/cpu-llm-runtime';
import { createCpuLlmWorkerCore } from '../../../src/models/cpu-llm-worker-core';
import type { CpuLlmMethods } from '../../../src/models/messages';
import { serveRpc } from '../../../src/models/rpc';
import { isContextOverflow, type ChatMessage, type EngineRead } from '../../../src/ports';
import { inProcessWorker, type InProcessWorker } from '../../support/in-process-worker';

const ROOT = resolve(__dirname, '../../..');
const MODELS = join(ROOT, '.tmp', 'test-models');
const tf = {
  env: transformers.env,
  pipeline: transformers.pipeline,
  InterruptableStoppingCriteria: transformers.InterruptableStoppingCriteria,
  ModelRegistry: transformers.ModelRegistry,
};

/** The same test model with an attention layer and a key-value cache (scripts/lib/tiny-causal-lm.mjs). */
const KV_TEST_CPU_MODEL: CpuModelInfo = {
  ...TEST_CPU_MODEL,
  id: 'tealeaf-test/tiny-causal-lm-kv',
  label: 'Tiny test chat model with a cache',
};

let workers: InProcessWorker[] = [];
const runtimes: CpuLlmRuntime[] = [];

function runtime(): CpuLlmRuntime {
  const rt = new CpuLlmRuntime({
    models: [TEST_CPU_MODEL, BROKEN_TEST_CPU_MODEL, KV_TEST_CPU_MODEL],
    env: { allowRemoteModels: false, allowLocalModels: true, localModelPath: `${MODELS}/` },
    createWorker: () => {
      const w = inProcessWorker((port) => serveRpc<CpuLlmMethods>(port, createCpuLlmWorkerCore(tf, { device: 'cpu' })));
      workers.push(w);
      return w;
    },
  });
  runtimes.push(rt);
  return rt;
}

const hello: ChatMessage[] = [
  { role: 'system', content: 'You are a kind companion.' },
  { role: 'user', content: 'Hello! How was your day?' },
];

const chatCalls = (w: InProcessWorker) => w.sent.filter((m) => (m as { method?: string }).method === 'chat').length;

// The test models come from the global setup (tests/support/global-setup.ts).
afterEach(() => {
  for (const r of runtimes.splice(0)) r.dispose();
  workers = [];
});

describe('CPU chat model through transformers.js (Node, offline)', () => {
  it('loads with download progress and streams a reply token by token', async () => {
    const rt = runtime();
    const fractions: number[] = [];
    await rt.load(TEST_CPU_MODEL.id, { onProgress: (p) => fractions.push(p.fraction) });
    expect(rt.state).toEqual({ status: 'ready', modelId: TEST_CPU_MODEL.id });
    expect(rt.modelId).toBe(TEST_CPU_MODEL.id);
    const deltas: string[] = [];
    const text = await rt.chat(hello, { maxTokens: 80, onToken: (d) => deltas.push(d) });
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(text);
    expect(text.length).toBeGreaterThan(20);
    // Greedy decoding of the same prompt gives the same reply.
    expect(await rt.chat(hello, { maxTokens: 80 })).toBe(text);
  });

  it('stops mid-reply: the reply so far comes back, and the next reply works', async () => {
    const rt = runtime();
    await rt.load(TEST_CPU_MODEL.id);
    const full = await rt.chat(hello, { maxTokens: 400 });
    const ac = new AbortController();
    let seen = '';
    const partial = await rt.chat(hello, {
      maxTokens: 400,
      signal: ac.signal,
      onToken: (d) => {
        seen += d;
        if (seen.length > 10) ac.abort();
      },
    });
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(full.length / 2);
    expect(full.startsWith(partial.slice(0, 10))).toBe(true);
    expect((await rt.chat(hello, { maxTokens: 30 })).length).toBeGreaterThan(0);
  });

  it('says what to do about a malformed model file (the worker reports it, no crash), then loads a good model', async () => {
    const rt = runtime();
    const err = await rt.load(BROKEN_TEST_CPU_MODEL.id).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'bad-model-file' });
    expect((err as Error).message).toMatch(/damaged or is not a model.*Download it again/);
    expect((err as { detail: string }).detail).toMatch(/broken-causal-lm.*Protobuf parsing failed/);
    expect(rt.state.status).toBe('error');
    // The error came back as the call's answer: the worker itself did not fail.
    expect(workers).toHaveLength(1);
    await rt.load(TEST_CPU_MODEL.id);
    expect((await rt.chat(hello, { maxTokens: 20 })).length).toBeGreaterThan(0);
  });

  it('asks for JSON in the prompt and makes one repair attempt when the answer is not JSON', async () => {
    const rt = runtime();
    await rt.load(TEST_CPU_MODEL.id);
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const raw = await rt.json(hello, schema, { maxTokens: 40 });
    expect(typeof raw).toBe('string');
    // Gibberish is never JSON: the first call plus exactly one repair.
    expect(chatCalls(workers[0])).toBe(2);
    const sent = workers[0].sent.filter((m) => (m as { method?: string }).method === 'chat') as Array<{
      params: { messages: ChatMessage[] };
    }>;
    expect(sent[0].params.messages.at(-1)!.content).toMatch(/JSON schema/);
    expect(sent[1].params.messages.at(-1)!.content).toMatch(/repair/);
  });

  it('refuses to chat before a model is loaded, and unknown models', async () => {
    const rt = runtime();
    await expect(rt.chat(hello)).rejects.toMatchObject({ kind: 'not-loaded' });
    await expect(rt.load('nobody/nothing')).rejects.toThrow(/Unknown model/);
  });

  it('unloading waits for the reply being written', async () => {
    const rt = runtime();
    await rt.load(TEST_CPU_MODEL.id);
    // Unloaded once the reply is being written: after its first words.
    let writing!: () => void;
    const started = new Promise<void>((r) => (writing = r));
    const reply = rt.chat(hello, { maxTokens: 120, onToken: () => writing() });
    await started;
    const unloaded = rt.unload();
    const text = await reply;
    await unloaded;
    expect(text.length).toBeGreaterThan(20);
    expect(rt.state.status).toBe('idle');
  });
});

// The window is the model's, counted with its own tokenizer; nothing is cut silently.
describe('CPU chat model: its window', () => {
  /** The prompt's tokens by the model's tokenizer, read here without the worker. */
  async function reference(messages: ChatMessage[]): Promise<number> {
    const tok = await transformers.AutoTokenizer.from_pretrained(TEST_CPU_MODEL.id, { local_files_only: true });
    const ids = tok.apply_chat_template(messages, {
      tokenize: true,
      add_generation_prompt: true,
      return_tensor: false,
      return_dict: false,
    });
    return (ids as number[]).length;
  }

  /** A user message that makes the prompt about `tokens` long. */
  async function promptOf(rt: CpuLlmRuntime, tokens: number): Promise<ChatMessage[]> {
    const make = (n: number): ChatMessage[] => [
      { role: 'system', content: 'You are a kind companion.' },
      { role: 'user', content: 'tea '.repeat(n) },
    ];
    const perWord = ((await rt.window!.countTokens!(make(200))) - (await rt.window!.countTokens!(make(100)))) / 100;
    const base = await rt.window!.countTokens!(make(0));
    return make(Math.floor((tokens - base) / perWord));
  }

  it("has the catalog's window and cap once loaded, and counts exactly with the model's tokenizer and template", async () => {
    transformers.env.localModelPath = `${MODELS}/`;
    transformers.env.allowRemoteModels = false;
    const rt = runtime();
    expect(rt.window).toBeUndefined();
    await rt.load(TEST_CPU_MODEL.id);
    expect(rt.window).toMatchObject({ contextTokens: TEST_CPU_MODEL.contextTokens, maxOutputTokens: TEST_CPU_MODEL.maxReplyTokens });
    const n = await rt.window!.countTokens!(hello);
    expect(n).toBe(await reference(hello));
    expect(n).toBeGreaterThan(10);
  });

  it('refuses a prompt longer than the window whole (the instructions are never cut), and carries on', async () => {
    const rt = runtime();
    await rt.load(TEST_CPU_MODEL.id);
    const long: ChatMessage[] = [{ role: 'system', content: 'Memories: ' + 'I like tea. '.repeat(200) }];
    for (let i = 0; i < 40; i++) long.push({ role: i % 2 ? 'assistant' : 'user', content: `message ${i} `.repeat(20) });
    const counted = await rt.window!.countTokens!(long);
    expect(counted).toBeGreaterThan(TEST_CPU_MODEL.contextTokens);
    const err = await rt.chat(long, { maxTokens: 30 }).catch((e: unknown) => e);
    expect(isContextOverflow(err)).toBe(true);
    expect(err).toMatchObject({ promptTokens: counted, contextTokens: TEST_CPU_MODEL.contextTokens });
    expect(rt.state.status).toBe('ready');
    expect(workers).toHaveLength(1);
    expect((await rt.chat(hello, { maxTokens: 10 })).length).toBeGreaterThan(0);
  });

  it('writes no further than the window: a reply stops where prompt plus reply fill it', async () => {
    const rt = runtime();
    await rt.load(TEST_CPU_MODEL.id);
    const messages = await promptOf(rt, TEST_CPU_MODEL.contextTokens - 40);
    const prompt = await rt.window!.countTokens!(messages);
    expect(prompt).toBeLessThan(TEST_CPU_MODEL.contextTokens);
    // The worker core itself, to read how many tokens it wrote.
    const core = createCpuLlmWorkerCore(tf, { device: 'cpu' });
    const ctx = { id: 1, emit: () => undefined, signal: new AbortController().signal, transfer: () => undefined };
    await core.load({ modelId: TEST_CPU_MODEL.id, dtype: TEST_CPU_MODEL.dtype, env: {} }, ctx);
    const params = { messages, maxTokens: 400, contextTokens: TEST_CPU_MODEL.contextTokens };
    const result = await core.chat(params, ctx);
    expect(result.promptTokens).toBe(prompt);
    expect(result.completionTokens).toBe(TEST_CPU_MODEL.contextTokens - prompt);
    expect(result.finishReason).toBe('length');
    // A JSON call's answer cut short is no answer: refused instead, for the caller to shorten.
    await expect(core.chat({ ...params, fullOutput: true }, ctx)).rejects.toMatchObject({ name: 'ContextOverflowError' });
    await expect(rt.json(messages, { type: 'object' }, { maxTokens: 100 })).rejects.toMatchObject({
      name: 'ContextOverflowError',
      contextTokens: TEST_CPU_MODEL.contextTokens,
    });
    await core.unload({}, ctx);
  });
});

describe('CPU chat model: the cache of the reply before', () => {
  const GREEDY = { maxTokens: 120, temperature: 0 };

  /** A runtime with the cached test model loaded, and what the engine reported it read per call. */
  async function loaded(): Promise<{ rt: CpuLlmRuntime; reads: EngineRead[] }> {
    const rt = runtime();
    await rt.load(KV_TEST_CPU_MODEL.id);
    return { rt, reads: [] };
  }

  /** The reply a fresh worker writes (no cache), and what it read. */
  async function fresh(messages: ChatMessage[]): Promise<{ text: string; read: EngineRead }> {
    const { rt, reads } = await loaded();
    const text = await rt.chat(messages, { ...GREEDY, onRead: (r) => reads.push(r) });
    expect(reads).toHaveLength(1);
    return { text, read: reads[0] };
  }

  const then = (messages: ChatMessage[], reply: string, next: string): ChatMessage[] => [
    ...messages,
    { role: 'assistant', content: reply },
    { role: 'user', content: next },
  ];

  it('reads only what the next message adds, and writes exactly what a fresh run writes', async () => {
    const { rt, reads } = await loaded();
    const onRead = (r: EngineRead) => reads.push(r);
    const first = await rt.chat(hello, { ...GREEDY, onRead });
    // It ended by itself ('.' then <|im_end|>), so its cache is kept.
    expect(first.length).toBeGreaterThan(10);
    expect(first.length).toBeLessThan(GREEDY.maxTokens);
    expect(reads[0]).toEqual({ promptTokens: await rt.window!.countTokens!(hello), readTokens: reads[0].promptTokens });

    const second = then(hello, first, 'Tell me more about it.');
    const reply = await rt.chat(second, { ...GREEDY, onRead });
    const prompt = await rt.window!.countTokens!(second);
    // The cache held the first prompt and the reply's tokens (one a byte with this tokenizer).
    const cached = reads[0].promptTokens! + new TextEncoder().encode(first).length;
    expect(reads[1]).toEqual({ promptTokens: prompt, readTokens: prompt - cached });
    expect(reads[1].readTokens).toBeLessThan(prompt / 2);

    const ref = await fresh(second);
    expect(ref.read).toEqual({ promptTokens: prompt, readTokens: prompt });
    expect(reply.length).toBeGreaterThan(5);
    expect(reply).toBe(ref.text);

    // And the text-generation pipeline on the whole prompt, as the engine ran before, agrees.
    transformers.env.localModelPath = `${MODELS}/`;
    transformers.env.allowRemoteModels = false;
    const g = await transformers.pipeline('text-generation', KV_TEST_CPU_MODEL.id, { device: 'cpu', dtype: KV_TEST_CPU_MODEL.dtype });
    const out = (await g(second, { max_new_tokens: GREEDY.maxTokens, do_sample: false, repetition_penalty: 1.1 })) as Array<{
      generated_text: ChatMessage[];
    }>;
    await g.dispose();
    expect(out[0].generated_text.at(-1)!.content).toBe(reply);
  });

  it('reads the whole prompt when it does not extend the reply before (an earlier message edited)', async () => {
    const { rt, reads } = await loaded();
    const onRead = (r: EngineRead) => reads.push(r);
    const first = await rt.chat(hello, { ...GREEDY, onRead });
    const next = 'Tell me more about it.';
    // The first message edited: longer than what the cache holds, its tokens differ early on.
    const edited = then([hello[0], { role: 'user', content: 'Hello! How was your night?' }], first, next);
    const reply = await rt.chat(edited, { ...GREEDY, onRead });
    expect(reads[1].promptTokens).toBeGreaterThan(reads[0].promptTokens! + first.length);
    expect(reads[1].readTokens).toBe(reads[1].promptTokens);
    expect(reply).toBe((await fresh(edited)).text);
    expect(reply).not.toBe((await fresh(then(hello, first, next))).text);
  });

  it('after Stop the next message reads the whole prompt (a stopped reply keeps no cache)', async () => {
    const { rt, reads } = await loaded();
    const onRead = (r: EngineRead) => reads.push(r);
    const first = await rt.chat(hello, { ...GREEDY, onRead });
    const second = then(hello, first, 'Tell me more about it.');
    const whole = (await fresh(second)).text;
    const ac = new AbortController();
    let seen = '';
    const partial = await rt.chat(second, {
      ...GREEDY,
      signal: ac.signal,
      onRead,
      onToken: (d) => {
        seen += d;
        if (seen.length >= 3) ac.abort();
      },
    });
    // The stopped call used the cache of the first reply.
    expect(reads[1].readTokens).toBeLessThan(reads[1].promptTokens!);
    expect(partial.length).toBeLessThan(whole.length);
    expect(whole.startsWith(partial)).toBe(true);
    const third = then(second, partial, 'And then?');
    const reply = await rt.chat(third, { ...GREEDY, onRead });
    expect(reads[2]).toEqual({ promptTokens: await rt.window!.countTokens!(third), readTokens: reads[2].promptTokens });
    expect(reply).toBe((await fresh(third)).text);
  });
});
