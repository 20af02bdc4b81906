// The browser's built-in model (Prompt API), through a test double of the API that only
// the e2e build installs (tests/support/fake-prompt-api.ts). Without the API the Models view does
// not offer it; with it, the user gets the browser's model ready (with progress), chats, the
// session is memorised through its structured output, and it is used again after a reload.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp, shot } from './harness.mjs';
import { assertNoOffHost, pollDb, say } from './flows.mjs';

const server = serveApp();

test('a browser without the Prompt API is not offered a built-in model', async () => {
  const h = await launch();
  try {
    await h.page.goto(`${server.url}/#/models`);
    await h.page.getByTestId('server-card').waitFor();
    assert.equal(await h.page.getByTestId('builtin-card').count(), 0);
  } finally {
    await h.dispose();
  }
});

test("the browser's model: made ready with progress, chats, memorises, and is used again after a reload", async () => {
  for (const width of [1280, 375]) {
    const h = await launch({ viewport: { width, height: 800 } });
    try {
      const { page } = h;
      await page.goto(`${server.url}/#/models`);
      await page.evaluate(() => localStorage.setItem('tealeaf-test-builtin', 'downloadable'));
      await page.reload();
      const card = page.getByTestId('builtin-card');
      await card.waitFor();
      await page.getByTestId('builtin-use').click();
      await page.getByTestId('builtin-progress').waitFor();
      await card.scrollIntoViewIfNeeded();
      await shot(page, `builtin-progress-${width}`);
      await page.getByTestId('builtin-in-use').waitFor();
      await page.getByTestId('model-status').filter({ hasText: 'Built into this browser' }).waitFor();

      await page.getByTestId('nav-chat').click();
      assert.equal(await say(page, 'I started learning the violin'), 'Built in: I started learning the violin');
      // The chat's next message goes to the session that read the first: only the new message is read.
      assert.equal(await say(page, 'It is harder than I thought'), 'Built in: It is harder than I thought');
      const streamed = (await page.evaluate(() => globalThis.__builtinCalls)).filter((c) => c.kind === 'stream');
      assert.equal(streamed.length, 2);
      assert.equal(streamed[1].session, streamed[0].session, "the second reply prompted the chat's kept session");
      await page.getByTestId('end-session').click();
      const db = await pollDb(page, (d) => d.jobs.length > 0 && d.jobs.every((j) => j.status === 'done'), {
        what: 'the session to be memorised',
      });
      assert.ok(db.memories.some((m) => m.text === 'The user said: I started learning the violin'));
      const calls = await page.evaluate(() => globalThis.__builtinCalls);
      assert.ok(calls.some((c) => c.kind === 'stream' && c.input === 'I started learning the violin'));
      assert.ok(
        calls.some((c) => c.kind === 'prompt'),
        'memorising used structured output',
      );

      await page.reload();
      await page.getByTestId('model-status').filter({ hasText: 'Built into this browser' }).waitFor();
      await page.getByTestId('nav-chat').click();
      assert.equal(await say(page, 'Practice went well'), 'Built in: Practice went well');
      assert.deepEqual(h.errors, []);
      assertNoOffHost(h);
    } finally {
      await h.dispose();
    }
  }
});
