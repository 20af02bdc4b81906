// The local-server engine against a real HTTP server on 127.0.0.1 (a scripted OpenAI-compatible
// double): streaming through awkwardly cut chunks, structured output and its fallback, errors.
import { describe, expect, it, vi } from 'vitest';
import { createServer } from 'node:net';
import { LocalServerModel, normaliseServerUrl, sseData, type LocalServerError } from '../../../src/models/local-server';
import { CHAT_LIMITS, JSON_LIMITS } from '../../../src/models/call-limits';
import type { FakeOpenAiServer } from '../../support/fake-openai-server.mjs';
import { fakeServerForFile } from '../../support/fake-server-for-file';

const fake = fakeServerForFile();

const model = (over: Partial<ConstructorParameters<typeof LocalServerModel>[0]> = {}) =>
  new LocalServerModel({ baseUrl: fake.url, model: 'tiny-chat', ...over });

async function failure(p: Promise<unknown>): Promise<LocalServerError> {
  try {
    await p;
  } catch (e) {
    return e as LocalServerError;
  }
  throw new Error('expected a failure');
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const { port } = s.address() as { port: number };
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

describe('normaliseServerUrl', () => {
  it('keeps loopback http addresses, without a trailing slash or /v1', () => {
    expect(normaliseServerUrl('http://127.0.0.1:11434/')).toBe('http://127.0.0.1:11434');
    expect(normaliseServerUrl(' http://localhost:1234/v1 ')).toBe('http://localhost:1234');
  });
  it.each([
    ['https://api.openai.com/v1', /this computer/],
    ['http://192.168.1.5:11434', /this computer/],
    ['http://127.0.0.1.example.com', /this computer/],
    ['https://127.0.0.1:8080', /http:\/\//],
    ['ollama', /not an address/],
  ])('refuses %s', (input, message) => {
    expect(() => normaliseServerUrl(input)).toThrow(message);
  });
});

describe('sseData', () => {
  it('yields each data payload however the bytes are cut', async () => {
    const text = 'data: {"a":1}\r\n\r\n: comment\nevent: x\ndata: [DONE]\n\ndata: tail';
    const bytes = new TextEncoder().encode(text);
    for (const size of [1, 2, 3, 7, bytes.length]) {
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < bytes.length; i += size) c.enqueue(bytes.slice(i, i + size));
          c.close();
        },
      });
      const got: string[] = [];
      for await (const d of sseData(stream)) got.push(d);
      expect(got).toEqual(['{"a":1}', '[DONE]', 'tail']);
    }
  });
});

