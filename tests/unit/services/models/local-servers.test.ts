import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { discoveryOptions, findLocalServers, KNOWN_LOCAL_SERVERS, LocalServers } from '../../../../src/services/models/local-servers';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../../support/fake-openai-server.mjs';

let fake: FakeOpenAiServer;
let empty: FakeOpenAiServer;
let silent: ReturnType<typeof createServer>;
let silentUrl = '';
let closedUrl = '';

beforeAll(async () => {
  fake = await startFakeOpenAiServer();
  empty = await startFakeOpenAiServer({ models: [] });
  // Accepts the connection and never answers: the probe must give up on its own.
  silent = createServer(() => undefined);
  await new Promise<void>((ok) => silent.listen(0, '127.0.0.1', ok));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  const closed = createServer();
  await new Promise<void>((ok) => closed.listen(0, '127.0.0.1', ok));
  closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise((ok) => closed.close(ok));
});
afterAll(async () => {
  await fake.close();
  await empty.close();
  silent.closeAllConnections();
  await new Promise((ok) => silent.close(ok));
});

describe('finding model servers on this computer', () => {
  it('the product looks at the usual ports of Ollama, LM Studio and llama.cpp on loopback', () => {
    expect(KNOWN_LOCAL_SERVERS.map((s) => s.url)).toEqual(['http://127.0.0.1:11434', 'http://127.0.0.1:1234', 'http://127.0.0.1:8080']);
    expect(discoveryOptions.servers).toBe(KNOWN_LOCAL_SERVERS);
    expect(discoveryOptions.timeoutMs).toBeLessThanOrEqual(3_000);
  });

  it('offers only servers that list a model; nothing answering, no model and silence are left out, quietly and in time', async () => {
    // All asked at once: the silent one's wait is the whole wait. Told by order, not by a time: the
    // Ollama server is asked while the silent one's question is still open.
    let silentOpen = false;
    let askedWhileSilentOpen = false;
    const watched: typeof fetch = (input, init) => {
      const url = String(input);
      if (url.startsWith(`${fake.url}/`)) askedWhileSilentOpen = silentOpen;
      const answer = fetch(input, init);
      if (url.startsWith(`${silentUrl}/`)) {
        silentOpen = true;
        void answer.catch(() => undefined).finally(() => (silentOpen = false));
      }
      return answer;
    };
    const found = await findLocalServers(
      [
        { name: 'Closed', url: closedUrl },
        { name: 'Silent', url: silentUrl },
        { name: 'Empty', url: empty.url },
        { name: 'Ollama', url: `${fake.url}/v1/` },
        { name: 'Remote', url: 'http://192.0.2.1:11434' },
      ],
      // The product's own limit (at most 3 s): the servers that answer do so well within it.
      discoveryOptions.timeoutMs,
      watched,
    );
    expect(found).toEqual([{ name: 'Ollama', url: fake.url, models: ['tiny-chat', 'tiny-judge'] }]);
    expect(askedWhileSilentOpen).toBe(true);
  });

  it('the service says when it looks and what it found', async () => {
    const saved = discoveryOptions.servers;
    discoveryOptions.servers = [{ name: 'LM Studio', url: fake.url }];
    try {
      const s = new LocalServers();
      const states: string[] = [];
      s.on('state', (x) => states.push(x.state));
      await Promise.all([s.look(), s.look()]);
      expect(states).toEqual(['looking', 'done']);
      expect(s.snapshot.found.map((f) => f.name)).toEqual(['LM Studio']);
    } finally {
      discoveryOptions.servers = saved;
    }
  });
});
