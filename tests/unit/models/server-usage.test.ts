// What a model server says it read for a request (server-usage.ts): llama.cpp's timings, vLLM's
// usage with cached tokens, Ollama's prompt_eval_count, read through LocalServerModel from a
// server on 127.0.0.1 whose prompt cache keeps the longest common prefix with its last prompt and
// counts by its own tokenizer (tests/support/fake-openai-server.mjs), and the request fields that
// keep that cache (cache_prompt, stream_options.include_usage, keep_alive).
import { describe, expect, it } from 'vitest';
import { engineRead } from '../../../src/models/server-usage';
import { LocalServerModel } from '../../../src/models/local-server';
import type { ChatMessage, EngineRead } from '../../../src/ports';
import { fakeServerForFile } from '../../support/fake-server-for-file';

const fake = fakeServerForFile();

describe("engineRead: each server's own fields", () => {
  it.each([
    ['llama.cpp timings', { timings: { prompt_n: 40, cache_n: 960 } }, { readTokens: 40, promptTokens: 1000 }],
    [
      'llama.cpp without cache_n, with usage',
      { timings: { prompt_n: 40 }, usage: { prompt_tokens: 1000 } },
      { readTokens: 40, promptTokens: 1000 },
    ],
    ['llama.cpp, nothing else', { timings: { prompt_n: 40 } }, { readTokens: 40 }],
    [
      'usage with cached tokens',
      { usage: { prompt_tokens: 1000, prompt_tokens_details: { cached_tokens: 900 } } },
      { readTokens: 100, promptTokens: 1000 },
    ],
    ['Ollama last line', { done: true, prompt_eval_count: 12 }, { readTokens: 12 }],
  ])('%s', (_, chunk, want) => {
    expect(engineRead(chunk)).toEqual(want);
  });

  it.each([
    ['no usage at all', { choices: [{ delta: { content: 'hi' } }] }],
    ['usage without a cache figure (nothing says what was cached)', { usage: { prompt_tokens: 1000 } }],
    ['cached more than the prompt', { usage: { prompt_tokens: 10, prompt_tokens_details: { cached_tokens: 11 } } }],
    ['Ollama line not yet done', { done: false, prompt_eval_count: 12 }],
    ['negative, fractional garbage', { timings: { prompt_n: -3 } }],
    ['strings', { timings: { prompt_n: '40' } }],
    ['null', null],
    ['a number', 7],
  ])('nothing from %s', (_, chunk) => {
    expect(engineRead(chunk)).toBeUndefined();
  });
});

const chat = (n: number): ChatMessage[] => [
  { role: 'system', content: 'You are Tealeaf, a warm companion. '.repeat(20) },
  ...Array.from({ length: n }, (_, i): ChatMessage => ({
    role: i % 2 ? 'assistant' : 'user',
    content: `Message number ${i} about the garden and the tomatoes.`,
  })),
];

async function reads(m: LocalServerModel, messages: ChatMessage[]): Promise<EngineRead | undefined> {
  let got: EngineRead | undefined;
  await m.chat(messages, { onRead: (r) => (got = r) });
  return got;
}

describe('LocalServerModel reports what the server read anew', () => {
  it.each(['llama.cpp', 'vllm', 'ollama'] as const)(
    '%s: a request that extends the last one reads only what is new; one that changed its start reads all',
    async (kind) => {
      fake.set({ kind, models: ['tiny-chat'], contextTokens: 8192, loaded: true, numCtx: null });
      const m = new LocalServerModel({ baseUrl: fake.url, model: 'tiny-chat' });
      await m.probeWindow();
      const first = await reads(m, chat(4));
      const server = () => fake.requests.at(-1)!.read!;
      expect(first?.readTokens).toBe(server().anew);
      const extended = await reads(m, chat(6));
      // The server's own count, not the app's: what it reused of the previous prompt is not read again.
      expect(server().cached).toBeGreaterThan(0);
      expect(extended?.readTokens).toBe(server().anew);
      expect(extended!.readTokens).toBeLessThan(server().prompt / 2);
      if (kind !== 'ollama') expect(extended?.promptTokens).toBe(server().prompt);
      const changed = chat(6);
      changed[0] = { role: 'system', content: `Today is another day. ${changed[0]!.content}` };
      const reread = await reads(m, changed);
      expect(reread?.readTokens).toBe(server().prompt - server().cached);
      expect(server().cached).toBeLessThan(10);

      const sent = fake.requests.at(-1)!.body as Record<string, unknown>;
      if (kind === 'ollama') expect(sent.keep_alive).toBe('30m');
      else expect(sent).toMatchObject({ cache_prompt: true, stream_options: { include_usage: true } });
    },
  );

  it('a server that reports nothing: no figure, the app keeps its own count', async () => {
    fake.set({ kind: null, models: ['tiny-chat'] });
    const m = new LocalServerModel({ baseUrl: fake.url, model: 'tiny-chat' });
    expect(await reads(m, chat(4))).toBeUndefined();
  });
});