describe('LocalServerModel', () => {
  it('streams a reply token by token, multi-byte characters intact', async () => {
    fake.set({ malformed: false });
    const tokens: string[] = [];
    const text = await model().chat([{ role: 'user', content: 'Hello there' }], {
      onToken: (t) => tokens.push(t),
      temperature: 0.3,
      maxTokens: 50,
    });
    expect(text).toBe('Served locally: Hello there ✓');
    expect(tokens.join('')).toBe(text);
    expect(tokens.length).toBeGreaterThan(1);
    const sent = fake.requests.at(-1)!.body as Record<string, unknown>;
    expect(sent).toMatchObject({ model: 'tiny-chat', stream: true, temperature: 0.3, max_tokens: 50 });
  });

  it('skips a malformed event without losing the reply', async () => {
    fake.set({ malformed: true });
    try {
      expect(await model().chat([{ role: 'user', content: 'again' }])).toBe('Served locally: again ✓');
    } finally {
      fake.set({ malformed: false });
    }
  });

  it('asks for structured output with the JSON schema', async () => {
    const schema = { title: 'relation_labels', type: 'object', properties: { labels: { type: 'array' } }, required: ['labels'] };
    const out = await model().json([{ role: 'user', content: 'Candidate 1\nCandidate 2' }], schema);
    expect(JSON.parse(out)).toEqual({
      labels: [
        { candidate: 1, relation: 'SameTopic' },
        { candidate: 2, relation: 'SameTopic' },
      ],
    });
    const sent = fake.requests.at(-1)!.body as { response_format: { type: string; json_schema: { schema: unknown } } };
    expect(sent.response_format.type).toBe('json_schema');
    expect(sent.response_format.json_schema.schema).toEqual(schema);
  });

  it('falls back to asking in words where the server refuses response_format, and remembers it', async () => {
    fake.set({ schema: false });
    try {
      const m = model();
      const schema = { title: 'relation_labels', type: 'object' };
      const before = fake.requests.length;
      expect(JSON.parse(await m.json([{ role: 'user', content: 'Candidate 1' }], schema))).toEqual({
        labels: [{ candidate: 1, relation: 'SameTopic' }],
      });
      expect(fake.requests.length - before).toBe(2); // refused once, then asked in words
      await m.json([{ role: 'user', content: 'Candidate 1' }], schema);
      expect(fake.requests.length - before).toBe(3); // not refused again
      expect((fake.requests.at(-1)!.body as { response_format?: { type: string } }).response_format?.type).toBe('json_object');
    } finally {
      fake.set({ schema: true });
    }
  });

  it('asks in words when set to (the self-test chose it), and by the schema again when set back', async () => {
    const m = model({ window: { contextTokens: 4096 } });
    const schema = { title: 'relation_labels', type: 'object' };
    const format = () => (fake.requests.at(-1)!.body as { response_format?: { type: string } }).response_format?.type;
    expect([m.structuredMode, m.window?.schemaInPrompt]).toEqual(['grammar', undefined]);
    m.setStructuredMode('words');
    expect([m.structuredMode, m.window?.schemaInPrompt]).toEqual(['words', true]);
    await m.json([{ role: 'user', content: 'Candidate 1' }], schema);
    expect(format()).toBe('json_object');
    expect(JSON.stringify(fake.requests.at(-1)!.body)).toContain('matching this JSON schema');
    m.setStructuredMode('grammar');
    await m.json([{ role: 'user', content: 'Candidate 1' }], schema);
    expect(format()).toBe('json_schema');
  });

  it("lists the server's models", async () => {
    expect(await model().listModels()).toEqual(['tiny-chat', 'tiny-judge']);
  });

  it('says when the model is not installed there', async () => {
    const e = await failure(model({ model: 'missing' }).chat([{ role: 'user', content: 'x' }]));
    expect(e.kind).toBe('http');
    expect(e.status).toBe(404);
    expect(e.message).toMatch(/"missing" installed/);
  });

  it('reports HTTP errors with the status', async () => {
    fake.set({ status: 500 });
    try {
      const e = await failure(model().chat([{ role: 'user', content: 'x' }]));
      expect(e.kind).toBe('http');
      expect(e.message).toMatch(/500/);
      expect(e.detail).toMatch(/scripted failure/);
    } finally {
      fake.set({ status: 0 });
    }
  });

  it('says nothing answers when the server is down', async () => {
    const port = await closedPort();
    const e = await failure(
      new LocalServerModel({ baseUrl: `http://127.0.0.1:${port}`, model: 'tiny-chat' }).chat([{ role: 'user', content: 'x' }]),
    );
    expect(e.kind).toBe('down');
    expect(e.message).toMatch(/Nothing answers at http:\/\/127\.0\.0\.1:\d+/);
  });

  it('times out a server that never answers', async () => {
    fake.set({ stall: true });
    try {
      const e = await failure(model({ timeoutMs: 300 }).chat([{ role: 'user', content: 'x' }]));
      expect(e.kind).toBe('timeout');
      expect(e.message).toMatch(/did not answer within/);
    } finally {
      fake.set({ stall: false });
    }
  });

  it('stops when aborted mid-stream and returns what arrived', async () => {
    fake.set({ delayMs: 15 });
    try {
      const controller = new AbortController();
      let seen = '';
      const text = await model().chat([{ role: 'user', content: 'a long message to cut short' }], {
        signal: controller.signal,
        onToken: (t) => {
          seen += t;
          if (seen.length > 10) controller.abort();
        },
      });
      expect(text).toBe(seen);
      expect(text.length).toBeGreaterThan(10);
      expect(text.length).toBeLessThan('Served locally: a long message to cut short ✓'.length);
    } finally {
      fake.set({ delayMs: 0 });
    }
  });
});

