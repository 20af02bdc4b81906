// "Forget means forget", end to end with a local model server stand-in that records every
// request (tests/support/fake-openai-server.mjs): a fact said in one chat and quoted by a reply in
// another reaches the model until the user forgets it; after the memory's Delete (Memory → List) or
// "forget …" in the chat, no request holds it: not the next reply, not after a reload, not once the
// chat it was said in is deleted. Undo brings it back (the next request holds it again). Both
// confirmations say first what goes, in the user's words; screenshots at 1280 and 375 px.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serveApp, shot } from './harness.mjs';
import { answerDialog, assertNoOffHost, newChat, openMemory, pollDb, readDb, say } from './flows.mjs';
import { startFakeOpenAiServer } from '../support/fake-openai-server.mjs';

const server = serveApp();
const FACT = 'My sister Ingrid is coming to visit me at Christmas';
const QUESTION = 'When is my sister Ingrid visiting?';
const QUOTE = { when: QUESTION, say: 'Ingrid is coming at Christmas.' };
let fake;
before(async () => {
  fake = await startFakeOpenAiServer();
});
after(async () => {
  await fake?.close();
});

/** Requests from `from` on whose body holds the fact's word. */
const holding = (from) => fake.requests.slice(from).filter((r) => JSON.stringify(r.body ?? '').includes('Christmas'));

async function useServer(page) {
  await page.goto(`${server.url}/#/models`);
  await page.getByTestId('server-url').fill(fake.url);
  await page.getByTestId('server-connect').click();
  await page.getByTestId('server-model').selectOption('tiny-chat');
  await page.getByTestId('server-use').click();
  await page.getByTestId('model-status').filter({ hasText: 'tiny-chat' }).waitFor();
  await page.getByTestId('nav-chat').click();
}

async function endAndWait(page) {
  await page.getByTestId('end-session').click();
  await pollDb(page, (d) => d.jobs.length > 0 && d.jobs.every((j) => j.status === 'done'), { what: 'the chat memorised' });
}

/**
 * The fact said in one chat and memorised; a second chat asks, the reply quotes it (and the
 * request holds it: the test can fail), memorised too. Returns the source chat's id.
 */
async function tellAndQuote(page) {
  fake.set({ replies: [QUOTE] });
  await say(page, FACT);
  await say(page, 'I bake sourdough on Sundays');
  await endAndWait(page);
  const source = (await readDb(page, ['sessions'])).sessions[0].id;
  await newChat(page);
  const from = fake.requests.length;
  assert.equal(await say(page, QUESTION), 'Ingrid is coming at Christmas.');
  assert.ok(holding(from).length > 0, 'before forgetting, the fact reaches the model');
  await endAndWait(page);
  // From here the stand-in answers without knowing anything: a request holding the fact got it from Tealeaf.
  fake.set({ replies: [] });
  return source;
}

/** Asks in a new chat; returns the requests made for it that hold the fact. */
async function ask(page) {
  await newChat(page);
  const from = fake.requests.length;
  await say(page, QUESTION);
  return holding(from);
}

