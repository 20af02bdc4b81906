// Privacy: a whole session with models already on the device (the scripted language
// model, the test embedding model served from /models/ on 127.0.0.1) makes zero requests off
// 127.0.0.1: chatting, ending the session, memorising, a remembering reply, every view. The harness
// records every request the browser makes (pages, workers, service worker); the page's own
// resource timing is checked too. A last test runs the whole session with the network off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, PATIENCE_MS, serveApp } from './harness.mjs';
import { assertNoOffHost, newChat, pickTestModel, readDb, say, setScript, waitForServiceWorker } from './flows.mjs';

const server = serveApp();

async function dbState(page) {
  const db = await readDb(page, ['memories', 'vectors', 'jobs']);
  return { memories: db.memories.map((m) => m.id), vectors: db.vectors.map((v) => v.unitId), jobs: db.jobs.map((j) => j.status) };
}

async function waitMemorised(page, { jobs = 1, timeout = PATIENCE_MS } = {}) {
  const end = Date.now() + timeout;
  for (;;) {
    const s = await dbState(page);
    if (s.jobs.length >= jobs && s.jobs.every((j) => j === 'done')) return s;
    if (Date.now() > end) throw new Error(`memorising did not finish: ${JSON.stringify(s.jobs)}`);
    await page.waitForTimeout(50);
  }
}

/** Hosts of everything the page itself loaded, by its resource timing. */
async function resourceHosts(page) {
  return page.evaluate(() => [...new Set(performance.getEntriesByType('resource').map((e) => new URL(e.name).host))]);
}

/** The embedder either stays ready or fails; "Ready" can flash before a failure. */
async function embedderSettled(page) {
  await page
    .getByTestId('embedder-state')
    .filter({ hasText: /Ready|failed/ })
    .waitFor();
  await page.waitForTimeout(2500);
  return (await page.getByTestId('embedder-state').textContent()).trim();
}

let embedderState;
let vectorsStored;

test('a whole session with on-device models makes zero requests off 127.0.0.1', async () => {
  const h = await launch({ serviceWorker: true });
  const all = [];
  h.context.on('request', (r) => all.push(r.url()));
  try {
    const { page } = h;
    await page.goto(`${server.url}/`);
    await setScript(page, { delayMs: 1 });
    await page.goto(`${server.url}/#/models`);
    await page.getByTestId('load-embedder').click();
    embedderState = await embedderSettled(page);
    await pickTestModel(page);

    await page.goto(`${server.url}/#/chat`);
    await say(page, 'I planted tomatoes in the garden this spring');
    await say(page, 'The tomatoes need water every evening');
    await say(page, 'My neighbour gave me basil for the garden');
    await page.getByTestId('end-session').click();
    const state = await waitMemorised(page);
    vectorsStored = state.memories.filter((id) => state.vectors.includes(id)).length / Math.max(1, state.memories.length);
    assert.ok(state.memories.length >= 3);

    await newChat(page);
    await say(page, 'How are the tomatoes in the garden?');
    await page.getByTestId('remembered').last().click();
    await page.getByTestId('remembered-detail').last().waitFor();
    for (const view of ['nav-memory', 'nav-models', 'nav-settings', 'nav-chat']) {
      await page.getByTestId(view).click();
      await page.waitForTimeout(400);
    }

    assert.ok(all.length > 10, `requests seen: ${all.length}`);
    for (const u of all)
      assert.match(u, /^(http:\/\/127\.0\.0\.1:\d+\/|blob:http:\/\/127\.0\.0\.1:\d+\/|data:)/, `request off 127.0.0.1: ${u}`);
    const hosts = await resourceHosts(page);
    assert.ok(
      hosts.every((x) => /^127\.0\.0\.1:\d+$/.test(x)),
      `resource hosts: ${hosts.join(', ')}`,
    );
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});

test('the embedding model keeps working under the Content Security Policy', () => {
  // A real failure, not a todo: with script-src 'self' the ONNX Runtime module import from a
  // blob: URL is refused, the embedder flips from Ready to failed, and memories get no vectors.
  assert.ok(embedderState !== undefined, 'the session test ran');
  assert.match(embedderState, /^Ready/, `embedder state after load: ${embedderState}`);
  assert.equal(vectorsStored, 1, 'every memory has a vector');
});

test('with the network off after the first visit, a whole session still works', async () => {
  const h = await launch({ serviceWorker: true });
  try {
    const { page, context } = h;
    await page.goto(`${server.url}/`);
    await waitForServiceWorker(page);
    await setScript(page, { delayMs: 1 });
    // The first visit is online and uses the model once, as a person's first download of one is:
    // the stand-in's tokenizer data, like a real model's files, is cached at first use.
    await page.getByTestId('nav-models').click();
    await pickTestModel(page);
    await page.getByTestId('nav-chat').click();
    await say(page, 'Online once, before the network goes');
    await page.getByTestId('end-session').click();
    const memoriesOnline = (await waitMemorised(page)).memories.length;
    await context.setOffline(true);
    await page.reload();
    await page.getByTestId('nav-models').click();
    await pickTestModel(page);
    await page.getByTestId('nav-chat').click();
    await say(page, 'I am offline and writing about my bicycle');
    await say(page, 'The bicycle has a new bell');
    await page.getByTestId('end-session').click();
    const state = await waitMemorised(page, { jobs: 2 });
    assert.ok(state.memories.length >= memoriesOnline + 2, 'the offline session is memorised too');
    assertNoOffHost(h);
    assert.deepEqual(h.errors, []);
  } finally {
    await h.dispose();
  }
});