// Every call is bounded (tokens, time, size) whatever the server does.
describe('LocalServerModel: bounded calls', () => {
  const schema = { title: 'session_memories', type: 'object' };
  const ask = [{ role: 'user' as const, content: 'T1 [user, today]: hello' }];

  async function withFake<T>(patch: Parameters<FakeOpenAiServer['set']>[0], fn: () => Promise<T>): Promise<T> {
    const saved = { ...fake.set({}) };
    fake.set(patch);
    try {
      return await fn();
    } finally {
      fake.set(saved);
    }
  }

  it("sends a token limit with every call, JSON and chat, when the caller names none: the window's output cap", async () => {
    // A server that says nothing of its window gets the smallest of the catalog.
    const cap = (await model().probeWindow())!.maxOutputTokens;
    expect(cap).toBe(384);
    await model().json(ask, schema);
    expect((fake.requests.at(-1)!.body as { max_tokens?: number }).max_tokens).toBe(cap);
    await model().chat([{ role: 'user', content: 'hi' }]);
    expect((fake.requests.at(-1)!.body as { max_tokens?: number }).max_tokens).toBe(cap);
    // A caller's smaller budget wins; a larger one is capped.
    await model().json(ask, schema, { maxTokens: 80 });
    expect((fake.requests.at(-1)!.body as { max_tokens?: number }).max_tokens).toBe(80);
    await model().json(ask, schema, { maxTokens: 10 ** 9 });
    expect((fake.requests.at(-1)!.body as { max_tokens?: number }).max_tokens).toBe(cap);
    // Where the window is larger, the call limits still bound it.
    const big = model({ window: { contextTokens: 1_000_000, maxOutputTokens: 100_000 } });
    await big.chat([{ role: 'user', content: 'hi' }]);
    expect((fake.requests.at(-1)!.body as { max_tokens?: number }).max_tokens).toBe(CHAT_LIMITS.maxTokens);
    await big.json(ask, schema);
    expect((fake.requests.at(-1)!.body as { max_tokens?: number }).max_tokens).toBe(JSON_LIMITS.maxTokens);
  });

  it('stops a JSON answer that never ends (endless whitespace, max_tokens ignored) at the size limit', async () => {
    await withFake({ endless: 'json' }, async () => {
      const m = model({ limits: { json: { maxChars: 20_000 } } });
      const e = await failure(m.json(ask, schema));
      expect(e.kind).toBe('too-long');
      expect(e.message).toMatch(/went past 20,000 characters/);
    });
  });

  it('stops an answer that trickles without end at the time limit, and one that pauses at the wait limit', async () => {
    await withFake({ endless: 'trickle', eventDelayMs: 20 }, async () => {
      // The answer never ends: the call ending at all, on its total limit, is the check (a call
      // that is not bounded fails the test on its timeout).
      const e = await failure(model({ limits: { json: { totalMs: 600 } } }).json(ask, schema));
      expect(e.kind).toBe('timeout');
      expect(e.message).toMatch(/still going after/);
    });
    // The answer starts, then goes silent: the pause limit, not the wait for the start. On the
    // test's clock, so that a busy machine cannot make the start late.
    vi.useFakeTimers();
    try {
      const first = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'Hello' } }] })}\n\n`;
      // As fetch does, an abort ends the body being read.
      const pausing: typeof fetch = async (_url, init) => {
        const body = new ReadableStream({
          start: (c) => {
            c.enqueue(new TextEncoder().encode(first));
            init?.signal?.addEventListener('abort', () => c.error(init.signal!.reason));
          },
        });
        return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
      };
      const m = model({ timeoutMs: 400, fetch: pausing, window: { contextTokens: 4096 } });
      const failed = failure(m.chat([{ role: 'user', content: 'x' }]));
      await vi.advanceTimersByTimeAsync(400);
      const e = await failed;
      expect(e.kind).toBe('timeout');
      expect(e.message).toMatch(/stopped sending its answer/);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a chat reply that never ends stops at its size limit, with what arrived given to onToken', async () => {
    await withFake({ endless: 'chat' }, async () => {
      let seen = 0;
      const m = model({ limits: { chat: { maxChars: 30_000 } } });
      const e = await failure(m.chat([{ role: 'user', content: 'x' }], { onToken: (t) => (seen += t.length) }));
      expect(e.kind).toBe('too-long');
      expect(seen).toBeGreaterThan(30_000);
      expect(seen).toBeLessThan(31_000);
    });
  });

  it('a model list whose body never ends times out as a whole', async () => {
    await withFake({ modelsStall: true }, async () => {
      const e = await failure(model({ timeoutMs: 400 }).listModels());
      expect(e.kind).toBe('timeout');
    });
  });

  it('reads a whole JSON completion when the server ignores stream: true', async () => {
    await withFake({ noStream: true }, async () => {
      const tokens: string[] = [];
      const text = await model().chat([{ role: 'user', content: 'Not streamed' }], { onToken: (t) => tokens.push(t) });
      expect(text).toBe('Served locally: Not streamed ✓');
      expect(tokens.join('')).toBe(text);
      expect(JSON.parse(await model().json(ask, schema))).toEqual({
        events: [{ text: 'The user said: hello', about: 'user', turns: ['T1'] }],
        userTraits: [],
        assistantTraits: [],
        notes: [],
        topics: [],
      });
    });
  });

  it('an answer with no events at all is an error, not an empty reply', async () => {
    await withFake({ replies: [{ when: 'nothing', say: '' }] }, async () => {
      // The fake always ends with a finish event and [DONE]: read those as events (a real empty reply).
      expect(await model().chat([{ role: 'user', content: 'nothing' }])).toBe('');
    });
    const body = () =>
      new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode('<html>not an event stream</html>'));
          c.close();
        },
      });
    const html = model({ fetch: async () => new Response(body(), { headers: { 'content-type': 'text/html' } }) });
    const e = await failure(html.chat([{ role: 'user', content: 'x' }]));
    expect(e.kind).toBe('bad-response');
  });

  it('a server that refuses max_tokens (past its context length) is asked again without it; the size limit still holds', async () => {
    await withFake({ refuseMaxTokens: true }, async () => {
      const m = model();
      const before = fake.requests.length;
      expect(JSON.parse(await m.json(ask, schema)).events).toHaveLength(1);
      const sent = fake.requests.slice(before).map((r) => (r.body as { max_tokens?: number }).max_tokens);
      expect(sent).toEqual([m.window!.maxOutputTokens, undefined]);
      // ...and not refused again: the JSON schema was not given up for it.
      await m.json(ask, schema);
      expect((fake.requests.at(-1)!.body as { response_format?: { type: string } }).response_format?.type).toBe('json_schema');
    });
  });
});
