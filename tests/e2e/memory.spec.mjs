// Memory end to end: a first session is memorised (real transformers.js embeddings of the local
// test model, scripted language model), and a reply in a second session shows what it remembered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import { assertNoOffHost, endAndRemember, newChat, say, startChat } from './flows.mjs';

const server = serveApp();

test('two sessions: the second reply shows a remembered timeline, and reload keeps it', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    const { page } = h;
    await startChat(page, server.url, { delayMs: 2 }, { embedder: true });

    await say(page, 'I adopted a puppy named Biscuit last week');
    await say(page, 'Biscuit loves chasing the red ball in the park');
    await endAndRemember(page);
    await shot(page, 'memory-session-memorised');

    await newChat(page);
    await say(page, 'How is Biscuit doing with the ball?');
    const chip = page.getByTestId('remembered').last();
    await chip.waitFor();
    assert.match(await chip.textContent(), /remembered: \d+ timeline/);
    await chip.click();
    const detail = await page.getByTestId('remembered-detail').last().textContent();
    assert.match(detail, /Biscuit/);
    await shot(page, 'memory-remembered-chip');
    assertNoOffHost(h);
    await h.close();

    h = await launch({ profile });
    await h.page.goto(`${server.url}/#/chat`);
    const item = h.page.getByTestId('session-item').filter({ hasText: 'How is Biscuit' });
    await item.waitFor();
    await item.click();
    const chip2 = h.page.getByTestId('remembered').last();
    await chip2.waitFor();
    await chip2.click();
    assert.match(await h.page.getByTestId('remembered-detail').last().textContent(), /Biscuit/);
    await shot(h.page, 'memory-after-reload');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});
