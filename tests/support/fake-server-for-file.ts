// One fake model server for a test file: started before the file's tests, closed after them. The
// object returned stands for the server once it has started, so a file reads `fake.url` in its
// tests as if it held the server itself.
import { afterAll, beforeAll } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer, type FakeServerConfig } from './fake-openai-server.mjs';

export function fakeServerForFile(initial?: Partial<FakeServerConfig> & { port?: number }): FakeOpenAiServer {
  let server: FakeOpenAiServer | undefined;
  beforeAll(async () => {
    server = await startFakeOpenAiServer(initial);
  });
  afterAll(async () => {
    await server?.close();
  });
  return new Proxy({} as FakeOpenAiServer, {
    get: (_, key) => {
      // Read at the file's top level, before beforeAll ran: a mistake to say at once.
      if (!server) throw new Error('The fake model server is read before it started: read it inside a test.');
      return Reflect.get(server, key) as unknown;
    },
  });
}
