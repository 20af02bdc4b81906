// Semantic search by default. The memory search (embedding) model downloads with
// the first chat model the user loads, announced with its size where the chat model is offered,
// its progress shown; after a reload it is ready again by itself. When its download fails, the
// Models view says what to do and chat still works, by words only. Which recall ran is stored with
// each reply (scores with a meaning part only when vectors were searched): the "remembered" chip,
// "why these" and the Memory view say it, before and after the model loaded, also after a reload.
// The e2e build serves the test embedding model from 127.0.0.1 and lets it come along only where a
// test asks (localStorage 'tealeaf-test-search-model').
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp, shot, tempProfile } from './harness.mjs';
import { assertNoOffHost, endAndRemember, newChat, pickTestModel, pollDb, readDb, say, setScript, TEST_MODEL } from './flows.mjs';

const server = serveApp();
const EMBEDDER = 'tealeaf-test/static-embedder';
const EMBEDDER_FILES = '**/models/tealeaf-test/static-embedder/**';

/** A fresh tab where the search model comes with the first chat model, on the Models view. */
async function openModels(page) {
  await page.goto(`${server.url}/`);
  await page.evaluate(() => localStorage.setItem('tealeaf-test-search-model', 'with-chat'));
  await setScript(page, { delayMs: 1 });
  await page.goto(`${server.url}/#/models`);
  await page.reload();
  await page.getByTestId(`load-${TEST_MODEL}`).waitFor();
}

async function appSettings(page) {
  const { settings } = await readDb(page, ['settings']);
  return settings.find((s) => s.key === 'app')?.value ?? {};
}

/** The stored reply to `question`, through its user turn. */
async function replyTo(page, question) {
  const { turns } = await readDb(page, ['turns']);
  const asked = turns.find((t) => t.role === 'user' && t.text === question);
  assert.ok(asked, `"${question}" is stored`);
  return turns.find((t) => t.sessionId === asked.sessionId && t.role === 'assistant' && t.index === asked.index + 1);
}

/** The chip and the "why these" line of the reply to `question` (a user turn shown now). */
async function recallShown(page, question) {
  const asked = page.getByTestId('turn-user').filter({ hasText: question }).last();
  await asked.waitFor();
  // The reply is the assistant turn right after the question.
  const reply = asked.locator('xpath=following-sibling::*[@data-testid="turn-assistant"][1]');
  const chip = reply.getByTestId('remembered');
  await chip.waitFor();
  const chipText = (await chip.textContent()).replace(/\s+/g, ' ').trim();
  await chip.click();
  const detail = reply.getByTestId('remembered-detail');
  await detail.locator('summary').click();
  const how = detail.getByTestId('remembered-how');
  await how.waitFor();
  return { chip: chipText, how: (await how.textContent()).replace(/\s+/g, ' ').trim(), kind: await how.getAttribute('data-recall') };
}

/** Opens the past chat whose title has `text` (the list may be folded on a narrow screen). */
async function openChat(page, text) {
  await page.getByTestId('nav-chat').click();
  const toggle = page.getByRole('button', { name: 'Show past sessions' });
  if (await toggle.isVisible()) await toggle.click();
  await page.getByTestId('session-item').filter({ hasText: text }).first().click();
}

