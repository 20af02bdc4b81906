// Why an answer ended, as the engine says it: a reply that reached its token limit stops mid-way,
// and the app tells the person (chat.ts emits `cut`). Read from a model server's last chunk
// (OpenAI-compatible `finish_reason`, Ollama's `done_reason`) through LocalServerModel, from a
// server on 127.0.0.1 that stops at max_tokens as real ones do (tests/support/fake-openai-server.mjs).
import { describe, expect, it } from 'vitest';
import { chunkFinish, type ChatChunk } from '../../../src/models/server-request';
import { LocalServerModel } from '../../../src/models/local-server';
import type { AnswerFinish } from '../../../src/ports';
import { fakeServerForFile } from '../../support/fake-server-for-file';

const fake = fakeServerForFile();

describe('chunkFinish', () => {
  it.each([
    ['OpenAI stream, length', { choices: [{ delta: {}, finish_reason: 'length' }] }, 'length'],
    ['OpenAI completion, stop', { choices: [{ message: { content: 'x' }, finish_reason: 'stop' }] }, 'stop'],
    ['Ollama last line, length', { message: { content: '' }, done_reason: 'length' }, 'length'],
    ['Ollama last line, stop', { message: { content: '' }, done_reason: 'stop' }, 'stop'],
    ['a chunk mid-stream', { choices: [{ delta: { content: 'hi' }, finish_reason: null }] }, undefined],
    ['a reason of no concern here', { choices: [{ delta: {}, finish_reason: 'tool_calls' }] }, undefined],
  ] as Array<[string, ChatChunk, AnswerFinish | undefined]>)('%s', (_, chunk, want) => {
    expect(chunkFinish(chunk)).toBe(want);
  });
});

const LONG = 'one two three four five six seven eight nine ten eleven twelve';

describe('LocalServerModel says a reply reached its token limit', () => {
  it.each([
    ['llama.cpp, streamed', { kind: 'llama.cpp' }],
    ['vLLM, streamed', { kind: 'vllm' }],
    ['Ollama, its own route', { kind: 'ollama' }],
    ['a plain server, one completion', { kind: null, noStream: true }],
    ['a plain server, events with pauses', { kind: null, eventDelayMs: 1 }],
  ] as const)('%s: length when cut, stop when finished', async (_, config) => {
    // Each case whole: the fake keeps what an earlier set gave it.
    fake.set({
      noStream: false,
      eventDelayMs: 0,
      ...config,
      models: ['tiny-chat'],
      contextTokens: 8192,
      loaded: true,
      numCtx: null,
      replies: [{ when: 'long', say: LONG }],
    });
    const m = new LocalServerModel({ baseUrl: fake.url, model: 'tiny-chat' });
    await m.probeWindow();
    const ask = async (content: string, maxTokens: number) => {
      const finishes: AnswerFinish[] = [];
      const text = await m.chat([{ role: 'user', content }], { maxTokens, onFinish: (f) => finishes.push(f) });
      return { text, finishes };
    };
    const cut = await ask('tell me something long', 5);
    expect(cut.text.trim()).toBe('one two three four five');
    expect(cut.finishes).toEqual(['length']);
    const whole = await ask('tell me something long', 100);
    expect(whole.text).toBe(LONG);
    expect(whole.finishes).toEqual(['stop']);
  });

  it('a stopped call says nothing of why it ended', async () => {
    fake.set({
      kind: 'llama.cpp',
      models: ['tiny-chat'],
      contextTokens: 8192,
      loaded: true,
      numCtx: null,
      eventDelayMs: 20,
      replies: [{ when: 'long', say: LONG }],
    });
    const m = new LocalServerModel({ baseUrl: fake.url, model: 'tiny-chat' });
    const stop = new AbortController();
    const finishes: AnswerFinish[] = [];
    await m.chat([{ role: 'user', content: 'tell me something long' }], {
      maxTokens: 5,
      signal: stop.signal,
      onToken: () => stop.abort(),
      onFinish: (f) => finishes.push(f),
    });
    expect(finishes).toEqual([]);
  });
});