test("the memory's Delete says what goes; then no request holds the fact, after a reload, and once its chat is deleted", async () => {
  const h = await launch();
  try {
    const { page } = h;
    await useServer(page);
    const source = await tellAndQuote(page);
    const forgetAt = fake.requests.length;

    await openMemory(page, 'coming to visit me at Christmas');
    const detail = page.locator('aside[aria-label="Memory details"]');
    await detail.getByRole('button', { name: 'Delete', exact: true }).first().click();
    const preview = detail.locator('.confirm [data-testid="forget-preview"] ul');
    await preview.waitFor();
    const words = (await detail.locator('.confirm').textContent()).replace(/\s+/g, ' ');
    assert.match(words, /Delete this memory/);
    assert.match(words, /In “My sister Ingrid is coming to visit me at Chris…”: 1 of your messages and 1 reply/);
    assert.match(words, /In “When is my sister Ingrid visiting\?”: 1 reply/);
    assert.match(words, /2 passages of past chats, recalled without those lines/);
    assert.match(
      words,
      /Those lines stay in their chats for you to read, marked forgotten; none of it is used in replies again\. Undo brings it all back\./,
    );
    await detail.locator('.confirm').scrollIntoViewIfNeeded();
    await shot(page, 'forget-delete-1280');
    await page.setViewportSize({ width: 375, height: 740 });
    await page.waitForTimeout(200);
    await detail.locator('.confirm').scrollIntoViewIfNeeded();
    await shot(page, 'forget-delete-375');
    await page.setViewportSize({ width: 1280, height: 800 });
    await detail.locator('.confirm').getByRole('button', { name: 'Delete' }).click();

    const db = await pollDb(page, (d) => !d.memories.some((m) => m.text.includes('Christmas')), { what: 'the memory forgotten' });
    assert.equal(db.turns.filter((t) => t.forgotten).length, 3, 'its line, the answer to it and the quoting reply');
    assert.ok(!JSON.stringify(db.segments).includes('Christmas'), 'no passage holds it');
    assert.ok(
      db.memories.some((m) => m.text.includes('sourdough')),
      'the rest is kept',
    );

    // The chat it was said in shows the lines, marked.
    await page.getByTestId('nav-chat').click();
    await page.locator(`[data-testid="session-item"][data-chat-id="${source}"]`).click();
    await page.getByTestId('forgotten-mark').nth(1).waitFor();
    assert.equal(await page.getByTestId('forgotten-mark').count(), 2);
    await shot(page, 'forget-marked-1280');
    await page.setViewportSize({ width: 375, height: 740 });
    await page.waitForTimeout(200);
    await shot(page, 'forget-marked-375');
    await page.setViewportSize({ width: 1280, height: 800 });

    assert.deepEqual(await ask(page), [], 'the next reply');
    await page.reload();
    await page.getByTestId('model-status').filter({ hasText: 'tiny-chat' }).waitFor();
    assert.deepEqual(await ask(page), [], 'after a reload');

    // The chat it was said in deleted (its other memory kept): still nowhere.
    await page
      .getByTestId('session-row')
      .filter({ has: page.locator(`[data-chat-id="${source}"]`) })
      .getByTestId('delete-chat')
      .click();
    await answerDialog(page);
    await pollDb(page, (d) => !d.sessions.some((s) => s.id === source), { what: 'the chat deleted' });
    assert.deepEqual(await ask(page), [], 'after the chat it was said in is deleted');
    assert.deepEqual(holding(forgetAt), [], 'no request since the forget, memorising included');
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('"forget …" in the chat shows what goes; the next request does not hold the fact; Undo brings it back', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await useServer(page);
    await tellAndQuote(page);
    await newChat(page);
    await page.getByTestId('composer').fill('forget my sister Ingrid');
    await page.getByTestId('send').click();
    const card = page.locator('[data-command="forget"][data-state="asked"]');
    await card.waitFor();
    // Only the memory of the fact (not the question asked about it).
    const picks = card.getByTestId('forget-pick');
    for (let i = 0; i < (await picks.count()); i++) {
      const label = await picks.nth(i).locator('xpath=..').textContent();
      if (!label.includes('Christmas')) await picks.nth(i).uncheck();
    }
    const preview = card.getByTestId('forget-preview');
    await preview.locator('li').first().waitFor();
    const words = (await preview.textContent()).replace(/\s+/g, ' ');
    assert.match(words, /In “My sister Ingrid is coming to visit me at Chris…”: 1 of your messages and 1 reply/);
    assert.match(words, /In “When is my sister Ingrid visiting\?”: 1 reply/);
    assert.match(words, /Undo brings it all back/);
    for (const width of [1280, 375]) {
      await page.setViewportSize({ width, height: width === 1280 ? 800 : 740 });
      await page.waitForTimeout(200);
      await card.scrollIntoViewIfNeeded();
      await shot(page, `forget-card-${width}`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });

    const forgetAt = fake.requests.length;
    await card.getByTestId('forget-confirm').click();
    const done = page.locator('[data-command="forget"][data-state="forgotten"]');
    await done.waitFor();
    await say(page, QUESTION);
    assert.deepEqual(holding(forgetAt), [], 'the next request in the same chat');

    await done.getByTestId('command-undo').click();
    await page.locator('[data-command="forget"][data-state="undone"]').waitFor();
    await pollDb(page, (d) => d.memories.some((m) => m.text.includes('Christmas')) && !d.turns.some((t) => t.forgotten), {
      what: 'all of it back',
    });
    const back = fake.requests.length;
    await say(page, QUESTION);
    assert.ok(holding(back).length > 0, 'after Undo the fact reaches the model again');
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});

test('"forget …" in the chat the fact was just said in (not memorised yet) offers that message; forgotten, no request holds it, memorising included', async () => {
  const h = await launch();
  try {
    const { page } = h;
    await useServer(page);
    fake.set({ replies: [] });
    await say(page, FACT);
    await page.getByTestId('composer').fill('forget my sister Ingrid');
    await page.getByTestId('send').click();
    const card = page.locator('[data-command="forget"][data-state="asked"]');
    await card.getByTestId('forget-pick-line').waitFor();
    assert.match(await card.getByTestId('reply-body').textContent(), /Forget this message of yours about “my sister Ingrid”\?/);
    assert.match(await card.getByTestId('forget-card').textContent(), /You said: “My sister Ingrid is coming to visit me at Christmas”/);
    await card.getByTestId('forget-preview').locator('li').first().waitFor();
    await card.scrollIntoViewIfNeeded();
    await shot(page, 'forget-card-line-1280');
    const forgetAt = fake.requests.length;
    await card.getByTestId('forget-confirm').click();
    await page.locator('[data-command="forget"][data-state="forgotten"]').waitFor();
    await say(page, 'What should I cook?');
    await endAndWait(page);
    assert.ok(
      fake.requests.slice(forgetAt).some((r) => r.body?.response_format?.json_schema?.schema?.title === 'session_memories'),
      'the chat was memorised through the server',
    );
    assert.deepEqual(holding(forgetAt), [], 'neither the next reply nor the memorising');
    const db = await readDb(page, ['memories', 'segments']);
    assert.ok(!JSON.stringify(db).includes('Christmas'));
    assert.deepEqual(h.errors, []);
    assertNoOffHost(h);
  } finally {
    await h.dispose();
  }
});