test('the memory search model comes with the first chat model, with its size and progress, and is ready again after a reload', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    // Hold its model file until the progress has been seen.
    let release;
    const held = new Promise((r) => (release = r));
    await h.context.route('**/models/tealeaf-test/static-embedder/onnx/**', async (route) => {
      await held;
      await route.continue();
    });
    await openModels(page);
    // Offered where the chat model is, with its size; nothing loaded yet.
    const along = page.getByTestId('search-model-along');
    assert.match(await along.textContent(), /memory search model \(0\.1 MB\) downloads with the chat model you choose/);
    assert.match(await page.getByTestId('embedder-state').textContent(), /Not loaded/);
    assert.equal((await appSettings(page)).embeddingModelId, undefined);

    await pickTestModel(page);
    const state = page.getByTestId('embedder-state');
    await state.filter({ hasText: /Loading Static test embedder… \d+%/ }).waitFor();
    assert.equal(await page.getByTestId('cancel-embedder').count(), 1, 'the download can be cancelled');
    assert.equal(await along.count(), 0, 'the offer is gone once it downloads');
    await page.getByTestId('search-model-card').scrollIntoViewIfNeeded();
    await shot(page, 'search-model-loading');
    release();
    await state.filter({ hasText: `Ready: ${EMBEDDER}` }).waitFor();
    assert.match(await page.getByTestId('embedder-hint').textContent(), /found by meaning and by words/);
    await page.getByTestId('search-model-card').scrollIntoViewIfNeeded();
    await shot(page, 'search-model-ready');
    const stored = await appSettings(page);
    assert.equal(stored.embeddingModelId, EMBEDDER, 'the choice is stored');
    assert.notEqual(stored.memorySearchModel, false, 'and it is wanted (the default)');

    // Memories made now get vectors; the Memory view says recall finds them by meaning.
    await page.getByTestId('nav-chat').click();
    await say(page, 'My cat Miso sleeps on the window seat every afternoon');
    await endAndRemember(page);
    await pollDb(
      page,
      (db) => db.memories.length > 0 && db.memories.every((m) => db.vectors.some((v) => v.unitId === m.id && v.modelId === EMBEDDER)),
      {
        what: 'a vector for every memory',
      },
    );
    await page.getByTestId('nav-memory').click();
    const recall = page.getByTestId('search-model-recall');
    assert.equal(await recall.getAttribute('data-by-meaning'), 'true');
    assert.match(await recall.textContent(), /Replies find memories by meaning and by words/);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
    await h.close();

    // After a reload: ready again by itself (no click), from the browser's cache.
    h = await launch({ profile });
    page = h.page;
    await page.goto(`${server.url}/#/models`);
    await page
      .getByTestId('embedder-state')
      .filter({ hasText: `Ready: ${EMBEDDER}` })
      .waitFor();
    assert.equal(await page.getByTestId('search-model-along').count(), 0);
    await page.getByTestId('nav-memory').click();
    assert.equal(await page.getByTestId('search-model-recall').getAttribute('data-by-meaning'), 'true');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('a failed download says what to do and chat works by words; after a retry replies find by meaning, and each reply keeps saying which recall it had', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    // Offline for the model host: the memory search model cannot be fetched.
    await h.context.route(EMBEDDER_FILES, (route) => route.abort('internetdisconnected'));
    await openModels(page);
    await pickTestModel(page);
    const state = page.getByTestId('embedder-state');
    await state.filter({ hasText: 'failed' }).waitFor();
    assert.match(await page.getByTestId('embedder-hint').textContent(), /Chat works without it.*retry/);
    assert.match(await page.getByTestId('load-embedder').textContent(), /^Retry \(0\.1 MB\)$/);
    await page.getByTestId('search-model-card').scrollIntoViewIfNeeded();
    await shot(page, 'search-model-failed');
    assert.equal((await appSettings(page)).embeddingModelId, undefined, 'nothing stored as loaded');

    // Chat still works, by words.
    await page.getByTestId('nav-chat').click();
    await say(page, 'My cat Miso sleeps on the window seat every afternoon');
    await endAndRemember(page);
    await newChat(page);
    const before = 'What should I name a second cat?';
    await say(page, before);
    const first = await replyTo(page, before);
    assert.equal(first.status, 'complete');
    assert.ok(first.usedMemory?.memoryIds.length > 0, 'the cat memory was found by its word');
    assert.ok(
      first.usedMemory.scores.every((s) => s.dense === undefined),
      'no meaning scores: vectors were not searched',
    );
    const wordsOnly = await recallShown(page, before);
    assert.match(wordsOnly.chip, /· by words only$/);
    assert.equal(wordsOnly.kind, 'words');
    assert.equal(wordsOnly.how, 'Found by words only: the memory search model was not loaded for this reply. Load it in Models.');
    await shot(page, 'search-model-why-words');
    await page.getByTestId('nav-memory').click();
    const recall = page.getByTestId('search-model-recall');
    assert.equal(await recall.getAttribute('data-by-meaning'), 'false');
    assert.equal(
      (await recall.textContent()).replace(/\s+/g, ' ').trim(),
      'Replies find memories by words only: the memory search model could not be loaded. Retry in Models.',
    );
    await shot(page, 'search-model-memory-words');

    // Online again: Retry loads it; the memories get vectors.
    await h.context.unroute(EMBEDDER_FILES);
    await page.getByTestId('nav-models').click();
    await page.getByTestId('load-embedder').click();
    await state.filter({ hasText: `Ready: ${EMBEDDER}` }).waitFor();
    await pollDb(page, (db) => db.memories.length > 0 && db.memories.every((m) => db.vectors.some((v) => v.unitId === m.id)), {
      what: 'vectors after the retry',
    });
    assert.equal((await appSettings(page)).embeddingModelId, EMBEDDER);

    await page.getByTestId('nav-chat').click();
    await newChat(page);
    const after = 'Any ideas for naming another kitten?';
    await say(page, after);
    const second = await replyTo(page, after);
    assert.ok(
      second.usedMemory?.scores.some((s) => s.dense !== undefined),
      'meaning scores: vectors were searched',
    );
    const byMeaning = await recallShown(page, after);
    assert.equal(byMeaning.kind, 'meaning');
    assert.doesNotMatch(byMeaning.chip, /words only/);
    assert.equal(byMeaning.how, 'Found by meaning and by words: the memory search model was in use.');
    await shot(page, 'search-model-why-meaning');

    // The earlier reply still says words only: its words come from what it stored, not from the
    // model's state now.
    await openChat(page, 'second cat');
    assert.equal((await recallShown(page, before)).how, wordsOnly.how);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
    await h.close();

    // After a reload: the model is ready again, and both replies say what they said.
    h = await launch({ profile });
    page = h.page;
    await page.goto(`${server.url}/#/models`);
    await page
      .getByTestId('embedder-state')
      .filter({ hasText: `Ready: ${EMBEDDER}` })
      .waitFor();
    await openChat(page, 'second cat');
    assert.equal((await recallShown(page, before)).kind, 'words');
    await openChat(page, 'another kitten');
    assert.equal((await recallShown(page, after)).kind, 'meaning');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('cancelled or turned off, it stays off after a reload and a new chat model, until turned on', async () => {
  const profile = tempProfile();
  let h = await launch({ profile });
  try {
    let { page } = h;
    let release;
    const held = new Promise((r) => (release = r));
    await h.context.route('**/models/tealeaf-test/static-embedder/onnx/**', async (route) => {
      await held;
      await route.continue().catch(() => undefined);
    });
    await openModels(page);
    await pickTestModel(page);
    await page.getByTestId('cancel-embedder').click();
    release();
    const state = page.getByTestId('embedder-state');
    await state.filter({ hasText: 'Off.' }).waitFor();
    assert.match(await page.getByTestId('load-embedder').textContent(), /^Turn on \(0\.1 MB\)$/);
    await page.waitForTimeout(500);
    assert.match(await state.textContent(), /Off\./, 'a cancelled download does not turn ready later');
    assert.equal((await appSettings(page)).memorySearchModel, false);
    await page.getByTestId('search-model-card').scrollIntoViewIfNeeded();
    await shot(page, 'search-model-off');
    await h.close();

    h = await launch({ profile });
    page = h.page;
    await page.goto(`${server.url}/#/models`);
    await pickTestModel(page);
    await page.waitForTimeout(500);
    assert.match(await page.getByTestId('embedder-state').textContent(), /Off\./, 'it did not come with the chat model');
    await page.getByTestId('nav-memory').click();
    await page.getByTestId('nav-models').click();
    await page.getByTestId('load-embedder').click();
    await page
      .getByTestId('embedder-state')
      .filter({ hasText: `Ready: ${EMBEDDER}` })
      .waitFor();
    assert.equal((await appSettings(page)).memorySearchModel, true);
    // Turned off when ready: recall goes back to words, and the choice is kept.
    await page.getByTestId('turn-off-embedder').click();
    await page.getByTestId('embedder-state').filter({ hasText: 'Off.' }).waitFor();
    assert.equal((await appSettings(page)).memorySearchModel, false);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test("the browser's own model brings it along too (no download of ours for chat)", async () => {
  const h = await launch();
  try {
    const { page } = h;
    await page.goto(`${server.url}/`);
    await page.evaluate(() => {
      localStorage.setItem('tealeaf-test-search-model', 'with-chat');
      localStorage.setItem('tealeaf-test-builtin', 'available');
    });
    await page.goto(`${server.url}/#/models`);
    await page.reload();
    await page.getByTestId('builtin-use').click();
    await page.getByTestId('builtin-in-use').waitFor();
    await page
      .getByTestId('embedder-state')
      .filter({ hasText: `Ready: ${EMBEDDER}` })
      .waitFor();
    assert.equal((await appSettings(page)).embeddingModelId, EMBEDDER);
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

const CPU_MODEL = 'tealeaf-test/tiny-causal-lm';

/** A new chat, through the chats drawer on a narrow screen. */
async function freshChat(page) {
  const open = page.getByTestId('open-chats');
  if (await open.isVisible()) await open.click();
  await newChat(page);
}

/** A route that holds matching requests until `release(how)`: 'continue' or 'abort'. */
async function hold(context, pattern) {
  let release;
  const gate = new Promise((r) => (release = r));
  await context.route(pattern, async (route) => {
    const how = await gate;
    if (how === 'abort') await route.abort('internetdisconnected').catch(() => undefined);
    else await route.continue().catch(() => undefined);
  });
  return release;
}

for (const [width, scheme] of [
  [1280, 'light'],
  [375, 'light'],
  [1280, 'dark'],
  [375, 'dark'],
]) {
  test(`looks at ${width} px, ${scheme}: the offer, both downloads, a failure and its retry, the words under a reply and in the Memory view`, async () => {
    const h = await launch({ viewport: { width, height: 800 } });
    const name = (what) => `search-model-${what}-${width}-${scheme}`;
    try {
      const { page } = h;
      await page.emulateMedia({ colorScheme: scheme });
      const releaseChat = await hold(h.context, `**/models/${CPU_MODEL}/onnx/**`);
      const releaseSearch = await hold(h.context, '**/models/tealeaf-test/static-embedder/onnx/**');
      await openModels(page);
      await page.getByTestId('search-model-along').scrollIntoViewIfNeeded();
      await shot(page, name('offer'));

      // The CPU engine's model: the search model downloads beside it, its progress in the same card.
      await page.getByTestId(`load-${CPU_MODEL}`).click();
      const line = page.getByTestId('search-model-progress');
      await line.waitFor();
      assert.match(await line.textContent(), /^Also downloading the memory search model \(0\.1 MB\): \d+%/);
      await page.getByTestId('download').scrollIntoViewIfNeeded();
      await shot(page, name('downloading'));

      // The search model's download fails; the chat model loads all the same.
      releaseSearch('abort');
      releaseChat('continue');
      await page.getByTestId('embedder-state').filter({ hasText: 'failed' }).waitFor();
      await page
        .getByTestId('model-status')
        .filter({ hasText: /Tiny test chat model/ })
        .waitFor();
      await page.getByTestId('search-model-card').scrollIntoViewIfNeeded();
      await shot(page, name('failed'));

      // Memories by the scripted model (the tiny model cannot summarise), recalled by words.
      await pickTestModel(page);
      await page.getByTestId('nav-chat').click();
      await say(page, 'My cat Miso sleeps on the window seat every afternoon');
      await endAndRemember(page);
      await freshChat(page);
      const question = 'What should I name a second cat?';
      await say(page, question);
      assert.equal((await recallShown(page, question)).kind, 'words');
      await page.getByTestId('remembered-how').scrollIntoViewIfNeeded();
      await shot(page, name('why-words'));
      await page.getByTestId('nav-memory').click();
      await page.getByTestId('search-model-recall').waitFor();
      await shot(page, name('memory-words'));

      // Retried (the route lets it through now): ready.
      await h.context.unroute('**/models/tealeaf-test/static-embedder/onnx/**');
      await page.getByTestId('nav-models').click();
      await page.getByTestId('load-embedder').click();
      await page.getByTestId('embedder-state').filter({ hasText: 'Ready' }).waitFor();
      await page.getByTestId('search-model-card').scrollIntoViewIfNeeded();
      await shot(page, name('ready'));
      await page.getByTestId('nav-memory').click();
      assert.equal(await page.getByTestId('search-model-recall').getAttribute('data-by-meaning'), 'true');
      await shot(page, name('memory-meaning'));
      assertNoOffHost(h);
      assert.deepEqual(h.errors, []);
    } finally {
      await h.dispose();
    }
  });
}
