// A model server's window, from what each real server reports (the fake answers as
// llama.cpp, LM Studio, Ollama and vLLM do), exact counts where the server tokenizes, and each
// server's refusal of a prompt too long for its context read as ContextOverflowError.
import { describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { LocalServerModel } from '../../../src/models/local-server';
import { isContextOverflow, type ChatMessage } from '../../../src/ports';
import { promptTokens, startFakeOpenAiServer, type FakeServerConfig } from '../../support/fake-openai-server.mjs';
import { fakeServerForFile } from '../../support/fake-server-for-file';
import { until } from '../../support/until';

const DEFAULTS: Partial<FakeServerConfig> = { kind: null, contextTokens: 4096, loaded: false, numCtx: null };

const fake = fakeServerForFile();

/** A fresh server state and a fresh model (the window is asked once per model). */
function serve(config: Partial<FakeServerConfig>, over: Partial<ConstructorParameters<typeof LocalServerModel>[0]> = {}) {
  fake.set({ ...DEFAULTS, ...config });
  return new LocalServerModel({ baseUrl: fake.url, model: 'tiny-chat', ...over });
}

const hello: ChatMessage[] = [
  { role: 'system', content: 'You are kind. Remember: the user likes green tea.' },
  { role: 'user', content: 'What do I like to drink?' },
];
/** A prompt of about `tokens` tokens as the fake server counts them. */
const longPrompt = (tokens: number): ChatMessage[] => [
  { role: 'system', content: 'You are kind.' },
  { role: 'user', content: 'tea '.repeat(tokens) },
];
const schema = { title: 'relation_labels', type: 'object' };

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  );
}

