// The local-server engine against a real HTTP server on 127.0.0.1 (a scripted OpenAI-compatible
// double): streaming through awkwardly cut chunks, structured output and its fallback, errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { LocalServerModel, normaliseServerUrl, sseData, type LocalServerError } from '../../../src/models/local-server';
import { startFakeOpenAiServer } from '../../support/fake-openai-server.mjs';

type Fake = Awaited<ReturnType<typeof startFakeOpenAiServer>>;
let fake: Fake;

beforeAll(async () => {
  fake = await startFakeOpenAiServer();
});
afterAll(async () => {
  await fake.close();
});

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
