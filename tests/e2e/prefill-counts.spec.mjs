// What the engine had to read before each reply's first token, as the page's stand-in records it
// (window.tealeafStandin.calls: readAnew, cachedTokens; tests/support/standin/kv-cache.ts): under
// each cache rule a three-message chat's calls add up (read anew + cached = the prompt) and the
// first call reads everything; a chat with nothing remembered extends its previous prompt, so
// web-llm's, a server's and the CPU engine's later replies reuse it, and an engine that keeps
// nothing never does.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, startServer, tempProfile } from './harness.mjs';
import { say, startChat } from './flows.mjs';

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

for (const [engine, rule] of [
  ['webgpu-4096', 'exact'],
  ['server-4096', 'lcp'],
  ['cpu-2048', 'prefix'],
  ['{"profile": "cpu-2048", "cache": "none"}', 'none'],
]) {
  test(`each call records what it read anew under the ${rule} rule (${engine})`, async () => {
    const h = await launch({ profile: tempProfile(), init: `localStorage.setItem('tealeaf-test-engine', '${engine}')` });
    try {
      const { page } = h;
      await startChat(page, server.url, { delayMs: 0, jsonDelayMs: 0 });
      for (const text of ['I planted tomatoes today.', 'They need water every day.', 'What else grows well beside them?'])
        await say(page, text);
      const calls = await page.evaluate(() => window.tealeafStandin.calls.map((c) => ({ ...c })));
      const chats = calls.filter((c) => c.kind === 'chat');
      assert.equal(chats.length, 3, 'one reply call per message');
      for (const c of calls) {
        assert.equal(typeof c.readAnew, 'number');
        assert.equal(c.readAnew + c.cachedTokens, c.promptTokens, `${c.kind} ${c.title ?? ''}: read anew + cached = prompt`);
      }
      assert.equal(calls[0].cachedTokens, 0, 'the first call finds nothing held');
      if (rule === 'none') assert.ok(calls.every((c) => c.cachedTokens === 0));
      else for (const c of chats.slice(1)) assert.ok(c.cachedTokens > 0, `a later reply reused nothing: ${JSON.stringify(c)}`);
    } finally {
      await h.close();
    }
  });
}
