// A model server on this computer: through the Models view a user connects to an
// OpenAI-compatible server on 127.0.0.1 (here a scripted double, tests/support/fake-openai-server.mjs),
// chats with it, the session is memorised through it, and it is used again after a reload. Errors
// say what to do: nothing running, the browser's origin refused, a remote address.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { launch, serveApp, shot } from './harness.mjs';
import { assertNoOffHost, lastReply, pollDb, readDb, say, send } from './flows.mjs';
import { startFakeOpenAiServer } from '../support/fake-openai-server.mjs';

const server = serveApp();
let fake;
before(async () => {
  fake = await startFakeOpenAiServer({ delayMs: 2 });
});
after(async () => {
  await fake?.close();
});

async function connect(page, url) {
  await page.getByTestId('nav-models').click();
  await page.getByTestId('server-url').fill(url);
  await page.getByTestId('server-connect').click();
}

test('connect to a model server, chat and remember through it, still in use after a reload', async () => {
  for (const width of [1280, 375]) {
    const h = await launch({ viewport: { width, height: 800 } });
    try {
      const { page } = h;
      await page.goto(`${server.url}/#/models`);
      await connect(page, fake.url);
      const select = page.getByTestId('server-model');
      await select.waitFor();
      assert.deepEqual(await select.locator('option').allTextContents(), ['tiny-chat', 'tiny-judge']);
      await select.selectOption('tiny-chat');
      await page.getByTestId('server-use').click();
      await page.getByTestId('model-status').filter({ hasText: 'tiny-chat' }).waitFor();
      await page.getByTestId('server-card').scrollIntoViewIfNeeded();
      await shot(page, `local-server-${width}`);

      const before = fake.requests.length;
      await page.getByTestId('nav-chat').click();
      assert.equal(await say(page, 'My sister Ana plays the cello'), 'Served locally: My sister Ana plays the cello ✓');
      const chat = fake.requests.slice(before).find((r) => r.body?.stream && !r.body.response_format);
      assert.ok(chat, 'the reply came from the server');
      assert.equal(chat.body.model, 'tiny-chat');

      // Memorising runs through the server too (schema-constrained summary, then labelling).
      await page.getByTestId('end-session').click();
      const db = await pollDb(page, (d) => d.jobs.length > 0 && d.jobs.every((j) => j.status === 'done'), {
        what: 'the session to be memorised',
      });
      assert.ok(
        db.memories.some((m) => m.text === 'The user said: My sister Ana plays the cello'),
        "the memory came from the server's summary",
      );
      assert.ok(fake.requests.slice(before).some((r) => r.body?.response_format?.json_schema?.schema?.title === 'session_memories'));

      // After a reload the server's model is used again without asking.
      await page.reload();
      await page.getByTestId('model-status').filter({ hasText: 'tiny-chat' }).waitFor();
      await page.getByTestId('nav-chat').click();
      await send(page, 'Ana has a concert on Friday');
      assert.match(await lastReply(page), /^Served locally: Ana has a concert on Friday/);
      assert.deepEqual(h.errors, []);
      assertNoOffHost(h);
    } finally {
      await h.dispose();
    }
  }
});

test('errors say what to do: nothing running, origin refused, not this computer; a failing server fails the reply visibly', async () => {
  const h = await launch();
  const refusing = await startFakeOpenAiServer({ allowOrigin: null });
  try {
    const { page } = h;
    await page.goto(`${server.url}/#/models`);
    const error = page.getByTestId('server-error');

    // Nothing listens on a port just closed.
    const probe = createServer();
    await new Promise((ok) => probe.listen(0, '127.0.0.1', ok));
    const { port } = probe.address();
    await new Promise((ok) => probe.close(ok));
    await connect(page, `http://127.0.0.1:${port}`);
    await error.filter({ hasText: 'Nothing answers' }).waitFor();

    // Running, but the browser's origin is not allowed.
    await connect(page, refusing.url);
    await error.filter({ hasText: 'does not allow this app' }).waitFor();
    assert.match(await error.textContent(), new RegExp(`OLLAMA_ORIGINS=${server.url.replace(/[.]/g, '\\.')}`));
    await error.scrollIntoViewIfNeeded();
    await shot(page, 'local-server-refused-1280');

    // A remote address is refused before any request.
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    await connect(page, 'https://api.example.com/v1');
    await error.filter({ hasText: 'on this computer' }).waitFor();
    assert.deepEqual(
      requests.filter((u) => u.includes('example.com')),
      [],
    );

    // In use, then the server fails: the reply says so instead of hanging.
    await connect(page, fake.url);
    await page.getByTestId('server-use').click();
    await page.getByTestId('model-status').filter({ hasText: 'tiny-chat' }).waitFor();
    fake.set({ status: 503 });
    await page.getByTestId('nav-chat').click();
    await send(page, 'Are you there?');
    await page.getByTestId('toast-error').or(page.locator('[data-testid="turn-assistant"][data-status="error"]')).first().waitFor();
    const shown = await page.locator('body').textContent();
    assert.match(shown, /503/);
    fake.set({ status: 0 });
    const db = await readDb(page, ['turns']);
    assert.ok(
      db.turns.some((t) => t.role === 'user' && t.text === 'Are you there?'),
      'the message is kept',
    );
    assertNoOffHost(h);
  } finally {
    fake.set({ status: 0 });
    await refusing.close();
    await h.dispose();
  }
});