describe('LocalServerModel: the window the server reports', () => {
  it("llama.cpp: a slot's n_ctx from /props, exact counts through /apply-template and /tokenize", async () => {
    const m = serve({ kind: 'llama.cpp', contextTokens: 3000 });
    const w = await m.probeWindow();
    expect(w).toMatchObject({ contextTokens: 3000, maxOutputTokens: 750 });
    expect(await w!.countTokens!(hello)).toBe(promptTokens(hello));
    expect(fake.probes.map((p) => p.path)).toEqual(expect.arrayContaining(['/props', '/apply-template', '/tokenize']));
    // Asked once per model.
    const asked = fake.probes.filter((p) => p.path === '/props').length;
    await m.chat(hello);
    await m.probeWindow();
    expect(fake.probes.filter((p) => p.path === '/props').length).toBe(asked);
  });

  it('llama.cpp: a prompt past n_ctx is ContextOverflowError with its counts, never retried without max_tokens', async () => {
    const m = serve({ kind: 'llama.cpp', contextTokens: 1000 });
    const before = fake.requests.length;
    const e = await failure(m.chat(longPrompt(1200)));
    expect(isContextOverflow(e)).toBe(true);
    expect(e).toMatchObject({ promptTokens: promptTokens(longPrompt(1200)), contextTokens: 1000 });
    // JSON too: neither asked again without max_tokens nor "in words" as if the schema were refused.
    await expect(m.json(longPrompt(1200), schema)).rejects.toMatchObject({ name: 'ContextOverflowError' });
    expect(fake.requests.length - before).toBe(2);
  });

  it('LM Studio: a model loaded on first use is budgeted at its default context, then read as loaded', async () => {
    const m = serve({ kind: 'lmstudio', contextTokens: 8192, loaded: false });
    expect(await m.probeWindow()).toMatchObject({ contextTokens: 4096, maxOutputTokens: 1024 });
    expect(m.window!.countTokens).toBeUndefined();
    await m.chat(hello);
    // Asked again after the call, in the background.
    await until('the window read again', () => m.window?.contextTokens === 8192);
    expect(m.window).toMatchObject({ contextTokens: 8192, maxOutputTokens: 1024 });
    const loaded = serve({ kind: 'lmstudio', contextTokens: 3000, loaded: true });
    expect(await loaded.probeWindow()).toMatchObject({ contextTokens: 3000, maxOutputTokens: 750 });
  });

  it('LM Studio: its refusal is ContextOverflowError, and the context it names is the window from then on', async () => {
    // Loaded on first use with less than the default budget: only the refusal tells.
    const m = serve({ kind: 'lmstudio', contextTokens: 2000, loaded: false });
    expect((await m.probeWindow())!.contextTokens).toBe(4096);
    const e = await failure(m.chat(longPrompt(3000)));
    expect(e).toMatchObject({ name: 'ContextOverflowError', promptTokens: promptTokens(longPrompt(3000)), contextTokens: 2000 });
    expect(m.window!.contextTokens).toBe(2000);
  });

  it("Ollama: a Modelfile's num_ctx, else 4,096, asked for with every call on its own route (options.num_ctx)", async () => {
    const set = serve({ kind: 'ollama', numCtx: 8192, contextTokens: 8192 });
    expect(await set.probeWindow()).toMatchObject({ contextTokens: 8192, maxOutputTokens: 1024 });
    await set.chat(hello);
    expect(fake.requests.at(-1)).toMatchObject({ path: '/api/chat', body: { options: { num_ctx: 8192, num_predict: 1024 } } });
    const m = serve({ kind: 'ollama', contextTokens: 2048, loaded: false });
    expect(await m.probeWindow()).toMatchObject({ contextTokens: 4096, maxOutputTokens: 1024 });
    expect(m.window!.countTokens).toBeUndefined();
    expect(await m.chat(hello)).toMatch(/Served locally/);
    // Ollama loads the model with the context asked, whatever its default.
    expect(fake.requests.at(-1)).toMatchObject({ path: '/api/chat', body: { stream: true, options: { num_ctx: 4096 } } });
    expect(m.window).toMatchObject({ contextTokens: 4096 });
    // A loaded model keeps its context: asked for as it is, so Ollama does not load it again.
    const loaded = serve({ kind: 'ollama', contextTokens: 32_768, loaded: true });
    expect(await loaded.probeWindow()).toMatchObject({ contextTokens: 32_768 });
    await loaded.json(hello, { title: 'relation_labels', type: 'object' });
    expect(fake.requests.at(-1)!.body).toMatchObject({ options: { num_ctx: 32_768 }, format: { title: 'relation_labels' } });
  });

  it('Ollama cuts a longer prompt from the front without a word: a prompt within the window it budgets is sent whole', async () => {
    const m = serve({ kind: 'ollama', contextTokens: 2500, loaded: false });
    const w = (await m.probeWindow())!;
    const fits = longPrompt(w.contextTokens - w.maxOutputTokens - 40);
    expect(promptTokens(fits) + w.maxOutputTokens).toBeLessThanOrEqual(w.contextTokens);
    await m.chat(fits);
    expect(fake.requests.at(-1)!.cut).toBeUndefined();
    // What the budget prevents: the fake cuts the system prompt of a prompt past its context.
    await m.chat(longPrompt(5000));
    expect(fake.requests.at(-1)!.cut).toBe(true);
  });

  it('vLLM: max_model_len from /v1/models; its refusal is ContextOverflowError, not a refused max_tokens', async () => {
    const m = serve({ kind: 'vllm', contextTokens: 6000 });
    expect(await m.probeWindow()).toMatchObject({ contextTokens: 6000, maxOutputTokens: 1024 });
    const before = fake.requests.length;
    const e = await failure(m.chat(longPrompt(7000)));
    expect(e).toMatchObject({ name: 'ContextOverflowError', promptTokens: promptTokens(longPrompt(7000)), contextTokens: 6000 });
    expect(fake.requests.length - before).toBe(1);
  });

  it('a server that says nothing gets the smallest window of the catalog, with no counting', async () => {
    const m = serve({ kind: null });
    expect(await m.probeWindow()).toEqual({ contextTokens: 2048, maxOutputTokens: 384 });
  });

  it('a window given is used as is (the server is not asked); a remote benchmark server given none has none', async () => {
    const probes = fake.probes.length;
    const given = serve({ kind: 'llama.cpp' }, { window: { contextTokens: 32_768 } });
    expect(given.window).toEqual({ contextTokens: 32_768, maxOutputTokens: 1024 });
    await given.chat(hello);
    const remote = serve({ kind: 'llama.cpp' }, { allowRemote: true });
    expect(remote.window).toBeUndefined();
    await remote.chat(hello);
    expect(fake.probes.length).toBe(probes);
  });

  it('never holds a call long: questions that get no answer give way to the fallback', async () => {
    fake.set(DEFAULTS);
    const hanging: typeof fetch = (input, init) => {
      const url = String(input);
      if (url.endsWith('/v1/chat/completions')) return fetch(input, init);
      return new Promise((_, reject) => init?.signal?.addEventListener('abort', () => reject(new Error('aborted'))));
    };
    // The questions give up after 300 ms (the call itself keeps its usual wait): a hanging question
    // ends only on its abort, so the reply arriving at all says they gave way.
    const m = new LocalServerModel({ baseUrl: fake.url, model: 'tiny-chat', fetch: hanging, probeMs: 300 });
    expect(await m.chat(hello)).toMatch(/Served locally/);
    expect(m.window).toEqual({ contextTokens: 2048, maxOutputTokens: 384 });
  });

  it('a server that was down is asked again once it answers (a failed question is not kept)', async () => {
    const probe = createServer();
    await new Promise<void>((ok) => probe.listen(0, '127.0.0.1', ok));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((ok) => probe.close(() => ok()));
    const m = new LocalServerModel({ baseUrl: `http://127.0.0.1:${port}`, model: 'tiny-chat' });
    expect(await m.probeWindow()).toEqual({ contextTokens: 2048, maxOutputTokens: 384 });
    const up = await startFakeOpenAiServer({ port, kind: 'llama.cpp', contextTokens: 3000 });
    try {
      expect(await m.probeWindow()).toMatchObject({ contextTokens: 3000 });
    } finally {
      await up.close();
    }
  });
});
